// NcclLibrary: NCCL (libnccl.so.2, or kiln's CUDA emulator, which doubles
// it) opened with dlopen at run time, as a table of the functions kiln's
// CUDA collectives call: unique ids and communicators, groups, all-reduce,
// all-gather, reduce-scatter, broadcast, send/recv (all-to-all and
// collective-permute are grouped sends and receives, which every NCCL 2
// has), errors.
//
// Like cuBLAS it is never linked: binaries must start on machines without
// CUDA, and only a program whose collectives need peers, running on CUDA
// devices, needs it. Only nccl.h's types are used at build time
// (KILN_HAVE_CUDA_HEADERS; the CUDA toolkit ships nccl.h).
#pragma once

#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::kernels {

// clang-format off
#define KILN_NCCL_FUNCTIONS(X) \
  X(ncclGetVersion) \
  X(ncclGetUniqueId) \
  X(ncclCommInitRank) \
  X(ncclCommInitAll) \
  X(ncclCommDestroy) \
  X(ncclCommAbort) \
  X(ncclCommGetAsyncError) \
  X(ncclGetErrorString) \
  X(ncclGroupStart) \
  X(ncclGroupEnd) \
  X(ncclAllReduce) \
  X(ncclAllGather) \
  X(ncclReduceScatter) \
  X(ncclBroadcast) \
  X(ncclSend) \
  X(ncclRecv)
// clang-format on

class NcclLibrary {
 public:
  // Tries each name in order; the error ("NCCL unavailable: cannot load
  // libnccl.so.2: <dlerror>") names them all on one line.
  static StatusOr<std::unique_ptr<NcclLibrary>> Load(const std::vector<std::string>& candidates = {"libnccl.so.2"});
  // Stays loaded (its proxy threads and exit handlers outlive any caller).
  ~NcclLibrary() = default;
  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;

  // "invalid argument", followed by ": <detail>" when the library has one
  // for the calling thread's last failure (ncclGetLastError, or the
  // emulator's kilnEmuLastErrorDetail).
  std::string ResultText(ncclResult_t result) const;
  // Ok for ncclSuccess, else "<what> failed: <ResultText>".
  Status Check(ncclResult_t result, const std::string& what) const;
  const std::string& library() const { return library_; }

#define KILN_NCCL_DECLARE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KILN_NCCL_FUNCTIONS(KILN_NCCL_DECLARE_MEMBER)
#undef KILN_NCCL_DECLARE_MEMBER

 private:
  explicit NcclLibrary(std::string library) : library_(std::move(library)) {}
  std::string library_;
  const char* (*emulator_detail_)() = nullptr;      // optional kilnEmuLastErrorDetail
  const char* (*last_error_)(ncclComm_t) = nullptr;  // optional ncclGetLastError (NCCL >= 2.13)
};

}  // namespace kiln::kernels
