// SequentialComputations: walk from the entry through while / conditional.
#include "compiler/passes/sequential_computations.h"

#include <set>

namespace kiln::passes {

std::vector<hlo::HloComputation*> SequentialComputations(const hlo::HloModule& module) {
  std::vector<hlo::HloComputation*> result;
  std::set<hlo::HloComputation*> seen;
  std::vector<hlo::HloComputation*> stack{module.entry()};
  while (!stack.empty()) {
    hlo::HloComputation* c = stack.back();
    stack.pop_back();
    if (!c || !seen.insert(c).second) continue;
    result.push_back(c);
    for (const hlo::HloInstruction* inst : c->instructions()) {
      if (inst->opcode() == hlo::HloOpcode::kWhile || inst->opcode() == hlo::HloOpcode::kConditional)
        for (hlo::HloComputation* callee : inst->called_computations()) stack.push_back(callee);
    }
  }
  return result;
}

}  // namespace kiln::passes
