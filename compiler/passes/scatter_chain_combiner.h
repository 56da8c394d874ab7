// ScatterChainCombiner: a chain of scatters that each write one element at
// a constant index (scatter(scatter(scatter(zeros, i0, a), i1, b), i2, c),
// as JAX's `x.at[i, j].set(v)` builds a matrix element by element) becomes
// one scatter of all the updates.
//
// Each scatter of the chain is its own kernel otherwise: a 35x35 mass
// matrix built by 103 of them ran 103 kernels of one element each. The
// combined scatter is one kernel whose updates (a concatenate of the
// scalar values) fuse into it.
//
// Only exact rewrites are made: every scatter of the chain writes one
// scalar update at a constant in-bounds index, the indices are pairwise
// distinct (so the order the updates apply in cannot matter), each inner
// scatter feeds only the next one, and every combiner is the same kind of
// scalar computation (replace, or one commutative binary op of its two
// parameters).
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class ScatterChainCombiner : public HloPass {
 public:
  // Chains shorter than this stay as they are.
  static constexpr int64_t kMinChain = 2;

  std::string_view name() const override { return "scatter-chain-combiner"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
