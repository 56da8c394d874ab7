// CublasLibrary: cuBLAS (libcublas.so.13, else .12, or kiln's CUDA emulator,
// which doubles it) opened with dlopen at run time, as a table of the few
// functions kiln calls (strided batched GEMMs, trsm; scal for the inverse
// FFTs' normalization).
//
// Like the CUDA driver, cuBLAS is never linked: binaries must start on
// machines without CUDA, and only a program with a Gemm thunk running on a
// CUDA device needs it. Only cublas_api.h's types are used at build time
// (KILN_HAVE_CUDA_HEADERS).
#pragma once

#include <cublas_api.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::kernels {

// clang-format off
#define KILN_CUBLAS_FUNCTIONS(X)  \
  X(cublasCreate_v2) \
  X(cublasDestroy_v2) \
  X(cublasSetStream_v2) \
  X(cublasGetStatusName) \
  X(cublasSgemmStridedBatched) \
  X(cublasDgemmStridedBatched) \
  X(cublasCgemmStridedBatched) \
  X(cublasZgemmStridedBatched) \
  X(cublasSscal_v2) \
  X(cublasDscal_v2) \
  X(cublasCsscal_v2) \
  X(cublasZdscal_v2) \
  X(cublasStrsm_v2) \
  X(cublasDtrsm_v2) \
  X(cublasCtrsm_v2) \
  X(cublasZtrsm_v2) \
  X(cublasSgeam) \
  X(cublasDgeam) \
  X(cublasCgeam) \
  X(cublasZgeam)
// clang-format on

class CublasLibrary {
 public:
  // Tries each name in order; the error names them all and the last
  // dlerror on one line.
  static StatusOr<std::unique_ptr<CublasLibrary>> Load(
      const std::vector<std::string>& candidates = {"libcublas.so.13", "libcublas.so.12"});
  // Stays loaded (its statically linked CUDA runtime registers exit handlers).
  ~CublasLibrary() = default;
  CublasLibrary(const CublasLibrary&) = delete;
  CublasLibrary& operator=(const CublasLibrary&) = delete;

  // "CUBLAS_STATUS_NOT_INITIALIZED", followed by ": <detail>" when the
  // library is kiln's CUDA emulator and has a detail for the calling
  // thread's last failure (kilnEmuLastErrorDetail).
  std::string StatusText(cublasStatus_t status) const;
  // Ok for CUBLAS_STATUS_SUCCESS, else "<what> failed: <StatusText>".
  Status Check(cublasStatus_t status, const std::string& what) const;
  const std::string& library() const { return library_; }

#define KILN_CUBLAS_DECLARE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KILN_CUBLAS_FUNCTIONS(KILN_CUBLAS_DECLARE_MEMBER)
#undef KILN_CUBLAS_DECLARE_MEMBER
  // cublas_api.h overloads it in C++ (an inline form taking the legacy
  // cudaDataType compute type), so the exported one's type is spelled out.
  cublasStatus_t (*cublasGemmStridedBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                               int, const void*, const void*, cudaDataType, int, long long,
                                               const void*, cudaDataType, int, long long, const void*, void*,
                                               cudaDataType, int, long long, int, cublasComputeType_t,
                                               cublasGemmAlgo_t) = nullptr;

 private:
  explicit CublasLibrary(std::string library) : library_(std::move(library)) {}
  std::string library_;
  const char* (*emulator_detail_)() = nullptr;  // optional kilnEmuLastErrorDetail
};

}  // namespace kiln::kernels
