// CusolverLibrary: cuSOLVER's dense API (libcusolver.so.12, else .so.11, or
// kiln's CUDA emulator, which doubles it) opened with dlopen at run time, as
// a table of the functions kiln calls: the handle, and potrf, getrf, geqrf,
// orgqr / ungqr, syevd / heevd and gesvd with their workspace queries for
// the four types.
//
// As with cuBLAS (cublas_library.h), cuSOLVER is never linked: binaries must
// start on machines without it, and only a program with a Cholesky or Linalg
// thunk running on a CUDA device needs it. Only cusolverDn.h's types are used at
// build time (KILN_HAVE_CUDA_HEADERS).
#pragma once

#include <cusolverDn.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::kernels {

// clang-format off
#define KILN_CUSOLVER_FUNCTIONS(X) \
  X(cusolverDnCreate) \
  X(cusolverDnDestroy) \
  X(cusolverDnSetStream) \
  X(cusolverDnSpotrf_bufferSize) \
  X(cusolverDnDpotrf_bufferSize) \
  X(cusolverDnCpotrf_bufferSize) \
  X(cusolverDnZpotrf_bufferSize) \
  X(cusolverDnSpotrf) \
  X(cusolverDnDpotrf) \
  X(cusolverDnCpotrf) \
  X(cusolverDnZpotrf) \
  X(cusolverDnSgetrf_bufferSize) \
  X(cusolverDnDgetrf_bufferSize) \
  X(cusolverDnCgetrf_bufferSize) \
  X(cusolverDnZgetrf_bufferSize) \
  X(cusolverDnSgetrf) \
  X(cusolverDnDgetrf) \
  X(cusolverDnCgetrf) \
  X(cusolverDnZgetrf) \
  X(cusolverDnSgeqrf_bufferSize) \
  X(cusolverDnDgeqrf_bufferSize) \
  X(cusolverDnCgeqrf_bufferSize) \
  X(cusolverDnZgeqrf_bufferSize) \
  X(cusolverDnSgeqrf) \
  X(cusolverDnDgeqrf) \
  X(cusolverDnCgeqrf) \
  X(cusolverDnZgeqrf) \
  X(cusolverDnSorgqr_bufferSize) \
  X(cusolverDnDorgqr_bufferSize) \
  X(cusolverDnCungqr_bufferSize) \
  X(cusolverDnZungqr_bufferSize) \
  X(cusolverDnSorgqr) \
  X(cusolverDnDorgqr) \
  X(cusolverDnCungqr) \
  X(cusolverDnZungqr) \
  X(cusolverDnSsyevd_bufferSize) \
  X(cusolverDnDsyevd_bufferSize) \
  X(cusolverDnCheevd_bufferSize) \
  X(cusolverDnZheevd_bufferSize) \
  X(cusolverDnSsyevd) \
  X(cusolverDnDsyevd) \
  X(cusolverDnCheevd) \
  X(cusolverDnZheevd) \
  X(cusolverDnSgesvd_bufferSize) \
  X(cusolverDnDgesvd_bufferSize) \
  X(cusolverDnCgesvd_bufferSize) \
  X(cusolverDnZgesvd_bufferSize) \
  X(cusolverDnSgesvd) \
  X(cusolverDnDgesvd) \
  X(cusolverDnCgesvd) \
  X(cusolverDnZgesvd)
// clang-format on

class CusolverLibrary {
 public:
  // Tries each name in order; the error ("cuSOLVER unavailable: cannot load
  // libcusolver.so.12 or libcusolver.so.11: <dlerror>") names them all on
  // one line.
  static StatusOr<std::unique_ptr<CusolverLibrary>> Load(
      const std::vector<std::string>& candidates = {"libcusolver.so.12", "libcusolver.so.11"});
  // Stays loaded, like cuBLAS (its CUDA runtime registers exit handlers).
  ~CusolverLibrary() = default;
  CusolverLibrary(const CusolverLibrary&) = delete;
  CusolverLibrary& operator=(const CusolverLibrary&) = delete;

  // "CUSOLVER_STATUS_INVALID_VALUE" (cuSOLVER has no name function of its
  // own), followed by ": <detail>" when the library is kiln's CUDA emulator
  // and has a detail for the calling thread's last failure.
  std::string StatusText(cusolverStatus_t status) const;
  // Ok for CUSOLVER_STATUS_SUCCESS, else "<what> failed: <StatusText>".
  Status Check(cusolverStatus_t status, const std::string& what) const;
  const std::string& library() const { return library_; }

#define KILN_CUSOLVER_DECLARE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KILN_CUSOLVER_FUNCTIONS(KILN_CUSOLVER_DECLARE_MEMBER)
#undef KILN_CUSOLVER_DECLARE_MEMBER

 private:
  explicit CusolverLibrary(std::string library) : library_(std::move(library)) {}
  std::string library_;
  const char* (*emulator_detail_)() = nullptr;  // optional kilnEmuLastErrorDetail
};

// "CUSOLVER_STATUS_SUCCESS", ...; "cusolverStatus_t <n>" for other values.
std::string CusolverStatusName(cusolverStatus_t status);

}  // namespace kiln::kernels
