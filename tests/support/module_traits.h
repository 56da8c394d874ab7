// Facts about a module that corpus tests use to decide what to skip.
#pragma once

#include "compiler/hlo/module.h"

namespace kiln::test_support {

// Whether the module communicates between devices (the evaluator then needs
// several simulated devices).
inline bool HasCollectives(const hlo::HloModule& module) {
  for (const hlo::HloComputation* c : module.computations())
    for (const hlo::HloInstruction* inst : c->instructions())
      switch (inst->opcode()) {
        case hlo::HloOpcode::kAllReduce: case hlo::HloOpcode::kAllReduceStart: case hlo::HloOpcode::kAllGather:
        case hlo::HloOpcode::kAllGatherStart: case hlo::HloOpcode::kReduceScatter: case hlo::HloOpcode::kAllToAll:
        case hlo::HloOpcode::kCollectivePermute: case hlo::HloOpcode::kCollectivePermuteStart:
        case hlo::HloOpcode::kCollectiveBroadcast:
          return true;
        default:
          break;
      }
  return false;
}

// Whether the module reads its replica or partition id (results then
// depend on the device).
inline bool UsesDeviceIds(const hlo::HloModule& module) {
  for (const hlo::HloComputation* c : module.computations())
    for (const hlo::HloInstruction* inst : c->instructions())
      if (inst->opcode() == hlo::HloOpcode::kReplicaId || inst->opcode() == hlo::HloOpcode::kPartitionId) return true;
  return false;
}

}  // namespace kiln::test_support
