// Fusion-relevant properties of instructions (see fusible_ops.h).
#include "compiler/passes/fusible_ops.h"

#include "compiler/hlo/computation.h"

namespace kiln::passes {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsKernelOp(const HloInstruction& inst) {
  if (!inst.shape().IsArray()) return false;
  switch (inst.opcode()) {
    case HloOpcode::kBroadcast: case HloOpcode::kReshape: case HloOpcode::kTranspose:
    case HloOpcode::kSlice: case HloOpcode::kConcatenate: case HloOpcode::kIota:
    case HloOpcode::kReverse: case HloOpcode::kConstant:
      return true;
    case HloOpcode::kReduce:
      return inst.operand_count() == 2;
    case HloOpcode::kStochasticConvert:  // needs random bits codegen lacks
      return false;
    default:
      return hlo::IsElementwise(inst.opcode());
  }
}

bool IsCheapToRepeat(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kLog: case HloOpcode::kLog1p:
    case HloOpcode::kLogistic: case HloOpcode::kTanh: case HloOpcode::kSin: case HloOpcode::kCos:
    case HloOpcode::kTan: case HloOpcode::kAtan2: case HloOpcode::kPower: case HloOpcode::kErf:
    case HloOpcode::kCbrt: case HloOpcode::kReduce: case HloOpcode::kConcatenate:
      return false;
    default:
      return true;
  }
}

bool IsDuplicable(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kConstant:
      return inst.shape().IsArray() && inst.shape().ElementCount() <= 1 && !inst.literal_elided();
    case HloOpcode::kIota:
      return inst.shape().IsArray();
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
      return inst.shape().IsArray() && IsDuplicable(*inst.operand(0));
    default:
      return false;
  }
}

std::optional<int64_t> InPlaceOperandNumber(const HloInstruction& fusion) {
  const hlo::HloComputation* body = nullptr;
  if (fusion.opcode() == HloOpcode::kFusion) {
    if (fusion.called_computations().size() != 1) return std::nullopt;
    body = fusion.called_computations()[0];
  }
  const HloInstruction* root = body ? body->root() : &fusion;
  if (!root) return std::nullopt;
  if (root->opcode() != HloOpcode::kDynamicUpdateSlice && root->opcode() != HloOpcode::kScatter)
    return std::nullopt;
  if (!root->shape().IsArray() || root->operand_count() < 1) return std::nullopt;
  const HloInstruction* target = root->operand(0);
  if (!body) return 0;
  if (target->opcode() != HloOpcode::kParameter || target->user_count() != 1) return std::nullopt;
  return target->parameter_number();
}

}  // namespace kiln::passes
