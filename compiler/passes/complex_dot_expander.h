// ComplexDotExpander: a dot of complex operands (c64, c128) becomes four
// real dots of their parts,
//   re = dot(re a, re b) - dot(im a, im b),  im = dot(re a, im b) + dot(im a, re b),
// joined by complex(re, im). The real dots take the GEMM path every target
// has (cuBLAS, OpenBLAS); the parts and the join are elementwise kernels.
// Each part of the result rounds like XLA's complex GEMM up to the order
// of the two products' sum.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class ComplexDotExpander : public HloPass {
 public:
  std::string_view name() const override { return "complex-dot-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
