// Default sequential schedule and its validity check.
#include "compiler/pipeline/schedule.h"

#include <algorithm>
#include <string>

namespace kiln::pipeline {

int64_t SequentialSchedule::PositionOf(const hlo::HloInstruction* inst) const {
  auto it = position_.find(inst);
  return it == position_.end() ? -1 : it->second;
}

void SequentialSchedule::Reindex() {
  position_.clear();
  for (int64_t i = 0; i < size(); ++i) position_[sequence[i]] = i;
}

SequentialSchedule PostOrderSchedule(const hlo::HloComputation& computation) {
  SequentialSchedule schedule;
  schedule.computation = &computation;
  for (const hlo::HloInstruction* inst : computation.PostOrder()) schedule.sequence.push_back(inst);
  schedule.Reindex();
  return schedule;
}

std::vector<int64_t> DependencyLevels(const SequentialSchedule& schedule) {
  std::vector<int64_t> levels(schedule.sequence.size(), 0);
  for (size_t pos = 0; pos < schedule.sequence.size(); ++pos) {
    const hlo::HloInstruction* inst = schedule.sequence[pos];
    auto raise = [&](const hlo::HloInstruction* pred) {
      int64_t p = schedule.PositionOf(pred);
      if (p >= 0) levels[pos] = std::max(levels[pos], levels[static_cast<size_t>(p)] + 1);
    };
    for (const hlo::HloInstruction* op : inst->operands()) raise(op);
    for (const hlo::HloInstruction* pred : inst->control_predecessors()) raise(pred);
  }
  return levels;
}

SequentialSchedule LevelOrderSchedule(const hlo::HloComputation& computation) {
  SequentialSchedule post_order = PostOrderSchedule(computation);
  const std::vector<int64_t> levels = DependencyLevels(post_order);
  std::vector<size_t> order(levels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return levels[a] < levels[b]; });
  SequentialSchedule schedule;
  schedule.computation = &computation;
  for (size_t i : order) schedule.sequence.push_back(post_order.sequence[i]);
  schedule.Reindex();
  return schedule;
}

Status VerifySchedule(const SequentialSchedule& schedule) {
  if (schedule.computation == nullptr) return Error("schedule has no computation");
  const auto instructions = schedule.computation->instructions();
  if (static_cast<int64_t>(instructions.size()) != schedule.size())
    return Error("schedule of " + schedule.computation->name() + " has " + std::to_string(schedule.size()) +
                 " entries for " + std::to_string(instructions.size()) + " instructions");
  for (const hlo::HloInstruction* inst : instructions) {
    int64_t pos = schedule.PositionOf(inst);
    if (pos < 0 || schedule.sequence[pos] != inst) return Error(inst->DebugName() + " is not scheduled");
    for (const hlo::HloInstruction* op : inst->operands())
      if (schedule.PositionOf(op) >= pos) return Error(inst->DebugName() + " is scheduled before its operand");
    for (const hlo::HloInstruction* pred : inst->control_predecessors())
      if (schedule.PositionOf(pred) >= pos)
        return Error(inst->DebugName() + " is scheduled before its control predecessor");
  }
  return Status::Ok();
}

}  // namespace kiln::pipeline
