// SequentialSchedule: the order in which a computation's instructions run.
//
// Buffer assignment reasons about liveness over one fixed sequential order;
// keeping that order in its own struct lets a memory-minimizing scheduler
// replace the default (post-order) without touching buffer assignment.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "compiler/hlo/computation.h"

namespace kiln::pipeline {

struct SequentialSchedule {
  const hlo::HloComputation* computation = nullptr;
  std::vector<const hlo::HloInstruction*> sequence;

  // Position of `inst` in the sequence, or -1 if it is not scheduled.
  int64_t PositionOf(const hlo::HloInstruction* inst) const;
  int64_t size() const { return static_cast<int64_t>(sequence.size()); }

  // Rebuilds the position index; call after editing `sequence`.
  void Reindex();

 private:
  std::unordered_map<const hlo::HloInstruction*, int64_t> position_;
};

// The computation's post-order (operands and control predecessors first).
SequentialSchedule PostOrderSchedule(const hlo::HloComputation& computation);

// The dependency level of every instruction of `schedule`, by position: 0
// without operands or control predecessors, else one more than the largest
// of theirs. Instructions of one level never depend on each other.
std::vector<int64_t> DependencyLevels(const SequentialSchedule& schedule);

// The computation's instructions by increasing dependency level, in
// post-order within a level: independent instructions sit side by side,
// which is what multi-stream programs run concurrently.
SequentialSchedule LevelOrderSchedule(const hlo::HloComputation& computation);

// Checks that every instruction of the computation appears exactly once and
// after its operands and control predecessors.
Status VerifySchedule(const SequentialSchedule& schedule);

}  // namespace kiln::pipeline
