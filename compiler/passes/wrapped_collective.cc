// WrappedCollective: see wrapped_collective.h.
#include "compiler/passes/wrapped_collective.h"

namespace kiln::passes {

using hlo::HloInstruction;
using hlo::HloOpcode;

const HloInstruction* WrappedCollective(const HloInstruction& start) {
  if (start.opcode() != HloOpcode::kAsyncStart) return nullptr;
  if (start.users().size() != 1 || start.users()[0]->opcode() != HloOpcode::kAsyncDone) return nullptr;
  const hlo::HloComputation* callee = start.called_computation("calls");
  if (!callee || callee->parameter_count() != start.operand_count()) return nullptr;
  const HloInstruction* root = callee->root();
  switch (root->opcode()) {
    case HloOpcode::kAllReduce: case HloOpcode::kAllGather: case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll: case HloOpcode::kCollectivePermute: case HloOpcode::kCollectiveBroadcast: break;
    default: return nullptr;
  }
  // Nothing but the parameters and the collective, which reads them in order.
  if (callee->instructions().size() != static_cast<size_t>(root->operand_count()) + 1) return nullptr;
  if (root->operand_count() != callee->parameter_count()) return nullptr;
  for (int64_t i = 0; i < root->operand_count(); ++i)
    if (root->operand(i) != callee->parameter(i)) return nullptr;
  return root;
}

}  // namespace kiln::passes
