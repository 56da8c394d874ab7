// Column-major (BLAS/cuBLAS) form of a GemmThunk.
//
// GemmThunk describes row-major matrices. cuBLAS is column-major, and a
// row-major matrix with leading dimension L is, read column-major, its
// transpose with the same L. So row-major C = op(A) x op(B) is computed as
// column-major C^T = op(B)^T x op(A)^T: the operands swap places, m and n
// swap, the transpose flags and leading dimensions carry over unchanged.
// Kept free of CUDA types so it is tested on machines without CUDA.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// C[b] = alpha * op_a(A[b]) x op_b(B[b]) + beta * C[b], column-major, with
// op_a(A) m x k and op_b(B) k x n; a_is_rhs: A is the thunk's rhs (always
// true: the swap above), B its lhs.
struct ColumnMajorGemm {
  bool transpose_a = false, transpose_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch matrices
  double alpha = 1.0, alpha_imag = 0.0, beta = 0.0;  // alpha_imag: complex GEMMs only
};

// Checks dimensions (non-negative; alpha real unless the GEMM is complex) and applies the defaults the
// host gemm uses (dense leading dimensions and batch strides when 0).
StatusOr<ColumnMajorGemm> PlanColumnMajorGemm(const thunks::GemmThunk& gemm);

}  // namespace kiln::kernels
