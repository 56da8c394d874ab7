// MapInliner: map(x0, ..., xn), to_apply=f applies the scalar computation f
// at every index. When f is made of elementwise ops, scalar constants and
// its parameters (what JAX and XLA's tests emit), the map becomes those ops
// on whole arrays: f's parameters are the operands, its constants are
// broadcast, and fusion then makes one loop kernel of it, as XLA's
// MapInliner does. Other maps are left as they are.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class MapInliner : public HloPass {
 public:
  std::string_view name() const override { return "map-inliner"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
