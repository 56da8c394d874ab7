// DeadCodeElimination: drops unused instructions and uncalled computations.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "compiler/passes/passes.h"
#include "compiler/passes/side_effects.h"

namespace kiln::passes {
namespace {

StatusOr<bool> RemoveDeadInstructions(hlo::HloComputation& comp) {
  bool changed = false;
  std::vector<hlo::HloInstruction*> order = comp.PostOrder();
  // Users come after their operands in post-order, so walking it backwards
  // sees every user's removal before deciding on the operand.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    hlo::HloInstruction* inst = *it;
    if (inst == comp.root() || inst->user_count() > 0 || IsSideEffectingInstruction(*inst) ||
        !inst->control_successors().empty())
      continue;
    KILN_RETURN_IF_ERROR(comp.RemoveInstruction(inst));
    changed = true;
  }
  return changed;
}

StatusOr<bool> RemoveUncalledComputations(hlo::HloModule& module) {
  std::set<const hlo::HloComputation*> called;
  std::vector<const hlo::HloComputation*> stack{module.entry()};
  while (!stack.empty()) {
    const hlo::HloComputation* c = stack.back();
    stack.pop_back();
    if (!c || !called.insert(c).second) continue;
    for (const hlo::HloInstruction* inst : c->instructions())
      for (const hlo::HloComputation* callee : inst->called_computations()) stack.push_back(callee);
  }
  std::unordered_set<const hlo::HloComputation*> dead;
  for (const hlo::HloComputation* c : module.computations())
    if (!called.count(c)) dead.insert(c);
  if (dead.empty()) return false;
  KILN_RETURN_IF_ERROR(module.RemoveComputations(dead));
  return true;
}

}  // namespace

StatusOr<bool> DeadCodeElimination::Run(hlo::HloModule& module) {
  bool changed = false;
  for (hlo::HloComputation* comp : module.computations()) {
    KILN_ASSIGN_OR_RETURN(bool c, RemoveDeadInstructions(*comp));
    changed |= c;
  }
  KILN_ASSIGN_OR_RETURN(bool removed, RemoveUncalledComputations(module));
  return changed || removed;
}

}  // namespace kiln::passes
