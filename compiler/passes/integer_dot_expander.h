// IntegerDotExpander: a dot with an integer result becomes a multiply and a
// reduce. The GEMM libraries kiln calls (cuBLAS, OpenBLAS) take floats,
// while XLA's integer dot (operands converted to the result type, products
// and sums wrapping in it) is exact in the kernel IR on both targets. Each
// operand is converted, transposed to [batch, free, contracting] order and
// broadcast to [batch..., lhs free..., rhs free..., contracting...]; their
// product is reduced with add over the contracting dimensions, which leaves
// the dot's own [batch, lhs free, rhs free] result. Fusion makes one
// reduction kernel of it, so the product is never stored. This is the
// naive loop XLA CPU emits for dots its library cannot take; int8 GEMMs on
// tensor cores (cublasGemmEx with 32-bit accumulation) are a later step.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class IntegerDotExpander : public HloPass {
 public:
  std::string_view name() const override { return "integer-dot-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
