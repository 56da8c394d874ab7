// CallInliner: replaces every kCall (and every fusion already present in
// the input, e.g. an XLA-optimized dump) with a copy of the computation it
// calls, so kiln's own fusion decides the kernels.
#include <unordered_map>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"

namespace kiln::passes {
namespace {

// Clones `callee`'s instructions into the caller of `call` and returns the
// clone of the callee's root.
StatusOr<hlo::HloInstruction*> InlineCall(hlo::HloInstruction* call, NameUniquer& names) {
  const hlo::HloComputation* callee =
      call->opcode() == hlo::HloOpcode::kFusion ? call->called_computation("calls") : call->to_apply();
  if (!callee || !callee->root()) return Error(call->DebugName() + ": call without a callee");
  if (callee->parameter_count() != call->operand_count())
    return Error(call->DebugName() + ": call has " + std::to_string(call->operand_count()) +
                 " operands for " + std::to_string(callee->parameter_count()) + " parameters");
  hlo::HloComputation& caller = *call->parent();
  std::unordered_map<const hlo::HloInstruction*, hlo::HloInstruction*> map;
  for (int64_t i = 0; i < callee->parameter_count(); ++i) map[callee->parameter(i)] = call->operand(i);
  for (const hlo::HloInstruction* inst : callee->PostOrder()) {
    if (inst->opcode() == hlo::HloOpcode::kParameter) continue;
    std::vector<hlo::HloInstruction*> operands;
    for (const hlo::HloInstruction* op : inst->operands()) operands.push_back(map.at(op));
    map[inst] = caller.AddInstruction(inst->CloneWithOperands(operands, names.Get(inst->name())));
  }
  return map.at(callee->root());
}

}  // namespace

StatusOr<bool> CallInliner::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  // Callees before callers: a computation's own calls are inlined before it
  // is copied into its callers, so one sweep inlines every level.
  for (hlo::HloComputation* comp : module.ComputationPostOrder()) {
    for (hlo::HloInstruction* inst : comp->PostOrder()) {
      if (inst->opcode() != hlo::HloOpcode::kCall && inst->opcode() != hlo::HloOpcode::kFusion) continue;
      KILN_ASSIGN_OR_RETURN(hlo::HloInstruction* root, InlineCall(inst, names));
      inst->ReplaceAllUsesWith(root);
      inst->DropAllControlDependencies();
      KILN_RETURN_IF_ERROR(comp->RemoveInstruction(inst));
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
