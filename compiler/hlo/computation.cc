#include "compiler/hlo/computation.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace kiln::hlo {

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  HloInstruction* inst = instruction.get();
  inst->parent_ = this;
  if (inst->opcode() == HloOpcode::kParameter && inst->parameter_number() >= 0) {
    size_t n = static_cast<size_t>(inst->parameter_number());
    if (parameters_.size() <= n) parameters_.resize(n + 1, nullptr);
    parameters_[n] = inst;
  }
  position_[inst] = instructions_.size();
  instructions_.push_back(std::move(instruction));
  return inst;
}

Status HloComputation::RemoveInstruction(HloInstruction* instruction) {
  if (instruction->user_count() != 0)
    return Error("cannot remove " + instruction->DebugName() + ": it still has users");
  if (instruction == root_) return Error("cannot remove the root " + instruction->DebugName());
  if (instruction->opcode() == HloOpcode::kParameter)
    return Error("cannot remove parameter " + instruction->DebugName());
  instruction->RemoveAllOperands();
  instruction->DropAllControlDependencies();
  auto it = position_.find(instruction);
  if (it == position_.end()) return Error("instruction not in computation " + name_);
  instructions_[it->second].reset();
  position_.erase(it);
  if (++removed_ > 64 && removed_ * 2 > static_cast<int64_t>(instructions_.size())) Compact();
  return Status::Ok();
}

void HloComputation::Compact() {
  std::vector<std::unique_ptr<HloInstruction>> kept;
  kept.reserve(instructions_.size() - removed_);
  for (auto& inst : instructions_)
    if (inst) kept.push_back(std::move(inst));
  instructions_ = std::move(kept);
  removed_ = 0;
  position_.clear();
  for (size_t i = 0; i < instructions_.size(); ++i) position_[instructions_[i].get()] = i;
}

std::vector<HloInstruction*> HloComputation::instructions() const {
  std::vector<HloInstruction*> result;
  result.reserve(instructions_.size());
  for (const auto& inst : instructions_)
    if (inst) result.push_back(inst.get());
  return result;
}

HloInstruction* HloComputation::FindInstruction(std::string_view name) const {
  for (const auto& inst : instructions_)
    if (inst && inst->name() == name) return inst.get();
  return nullptr;
}

std::vector<HloInstruction*> HloComputation::PostOrder() const {
  // Iterative DFS: deep graphs (long elementwise chains) must not overflow
  // the stack. Visited marks are indexed by position (no per-node
  // allocation): passes call this on every computation, often.
  std::vector<HloInstruction*> order;
  order.reserve(instructions_.size());
  std::vector<uint8_t> visited(instructions_.size(), 0);
  auto mark = [&](const HloInstruction* inst) {
    auto it = position_.find(inst);
    if (it == position_.end()) return false;  // not in this computation
    if (visited[it->second]) return false;
    visited[it->second] = 1;
    return true;
  };
  std::vector<std::pair<HloInstruction*, size_t>> stack;
  for (const auto& root : instructions_) {
    if (!root || !mark(root.get())) continue;
    stack.push_back({root.get(), 0});
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      size_t n_ops = inst->operands().size();
      size_t n_total = n_ops + inst->control_predecessors().size();
      if (next < n_total) {
        HloInstruction* dep = next < n_ops ? inst->operands()[next]
                                           : inst->control_predecessors()[next - n_ops];
        ++next;
        if (dep->parent() == this && mark(dep)) stack.push_back({dep, 0});
        continue;
      }
      order.push_back(inst);
      stack.pop_back();
    }
  }
  return order;
}

std::vector<Shape> HloComputation::ParameterShapes() const {
  std::vector<Shape> shapes;
  for (HloInstruction* p : parameters_) shapes.push_back(p ? p->shape() : Shape());
  return shapes;
}

std::unique_ptr<HloComputation> HloComputation::Clone(
    const std::string& new_name,
    const std::function<HloComputation*(HloComputation*)>& map) const {
  auto clone = std::make_unique<HloComputation>(new_name);
  std::unordered_map<const HloInstruction*, HloInstruction*> mapping;
  for (HloInstruction* inst : PostOrder()) {
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) operands.push_back(mapping.at(op));
    auto copy = inst->CloneWithOperands(operands, inst->name());
    if (map) copy->RemapCalledComputations(map);
    mapping[inst] = clone->AddInstruction(std::move(copy));
  }
  // Keep the original instruction order rather than post-order.
  std::unordered_map<const HloInstruction*, size_t> position;
  for (size_t i = 0; i < instructions_.size(); ++i)
    if (instructions_[i]) position[mapping.at(instructions_[i].get())] = i;
  std::stable_sort(clone->instructions_.begin(), clone->instructions_.end(),
                   [&](const auto& a, const auto& b) { return position[a.get()] < position[b.get()]; });
  clone->Compact();
  for (const auto& inst : instructions_)
    if (inst)
      for (HloInstruction* pred : inst->control_predecessors())
      mapping.at(pred)->AddControlDependencyTo(mapping.at(inst.get()));
  if (root_) clone->root_ = mapping.at(root_);
  return clone;
}

}  // namespace kiln::hlo
