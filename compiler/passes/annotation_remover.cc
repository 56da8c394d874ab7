// AnnotationRemover: identity annotation custom-calls are bypassed.
#include "compiler/passes/annotation_remover.h"

#include <vector>

#include "compiler/hlo/custom_call_targets.h"

namespace kiln::passes {

bool IsAnnotationTarget(std::string_view target) { return hlo::IsAnnotationTarget(target); }

namespace {

bool IsRemovableAnnotation(const hlo::HloInstruction& inst) {
  return inst.opcode() == hlo::HloOpcode::kCustomCall && inst.operand_count() == 1 &&
         IsAnnotationTarget(inst.GetString("custom_call_target")) &&
         inst.shape().Compatible(inst.operand(0)->shape()) && inst.control_predecessors().empty() &&
         inst.control_successors().empty();
}

}  // namespace

StatusOr<bool> AnnotationRemover::Run(hlo::HloModule& module) {
  bool changed = false;
  for (hlo::HloComputation* comp : module.computations()) {
    std::vector<hlo::HloInstruction*> annotations;
    for (hlo::HloInstruction* inst : comp->instructions())
      if (IsRemovableAnnotation(*inst)) annotations.push_back(inst);
    // Chained annotations: each is bypassed to its own operand, which (if an
    // annotation too) is bypassed in turn, so the end result reads the
    // original value whatever the order.
    for (hlo::HloInstruction* inst : annotations) inst->ReplaceAllUsesWith(inst->operand(0));
    for (hlo::HloInstruction* inst : annotations) KILN_RETURN_IF_ERROR(comp->RemoveInstruction(inst));
    changed |= !annotations.empty();
  }
  return changed;
}

}  // namespace kiln::passes
