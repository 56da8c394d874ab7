// Int8Gemm: which integer dots go to cuBLAS' int8 tensor-core GEMM.
//
// cublasGemmStridedBatchedEx takes s8 x s8 -> s32 (CUDA_R_8I operands,
// CUDA_R_32I result, CUBLAS_COMPUTE_32I) with exact, wrapping 32-bit
// integer sums: XLA's integer dot. Its int8 (IMMA) kernels want the "TN"
// form (column-major A transposed, B not: both operands contract along
// their contiguous dimension), leading dimensions that are multiples of 4
// and 4-byte aligned pointers (buffers are 64-byte aligned). In the
// row-major [b,m,k] x [b,n,k] -> [b,m,n] GEMM that DotCanonicalization
// emits for these dots, that asks for k and n multiples of 4. Other integer
// dots (and every integer dot compiled for the host alone) stay with
// IntegerDotExpander's reduction kernel.
#pragma once

#include "compiler/hlo/instruction.h"

namespace kiln::passes {

// A dot of two s8 operands with an s32 result, one contracting run k and
// an rhs free extent n that are non-zero multiples of 4 and fit cuBLAS'
// int.
bool IsInt8GemmDot(const hlo::HloInstruction& dot);

}  // namespace kiln::passes
