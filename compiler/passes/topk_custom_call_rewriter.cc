// TopKCustomCallRewriter: see topk_custom_call_rewriter.h.
#include "compiler/passes/topk_custom_call_rewriter.h"

#include <optional>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// largest=true for a GT comparator of the two values, false for LT.
std::optional<bool> Largest(const HloInstruction& call) {
  if (call.opcode() != HloOpcode::kCustomCall || call.GetString("custom_call_target") != "TopK" ||
      call.operand_count() != 1 || !call.shape().IsTuple() || call.shape().tuple_size() != 2)
    return std::nullopt;
  std::vector<hlo::HloComputation*> called = call.called_computations();
  if (called.size() != 1 || !called[0]->root()) return std::nullopt;
  const hlo::HloComputation& cmp = *called[0];
  const HloInstruction* root = cmp.root();
  if (root->opcode() != HloOpcode::kCompare || cmp.parameter_count() < 2 ||
      root->operand(0) != cmp.parameter(0) || root->operand(1) != cmp.parameter(1))
    return std::nullopt;
  std::optional<hlo::ComparisonDirection> dir = root->comparison_direction();
  if (dir == hlo::ComparisonDirection::kGt) return true;
  if (dir == hlo::ComparisonDirection::kLt) return false;
  return std::nullopt;
}

}  // namespace

StatusOr<bool> TopKCustomCallRewriter::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module,
      [](const HloInstruction& inst) {
        return Largest(inst).has_value() && inst.shape().tuple_shape(0).IsArray() &&
               inst.shape().tuple_shape(0).rank() > 0;
      },
      [](HloInstruction* call, NameUniquer& names) -> StatusOr<HloInstruction*> {
        const Shape& values = call->shape().tuple_shape(0);
        HloInstruction* topk = AddInstruction(*call->parent(), HloOpcode::kTopK, call->shape(), {call->operand(0)},
                                              names.Get(call->name() + ".topk"));
        topk->SetAttribute("k", values.dim(values.rank() - 1));
        topk->SetAttribute("largest", *Largest(*call));
        return topk;
      });
}

}  // namespace kiln::passes
