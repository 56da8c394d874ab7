// ActivationCustomCallRewriter: frontends for other accelerators emit some
// activations as custom-calls (torch-neuronx lowers torch's GELU to
// "AwsNeuronGelu", its exact erf form, and the tanh approximation to
// "AwsNeuronGeluApprxTanh"). They become the elementwise HLO they compute,
// which fuses like any other op:
//   exact: 0.5 x (1 + erf(x / sqrt(2)))
//   tanh:  0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class ActivationCustomCallRewriter : public HloPass {
 public:
  std::string_view name() const override { return "activation-custom-call-rewriter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
