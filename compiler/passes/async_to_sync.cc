// AsyncToSync: see async_to_sync.h.
#include "compiler/passes/async_to_sync.h"

#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/wrapped_collective.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// The async-start at the head of an async-done's chain of async-updates.
HloInstruction* AsyncStartOf(HloInstruction* done) {
  HloInstruction* op = done->operand_count() == 1 ? done->operand(0) : nullptr;
  while (op && op->opcode() == HloOpcode::kAsyncUpdate && op->operand_count() == 1) op = op->operand(0);
  return op && op->opcode() == HloOpcode::kAsyncStart ? op : nullptr;
}

// The synchronous form of `done`, or nullptr when it has none.
HloInstruction* SyncForm(HloInstruction* done, NameUniquer& names) {
  hlo::HloComputation& comp = *done->parent();
  if (done->opcode() == HloOpcode::kCopyDone) {
    HloInstruction* start = done->operand_count() == 1 ? done->operand(0) : nullptr;
    if (!start || start->opcode() != HloOpcode::kCopyStart || start->operand_count() != 1) return nullptr;
    return AddInstruction(comp, HloOpcode::kCopy, done->shape(), {start->operand(0)}, names.Get(done->name()));
  }
  HloInstruction* start = AsyncStartOf(done);
  if (start && WrappedCollective(*start)) return nullptr;  // a real async pair
  hlo::HloComputation* callee = start ? start->called_computation("calls") : nullptr;
  if (!callee || callee->parameter_count() != start->operand_count()) return nullptr;
  HloInstruction* call = AddInstruction(comp, HloOpcode::kCall, done->shape(), start->operands(),
                                        names.Get(done->name()));
  call->SetAttribute("to_apply", hlo::ComputationRefs{{callee}});
  return call;
}

// Removes `inst` and then each operand it leaves without users, down a
// chain of async wrappers.
Status RemoveDeadChain(HloInstruction* inst) {
  while (inst && inst->users().empty() && inst != inst->parent()->root()) {
    HloOpcode op = inst->opcode();
    bool wrapper = op == HloOpcode::kAsyncDone || op == HloOpcode::kAsyncUpdate ||
                   op == HloOpcode::kAsyncStart || op == HloOpcode::kCopyDone || op == HloOpcode::kCopyStart;
    if (!wrapper) return Status::Ok();
    HloInstruction* next = inst->operand_count() == 1 && op != HloOpcode::kAsyncStart &&
                                   op != HloOpcode::kCopyStart
                               ? inst->operand(0)
                               : nullptr;
    inst->DropAllControlDependencies();
    KILN_RETURN_IF_ERROR(inst->parent()->RemoveInstruction(inst));
    inst = next;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<bool> AsyncToSync::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  for (hlo::HloComputation* comp : module.computations()) {
    std::vector<HloInstruction*> dones;
    for (HloInstruction* inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kCopyDone || inst->opcode() == HloOpcode::kAsyncDone) dones.push_back(inst);
    for (HloInstruction* done : dones) {
      HloInstruction* sync = SyncForm(done, names);
      if (!sync) continue;
      done->ReplaceAllUsesWith(sync);  // the root too
      KILN_RETURN_IF_ERROR(RemoveDeadChain(done));
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
