// IntegerDotExpander: a dot with an integer result becomes a multiply and a
// reduce. The GEMM libraries kiln calls (cuBLAS, OpenBLAS) take floats,
// while XLA's integer dot (operands converted to the result type, products
// and sums wrapping in it) is exact in the kernel IR on both targets. Each
// operand is converted, transposed to [batch, free, contracting] order and
// broadcast to [batch..., lhs free..., rhs free..., contracting...]; their
// product is reduced with add over the contracting dimensions, which leaves
// the dot's own [batch, lhs free, rhs free] result. Fusion makes one
// reduction kernel of it, so the product is never stored. This is the
// naive loop XLA CPU emits for dots its library cannot take. With
// `keep_int8_gemms` (compiling for CUDA) the s8 x s8 -> s32 dots cuBLAS'
// int8 tensor-core GEMM takes (IsInt8GemmDot) are left for
// DotCanonicalization instead.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class IntegerDotExpander : public HloPass {
 public:
  IntegerDotExpander() = default;
  explicit IntegerDotExpander(bool keep_int8_gemms) : keep_int8_gemms_(keep_int8_gemms) {}
  std::string_view name() const override { return "integer-dot-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  bool keep_int8_gemms_ = false;
};

// SmallDotExpander: a real dot of vectors or matrix-vector product (one
// operand has no dimensions beyond batch and contracting ones) of few
// products (at most kMaxProducts: result elements times contracted
// elements) with an f32 or f64 result becomes the same multiply and reduce,
// as XLA's dot strength reduction does. A GEMM library call costs a
// dispatch and a call of its own, far more than a handful of
// multiply-adds, and a dot in a library call keeps the loop around it out
// of WhileLoopKernelFusion; as a reduce it fuses with its neighbours. The
// operands convert to the result type exactly, and the reduce sums in it
// as the GEMM would.
class SmallDotExpander : public HloPass {
 public:
  static constexpr int64_t kMaxProducts = 256;
  std::string_view name() const override { return "small-dot-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
