// PeakLiveBytes: how much memory a module's values need at once when run
// in post-order with each value freed after its last use (as the reference
// evaluator does). Corpus tests use it to skip modules too large for a unit
// test.
#pragma once

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "compiler/hlo/module.h"

namespace kiln::test_support {

// Parameters and the root stay live throughout.
inline int64_t PeakLiveBytes(const hlo::HloComputation& computation) {
  std::vector<hlo::HloInstruction*> order = computation.PostOrder();
  std::unordered_map<const hlo::HloInstruction*, size_t> last_use;
  for (size_t i = 0; i < order.size(); ++i)
    for (hlo::HloInstruction* op : order[i]->operands()) last_use[op] = i;
  int64_t live = 0, peak = 0;
  std::vector<std::vector<const hlo::HloInstruction*>> dies_at(order.size());
  for (auto& [inst, i] : last_use)
    if (inst->opcode() != hlo::HloOpcode::kParameter && inst != computation.root()) dies_at[i].push_back(inst);
  for (size_t i = 0; i < order.size(); ++i) {
    live += order[i]->shape().ByteSize();
    peak = std::max(peak, live);
    for (const hlo::HloInstruction* dead : dies_at[i]) live -= dead->shape().ByteSize();
  }
  return peak;
}

// The largest figure over the module's computations.
inline int64_t PeakLiveBytes(const hlo::HloModule& module) {
  int64_t peak = 0;
  for (hlo::HloComputation* c : module.computations()) peak = std::max(peak, PeakLiveBytes(*c));
  return peak;
}

}  // namespace kiln::test_support
