// RngBitGeneratorExpander: rewrites every rng-bit-generator into plain
// elementwise HLO (iota, add, xor, shifts, u64 multiplies split into u32
// halves, converts, reshapes, concatenates, slices), so that kiln's ordinary
// kernels compute it on every target.
//
// Why: JAX emits rng-bit-generator for jax.lax.rng_bit_generator and for
// jax.random with the rbg / unsafe_rbg implementations, and XLA's CPU and GPU
// backends lower it the same way, into counter-based ThreeFry-2x32 (20
// rounds) or Philox-4x32 (10 rounds) generators; rng_default is Philox there.
// The expansion reproduces XLA's results bit for bit: the same split of the
// u64 state into key and counter, the same counter per element, the same
// placement of generator outputs in the result, and the same new state.
// compiler/evaluator/rng_ops.cc states the semantics element by element.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class RngBitGeneratorExpander : public HloPass {
 public:
  std::string_view name() const override { return "rng-bit-generator-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
