#include "compiler/hlo/module.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace kiln::hlo {

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> computation) {
  computation->parent_ = this;
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

Status HloModule::RemoveComputation(HloComputation* computation) {
  if (computation == entry_) return Error("cannot remove the entry computation");
  for (const auto& c : computations_)
    for (HloInstruction* inst : c->instructions())
      for (HloComputation* callee : inst->called_computations())
        if (callee == computation)
          return Error("computation " + computation->name() + " is still called by " +
                       inst->DebugName());
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& p) { return p.get() == computation; });
  if (it == computations_.end()) return Error("computation not in module");
  computations_.erase(it);
  return Status::Ok();
}

Status HloModule::RemoveComputations(const std::unordered_set<const HloComputation*>& dead) {
  if (dead.count(entry_)) return Error("cannot remove the entry computation");
  for (const auto& c : computations_) {
    if (dead.count(c.get())) continue;
    for (HloInstruction* inst : c->instructions())
      for (HloComputation* callee : inst->called_computations())
        if (dead.count(callee))
          return Error("computation " + callee->name() + " is still called by " + inst->DebugName());
  }
  std::erase_if(computations_, [&](const auto& p) { return dead.count(p.get()) > 0; });
  return Status::Ok();
}

std::vector<HloComputation*> HloModule::computations() const {
  std::vector<HloComputation*> result;
  for (const auto& c : computations_) result.push_back(c.get());
  return result;
}

HloComputation* HloModule::FindComputation(std::string_view name) const {
  for (const auto& c : computations_)
    if (c->name() == name) return c.get();
  return nullptr;
}

std::vector<HloComputation*> HloModule::ComputationPostOrder() const {
  std::vector<HloComputation*> order;
  std::unordered_set<const HloComputation*> visited;
  // Call graphs are shallow, recursion is fine; the visited set also guards
  // against (invalid) cycles.
  std::function<void(HloComputation*)> visit = [&](HloComputation* c) {
    if (!visited.insert(c).second) return;
    for (HloInstruction* inst : c->instructions())
      for (HloComputation* callee : inst->called_computations())
        if (callee) visit(callee);
    order.push_back(c);
  };
  for (const auto& c : computations_)
    if (c.get() != entry_) visit(c.get());
  if (entry_) visit(entry_);
  return order;
}

std::unique_ptr<HloModule> HloModule::Clone() const {
  auto clone = std::make_unique<HloModule>(name_);
  clone->config_ = config_;
  clone->trailing_sections_ = trailing_sections_;
  clone->source_file_ = source_file_;
  std::unordered_map<const HloComputation*, HloComputation*> mapping;
  auto map = [&](HloComputation* c) { return mapping.at(c); };
  // Callees first so references can be remapped; then restore text order.
  for (HloComputation* c : ComputationPostOrder())
    mapping[c] = clone->AddComputation(c->Clone(c->name(), map));
  std::unordered_map<const HloComputation*, size_t> position;
  for (size_t i = 0; i < computations_.size(); ++i)
    position[mapping.at(computations_[i].get())] = i;
  std::stable_sort(clone->computations_.begin(), clone->computations_.end(),
                   [&](const auto& a, const auto& b) { return position[a.get()] < position[b.get()]; });
  if (entry_) clone->entry_ = mapping.at(entry_);
  return clone;
}

int64_t CountElidedConstants(const HloModule& module) {
  int64_t count = 0;
  for (const HloComputation* computation : module.computations())
    for (const HloInstruction* inst : computation->instructions())
      count += inst->opcode() == HloOpcode::kConstant && inst->literal_elided();
  return count;
}

std::string ElidedConstantsWarning(const HloModule& module) {
  int64_t count = CountElidedConstants(module);
  if (count == 0) return "";
  bool one = count == 1;
  return "warning: " + std::to_string(count) + (one ? " constant was" : " constants were") +
         " elided ({...}) in the HLO text and " + (one ? "holds" : "hold") +
         " XLA's placeholder data (a counter): results depend on the missing values";
}

}  // namespace kiln::hlo
