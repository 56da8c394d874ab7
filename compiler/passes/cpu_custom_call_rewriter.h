// CpuCustomCallRewriter: the custom-calls of optimized XLA CPU dumps that
// compute something expressible in HLO become that HLO, so both targets
// run them (semantics in compiler/evaluator/cpu_custom_calls.h):
//   GetRngSeed          -> rng-get-and-update-state(delta=1), its words
//                          xor-ed, the splitmix64 finalizer, 0 -> 1
//   __onednn$layernorm  -> mean and variance reductions over the last
//                          dimension (in f32 for bf16/f16), rsqrt,
//                          scale and shift; elementwise ops that fuse
// Malformed calls (operands, shapes, backend_config, fused ops) are
// one-line errors.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class CpuCustomCallRewriter : public HloPass {
 public:
  std::string_view name() const override { return "cpu-custom-call-rewriter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
