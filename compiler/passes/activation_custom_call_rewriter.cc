// ActivationCustomCallRewriter: see activation_custom_call_rewriter.h.
#include "compiler/passes/activation_custom_call_rewriter.h"

#include <cmath>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

enum class Gelu { kExact, kTanh };

std::optional<Gelu> GeluForm(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kCustomCall || inst.operand_count() != 1 || !inst.shape().IsArray() ||
      !IsFloat(inst.shape().element_type()) || !inst.shape().Compatible(inst.operand(0)->shape()))
    return std::nullopt;
  std::string target = inst.GetString("custom_call_target");
  if (target == "AwsNeuronGelu") return Gelu::kExact;
  if (target == "AwsNeuronGeluApprxTanh") return Gelu::kTanh;
  return std::nullopt;
}

HloInstruction* Expand(HloInstruction* call, Gelu form, NameUniquer& names) {
  hlo::HloComputation& comp = *call->parent();
  const Shape shape(call->shape().element_type(), call->shape().dims());
  auto op = [&](HloOpcode opcode, std::vector<HloInstruction*> operands) {
    return AddInstruction(comp, opcode, shape, operands, names.Get(call->name() + "." + std::string(hlo::OpcodeName(opcode))));
  };
  auto splat = [&](double value) { return AddSplat(comp, shape, value, names, call->name()); };
  HloInstruction* x = call->operand(0);
  HloInstruction* inner;
  if (form == Gelu::kExact) {
    inner = op(HloOpcode::kErf, {op(HloOpcode::kMultiply, {x, splat(1.0 / std::sqrt(2.0))})});
  } else {
    HloInstruction* cube = op(HloOpcode::kMultiply, {op(HloOpcode::kMultiply, {x, x}), x});
    HloInstruction* sum = op(HloOpcode::kAdd, {x, op(HloOpcode::kMultiply, {cube, splat(0.044715)})});
    inner = op(HloOpcode::kTanh, {op(HloOpcode::kMultiply, {sum, splat(std::sqrt(2.0 / M_PI))})});
  }
  HloInstruction* half_x = op(HloOpcode::kMultiply, {x, splat(0.5)});
  return op(HloOpcode::kMultiply, {half_x, op(HloOpcode::kAdd, {inner, splat(1.0)})});
}

}  // namespace

StatusOr<bool> ActivationCustomCallRewriter::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module, [](const HloInstruction& inst) { return GeluForm(inst).has_value(); },
      [](HloInstruction* call, NameUniquer& names) -> StatusOr<HloInstruction*> {
        return Expand(call, *GeluForm(*call), names);
      });
}

}  // namespace kiln::passes
