// Structural in-place rules (see in_place.h).
#include "compiler/pipeline/in_place.h"

#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/custom_call_targets.h"
#include "compiler/passes/fusible_ops.h"

namespace kiln::pipeline {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

const hlo::HloComputation* FusedComputation(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kFusion) return nullptr;
  return inst.called_computation("calls");
}

}  // namespace

int64_t MemorySpaceOf(const Shape& shape) {
  return shape.IsArray() && shape.layout() ? shape.layout()->memory_space : 0;
}

bool ReadsOperandAtOutputIndexOnly(const HloInstruction& fusion, int64_t operand_number) {
  const hlo::HloComputation* fused = FusedComputation(fusion);
  if (!fused || !fused->root() || operand_number < 0 ||
      operand_number >= static_cast<int64_t>(fused->parameters().size()))
    return false;
  const HloInstruction* root = fused->root();
  if (!root->shape().IsArray() || !hlo::IsElementwise(root->opcode())) return false;
  const std::vector<int64_t>& dims = root->shape().dims();
  const HloInstruction* param = fused->parameter(operand_number);
  if (!param || !param->shape().IsArray() || param->shape().dims() != dims || param == root) return false;
  // Every instruction reachable from the parameter through its users must
  // be elementwise over the root's dimensions; the root is reached last.
  std::vector<const HloInstruction*> stack{param};
  std::vector<const HloInstruction*> seen{param};
  while (!stack.empty()) {
    const HloInstruction* inst = stack.back();
    stack.pop_back();
    if (inst != root && inst->users().empty()) return false;  // dead end: not the root
    for (const HloInstruction* user : inst->users()) {
      if (!hlo::IsElementwise(user->opcode()) || !user->shape().IsArray() || user->shape().dims() != dims)
        return false;
      bool visited = false;
      for (const HloInstruction* s : seen) visited |= s == user;
      if (visited) continue;
      seen.push_back(user);
      stack.push_back(user);
    }
  }
  return true;
}

bool CanShareOperandBuffer(const HloInstruction& user, int64_t operand_number, const ShapeIndex& operand_index,
                           const ShapeIndex& output_index) {
  switch (user.opcode()) {
    case HloOpcode::kFusion: {
      if (!operand_index.empty()) return false;
      // Output leaf k of an in-place fusion starts as the operand
      // InPlaceOperandNumbers names for it.
      std::vector<int64_t> in_place = passes::InPlaceOperandNumbers(user);
      if (!in_place.empty()) {
        if (user.shape().IsArray()) return output_index.empty() && in_place[0] == operand_number;
        if (output_index.size() != 1 || output_index[0] < 0 ||
            output_index[0] >= static_cast<int64_t>(in_place.size()))
          return false;
        return in_place[output_index[0]] == operand_number;
      }
      if (!output_index.empty() || !user.shape().IsArray()) return false;
      return ReadsOperandAtOutputIndexOnly(user, operand_number);
    }
    case HloOpcode::kWhile:
      return operand_number == 0 && operand_index == output_index;
    // trsm overwrites b with the solution.
    case HloOpcode::kTriangularSolve:
      return operand_number == 1 && operand_index.empty() && output_index.empty();
    // The LAPACK calls (potrf included) overwrite their matrices with result
    // 0 (orgqr's only result), as XLA's output_to_operand_aliasing says.
    case HloOpcode::kCustomCall: {
      const std::optional<hlo::CustomCallTarget> target =
          hlo::FindCustomCallTarget(user.GetString("custom_call_target"));
      if (!target || (target->handler != hlo::CustomCallHandler::kCholeskyEmitter &&
                      target->handler != hlo::CustomCallHandler::kLapackEmitter))
        return false;
      return operand_number == 0 && operand_index.empty() &&
             output_index == (user.shape().IsTuple() ? ShapeIndex{0} : ShapeIndex{});
    }
    default:
      return false;
  }
}

}  // namespace kiln::pipeline
