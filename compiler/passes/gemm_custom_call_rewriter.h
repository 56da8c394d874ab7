// GemmCustomCallRewriter: a dump that XLA's GPU compiler already optimized
// calls cuBLAS through custom-calls (`__cublas$gemm`, `__cublas$lt$matmul`)
// whose gemm_backend_config holds the dot dimension numbers, alpha, beta and
// a cuBLASLt epilogue. They become the HLO they stand for, so kiln's own
// dot canonicalization, fusion and GEMM thunks take over:
//   alpha * dot(a, b) [+ beta * c] [+ bias along the output's minor
//   dimension] [then relu, or gelu in its tanh form]
// A tuple result's second element (cuBLAS's workspace, s8[...]) becomes a
// zero array. Epilogues with auxiliary outputs are refused, naming them.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

bool IsGemmCustomCallTarget(std::string_view target);

class GemmCustomCallRewriter : public HloPass {
 public:
  std::string_view name() const override { return "gemm-custom-call-rewriter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
