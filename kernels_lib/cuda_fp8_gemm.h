// CUDA FP8 GEMM: executes an FP8 GemmThunk (thunks::IsFp8Gemm) with
// cuBLASLt on the FP8 tensor cores, stream-ordered on the stream each call
// names.
//
// The row-major thunk maps to cuBLASLt's column-major matmul as every GEMM
// does (PlanColumnMajorGemm, gemm_plan.h): the thunk's rhs [n,k] is A, read
// transposed, and its lhs [m,k] is B, not transposed: the "TN" form that
// cuBLASLt's FP8 kernels require. The matmul descriptor (f32 compute and
// scale), the four matrix layouts (with batch count and strides) and the
// algorithm (cublasLtMatmulAlgoGetHeuristic's first choice under a
// workspace limit) are made once per thunk, when the program is loaded,
// and reused by every execution; the workspace comes from the caller (the
// backend's per-stream library scratch). The A, B and D scale pointers are
// left unset, which cuBLASLt reads as scales of 1.0: HLO's per-tensor
// scales are multiplied in after the GEMM (passes::Fp8ScaleHoisting).
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <memory>

#include "common/status.h"
#include "kernels_lib/cublaslt_library.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// The most workspace an FP8 GEMM's algorithm may ask for: 32 MiB, what
// cuBLAS recommends on Hopper.
inline constexpr uint64_t kFp8GemmWorkspaceLimit = uint64_t{32} << 20;

class CudaFp8Gemm {
 public:
  // Descriptors and algorithm for `gemm` (an FP8 GEMM in the TN form;
  // anything else is an error naming what is wrong).
  static StatusOr<std::unique_ptr<CudaFp8Gemm>> Create(const CublasLtLibrary& lt, cublasLtHandle_t handle,
                                                      const thunks::GemmThunk& gemm);
  ~CudaFp8Gemm();
  CudaFp8Gemm(const CudaFp8Gemm&) = delete;
  CudaFp8Gemm& operator=(const CudaFp8Gemm&) = delete;

  // Bytes of workspace the chosen algorithm needs (0: none).
  uint64_t workspace_bytes() const { return workspace_bytes_; }
  // D = alpha * A^T B (+ beta * C, C being D) on `stream`; lhs, rhs, out
  // and workspace are device addresses.
  Status Run(cudaStream_t stream, uint64_t lhs, uint64_t rhs, uint64_t out, uint64_t workspace) const;

 private:
  CudaFp8Gemm(const CublasLtLibrary& lt, cublasLtHandle_t handle) : lt_(lt), handle_(handle) {}
  Status Describe(const thunks::GemmThunk& gemm);
  Status ChooseAlgorithm();

  const CublasLtLibrary& lt_;
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t matmul_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;  // C doubles as D
  cublasLtMatmulAlgo_t algo_{};
  uint64_t workspace_bytes_ = 0;
  float alpha_ = 1, beta_ = 0;
  bool empty_ = false;  // m, n or batch 0: nothing to do
};

}  // namespace kiln::kernels
