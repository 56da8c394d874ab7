// The numerics a dot's precision attributes allow its GEMM library.
//
// HLO states a dot's required precision per operand
// (operand_precision={default,highest}) and, optionally, an exact algorithm
// (algorithm=dot_tf32_tf32_f32). XLA GPU runs an f32 dot whose operands are
// all at DEFAULT precision, with no algorithm saying otherwise, on the TF32
// tensor cores (cuBLAS' CUBLAS_COMPUTE_32F_FAST_TF32): operands rounded to a
// 10-bit mantissa, products accumulated in f32, about 8x the FP32 cores'
// rate on an H100. HIGH and HIGHEST, or an f32 algorithm, keep full f32
// precision. kiln follows the same contract, so the passes that rewrite
// dots carry these attributes to the dots they create.
#pragma once

#include "compiler/hlo/instruction.h"

namespace kiln::passes {

// Whether `dot` (f32 operands and result) may run with TF32 operands: every
// operand precision is DEFAULT (or absent) and the algorithm, if any, is
// unset or a TF32 one.
bool DotAllowsTf32(const hlo::HloInstruction& dot);

// Copies operand_precision and algorithm from `from` to `to` (a dot that
// replaces or computes part of `from`).
void CopyDotPrecision(const hlo::HloInstruction& from, hlo::HloInstruction& to);

}  // namespace kiln::passes
