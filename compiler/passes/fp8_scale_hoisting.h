// Fp8ScaleHoisting: f8 dots written as XLA's scaled-FP8 pattern become
// FP8 GEMMs.
//
// JAX and XLA write a scaled FP8 matmul as a dot of widened, scaled
// operands: dot(convert(a_f8) * broadcast(s_a), convert(b_f8) *
// broadcast(s_b)) (each multiply optional), computed in a wider type T.
// Per-tensor scales factor out of the dot: the result is s_a * s_b *
// dot(a_f8, b_f8), which this pass builds (the dot of the f8 values in f32,
// times the product of the scales in f32, converted to T), so the dot is
// one IsFp8GemmDot (fp8_gemm.h) that cuBLASLt runs on the FP8 tensor cores
// and the scaling fuses into the kernel after it. Without scales, the dot
// of the f8 values gets the original result type. Only the multiply form
// with scalar scales is matched (a divide, or a scale that is not a
// broadcast scalar, leaves the dot as it is), and only where the new dot
// is an FP8 GEMM. The result differs from the written order of operations
// by rounding only: the scaled operands are no longer rounded to T before
// the products.
//
// Runs when compiling for CUDA (the host computes the result of either
// form, so an artifact for host and CUDA runs the same program on both).
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class Fp8ScaleHoisting : public HloPass {
 public:
  std::string_view name() const override { return "fp8-scale-hoisting"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
