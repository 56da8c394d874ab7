// CublasLtLibrary: cuBLASLt (libcublasLt.so.13, else .12, or kiln's CUDA
// emulator, which doubles it) opened with dlopen at run time, as a table
// of the functions kiln's FP8 GEMMs call (handle, matmul descriptor,
// matrix layouts, preference, heuristic, matmul).
//
// cuBLASLt is cuBLAS' lightweight GEMM API and the only one that runs the
// FP8 tensor cores (cublasGemmEx takes no f8 types). Like cuBLAS it is
// never linked: binaries must start on machines without CUDA, and only a
// program with an FP8 Gemm thunk running on a CUDA device needs it. Only
// cublasLt.h's types are used at build time (KILN_HAVE_CUDA_HEADERS).
#pragma once

#include <cublasLt.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::kernels {

// clang-format off
#define KILN_CUBLASLT_FUNCTIONS(X) \
  X(cublasLtCreate) \
  X(cublasLtDestroy) \
  X(cublasLtGetStatusName) \
  X(cublasLtMatmulDescCreate) \
  X(cublasLtMatmulDescDestroy) \
  X(cublasLtMatmulDescSetAttribute) \
  X(cublasLtMatrixLayoutCreate) \
  X(cublasLtMatrixLayoutDestroy) \
  X(cublasLtMatrixLayoutSetAttribute) \
  X(cublasLtMatmulPreferenceCreate) \
  X(cublasLtMatmulPreferenceDestroy) \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic) \
  X(cublasLtMatmul)
// clang-format on

class CublasLtLibrary {
 public:
  // Tries each name in order; the error ("cuBLASLt unavailable: cannot
  // load libcublasLt.so.13 or libcublasLt.so.12: <dlerror>") names them
  // all on one line.
  static StatusOr<std::unique_ptr<CublasLtLibrary>> Load(
      const std::vector<std::string>& candidates = {"libcublasLt.so.13", "libcublasLt.so.12"});
  // Stays loaded, like cuBLAS (its CUDA runtime registers exit handlers).
  ~CublasLtLibrary() = default;
  CublasLtLibrary(const CublasLtLibrary&) = delete;
  CublasLtLibrary& operator=(const CublasLtLibrary&) = delete;

  // "CUBLAS_STATUS_NOT_SUPPORTED", followed by ": <detail>" when the
  // library is kiln's CUDA emulator and has a detail for the calling
  // thread's last failure (kilnEmuLastErrorDetail).
  std::string StatusText(cublasStatus_t status) const;
  // Ok for CUBLAS_STATUS_SUCCESS, else "<what> failed: <StatusText>".
  Status Check(cublasStatus_t status, const std::string& what) const;
  const std::string& library() const { return library_; }

#define KILN_CUBLASLT_DECLARE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KILN_CUBLASLT_FUNCTIONS(KILN_CUBLASLT_DECLARE_MEMBER)
#undef KILN_CUBLASLT_DECLARE_MEMBER

 private:
  explicit CublasLtLibrary(std::string library) : library_(std::move(library)) {}
  std::string library_;
  const char* (*emulator_detail_)() = nullptr;  // optional kilnEmuLastErrorDetail
};

}  // namespace kiln::kernels
