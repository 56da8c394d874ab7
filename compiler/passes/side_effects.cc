// Side-effect classification shared by the simplification passes.
#include "compiler/passes/side_effects.h"

#include "compiler/passes/radix_sort_rewriter.h"

namespace kiln::passes {

bool IsCollectiveOpcode(hlo::HloOpcode opcode) {
  using hlo::HloOpcode;
  switch (opcode) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

bool IsSideEffectingOpcode(hlo::HloOpcode opcode) {
  using hlo::HloOpcode;
  if (IsCollectiveOpcode(opcode)) return true;
  switch (opcode) {
    case HloOpcode::kParameter:
    case HloOpcode::kCustomCall:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kStochasticConvert:
    // Async wrappers and copy-start/done pair up by identity.
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
    // Barriers and domains exist precisely to stop rewrites across them.
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
      return true;
    default:
      return false;
  }
}

bool ContainsToken(const Shape& shape) {
  if (shape.element_type() == ElementType::kToken) return true;
  if (!shape.IsTuple()) return false;
  for (const Shape& s : shape.tuple_shapes())
    if (ContainsToken(s)) return true;
  return false;
}

bool IsSideEffectingInstruction(const hlo::HloInstruction& inst) {
  // kiln's radix sort call is a pure function of its operands (a dead one
  // goes, equal ones merge).
  if (inst.opcode() == hlo::HloOpcode::kCustomCall &&
      inst.GetString("custom_call_target") == kRadixSortCallTarget)
    return false;
  return IsSideEffectingOpcode(inst.opcode());
}

bool SideEffectAnalysis::HasSideEffect(const hlo::HloInstruction& inst) {
  if (IsSideEffectingInstruction(inst) || ContainsToken(inst.shape())) return true;
  for (const hlo::HloComputation* callee : inst.called_computations())
    if (ComputationHasSideEffect(callee)) return true;
  return false;
}

bool SideEffectAnalysis::ComputationHasSideEffect(const hlo::HloComputation* computation) {
  if (!computation) return false;
  auto it = computations_.find(computation);
  if (it != computations_.end()) return it->second;
  // Provisionally pure, so a (malformed) recursive call graph terminates.
  computations_[computation] = false;
  bool effect = false;
  for (const hlo::HloInstruction* inst : computation->instructions()) {
    // A callee's parameters are its inputs, not effects.
    if (inst->opcode() == hlo::HloOpcode::kParameter) continue;
    if (HasSideEffect(*inst)) {
      effect = true;
      break;
    }
  }
  computations_[computation] = effect;
  return effect;
}

}  // namespace kiln::passes
