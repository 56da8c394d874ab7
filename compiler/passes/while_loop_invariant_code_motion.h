// WhileLoopInvariantCodeMotion: computes loop-invariant values once, before
// the loop, instead of on every iteration (XLA's pass of the same name).
//
// An instruction of a while body is invariant when it has no side effect
// and its operands are constants, loop-state elements the body passes
// through unchanged, or other invariant instructions. Each invariant value
// that a variant instruction uses is computed before the loop and carried
// in a new loop-state element. Values that are cheaper to recompute than to
// carry (broadcasts, iotas, reshapes and other data movement of invariants,
// constants) are not hoisted on their own: fusion duplicates them into the
// kernels that read them.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class WhileLoopInvariantCodeMotion : public HloPass {
 public:
  std::string_view name() const override { return "while-licm"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
