// Fp8Gemm: which f8 dots go to cuBLASLt's FP8 tensor-core GEMM.
//
// On Hopper, cuBLASLt multiplies f8e4m3fn x f8e4m3fn, f8e4m3fn x f8e5m2 and
// f8e5m2 x f8e4m3fn (not f8e5m2 x f8e5m2) with f32 accumulation into an
// f32, bf16 or f16 result, as XLA GPU sends f8 dots there. Its FP8 kernels
// take only the "TN" form (column-major A transposed, B not: both operands
// contract along their contiguous dimension) with 16-byte aligned rows: in
// the row-major [b,m,k] x [b,n,k] -> [b,m,n] GEMM that DotCanonicalization
// emits for these dots, k and n multiples of 16. An f8 result is computed
// in f32 and rounded by a convert (the library's f8 output needs an amax
// and a D scale, which HLO's dot does not have). Other f8 dots (other f8
// types, misaligned shapes, and every f8 dot compiled for the host alone)
// keep the exact path: bf16 operands on CUDA, f32 on the host.
#pragma once

#include "compiler/hlo/instruction.h"

namespace kiln::passes {

// The GEMM's result type for an FP8 dot of result type `out`: f32, bf16 and
// f16 as they are; f8 and f64 results are computed in f32.
ElementType Fp8GemmOutputType(ElementType out);

// A dot of two f8 operands of a pair cuBLASLt multiplies, with a float
// result, one contracting run k and an rhs free extent n that are non-zero
// multiples of 16 and fit cuBLASLt's int64 layouts.
bool IsFp8GemmDot(const hlo::HloInstruction& dot);
// The same for a dot of `lhs` and `rhs` with numbers `dn` and result type `out`.
bool IsFp8GemmDot(const Shape& lhs, const Shape& rhs, const hlo::DotDimensionNumbers& dn, ElementType out);

}  // namespace kiln::passes
