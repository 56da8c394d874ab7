// HloComputation: a named dataflow graph of instructions with parameters and
// a root, owned by an HloModule.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "compiler/hlo/instruction.h"

namespace kiln::hlo {

class HloModule;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  HloModule* parent() const { return parent_; }

  // Appends an instruction (kept in insertion order, which for parsed
  // modules is text order and, for scheduled modules, the schedule).
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);
  // Removes an instruction that has no users and no control edges.
  Status RemoveInstruction(HloInstruction* instruction);

  // Instructions in insertion order.
  std::vector<HloInstruction*> instructions() const;
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()) - removed_; }
  HloInstruction* FindInstruction(std::string_view name) const;

  HloInstruction* root() const { return root_; }
  void set_root(HloInstruction* root) { root_ = root; }

  // Parameters indexed by parameter number (nullptr for gaps while building).
  const std::vector<HloInstruction*>& parameters() const { return parameters_; }
  HloInstruction* parameter(int64_t i) const { return parameters_[i]; }
  int64_t parameter_count() const { return static_cast<int64_t>(parameters_.size()); }

  // Instructions ordered so that operands and control predecessors come
  // before their users. Includes instructions unreachable from the root.
  std::vector<HloInstruction*> PostOrder() const;

  // (param shapes) -> root shape
  std::vector<Shape> ParameterShapes() const;

  // Deep copy of this computation's instructions; called computations are
  // mapped through `map` (identity when null).
  std::unique_ptr<HloComputation> Clone(
      const std::string& new_name,
      const std::function<HloComputation*(HloComputation*)>& map = nullptr) const;

 private:
  friend class HloModule;
  std::string name_;
  HloModule* parent_ = nullptr;
  // Drops the holes RemoveInstruction leaves and renumbers position_.
  void Compact();

  // In insertion order; removal leaves a null hole (so removing is O(1) and
  // a pass removing many instructions stays linear) until Compact.
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  std::unordered_map<const HloInstruction*, size_t> position_;
  int64_t removed_ = 0;
  std::vector<HloInstruction*> parameters_;
  HloInstruction* root_ = nullptr;
};

}  // namespace kiln::hlo
