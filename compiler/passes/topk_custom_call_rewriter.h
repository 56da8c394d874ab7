// TopKCustomCallRewriter: XLA's CPU and GPU pipelines emit top-k as a
// custom-call "TopK" (results (values, s32 indices) along the last
// dimension, k from the result shape) with a comparator in
// called_computations. A comparator that is compare(lhs value, rhs value)
// GT or LT (any comparison type) becomes the `topk` op with largest=true or
// false, which kiln compiles as a selection kernel. Other comparators are
// left alone, so compilation names the target.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class TopKCustomCallRewriter : public HloPass {
 public:
  std::string_view name() const override { return "topk-custom-call-rewriter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
