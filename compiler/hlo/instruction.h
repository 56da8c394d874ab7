// HloInstruction: one operation of an HLO computation.
//
// Instructions are owned by their HloComputation. Operands, users and
// control edges are non-owning pointers kept consistent by the mutators
// here (use-def links), so passes can rewrite the graph safely.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/literal.h"
#include "common/shape.h"
#include "compiler/hlo/attributes.h"
#include "compiler/hlo/opcode.h"

namespace kiln::hlo {

class HloComputation;

// Where an instruction was written, for error messages.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  bool valid() const { return line > 0; }
  std::string ToString() const;  // "file:line:col"
};

class HloInstruction {
 public:
  HloInstruction(HloOpcode opcode, std::string name, Shape shape);
  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  HloComputation* parent() const { return parent_; }

  // --- Operands and users (use-def links) ---
  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  void AppendOperand(HloInstruction* operand);
  // Replaces operand i, updating both users lists.
  void ReplaceOperand(int64_t i, HloInstruction* new_operand);
  void RemoveAllOperands();
  // Users in first-use order, each listed once.
  const std::vector<HloInstruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  // Makes every user of this instruction use `other` instead (and, if this is
  // its computation's root, makes `other` the root).
  void ReplaceAllUsesWith(HloInstruction* other);

  // --- Control edges ---
  const std::vector<HloInstruction*>& control_predecessors() const { return control_preds_; }
  const std::vector<HloInstruction*>& control_successors() const { return control_succs_; }
  void AddControlDependencyTo(HloInstruction* successor);
  void DropAllControlDependencies();

  // --- Attributes ---
  const std::vector<Attribute>& attributes() const { return attrs_; }
  const Attribute* FindAttribute(std::string_view name) const;
  bool HasAttribute(std::string_view name) const { return FindAttribute(name) != nullptr; }
  // Typed access; nullptr when absent or of another type.
  template <typename T>
  const T* GetAttribute(std::string_view name) const {
    const Attribute* a = FindAttribute(name);
    return a ? std::get_if<T>(&a->value) : nullptr;
  }
  // Sets (replacing an existing attribute of that name in place).
  void SetAttribute(std::string name, AttrValue value);
  void RemoveAttribute(std::string_view name);

  int64_t GetInt(std::string_view name, int64_t default_value) const;
  bool GetBool(std::string_view name, bool default_value) const;
  // Integer list attribute, or {} when absent.
  std::vector<int64_t> GetInts(std::string_view name) const;
  // EnumAttr or StringAttr text, or "" when absent.
  std::string GetString(std::string_view name) const;
  // The backend_config text: XLA writes it as a quoted string in older
  // dumps and as bare JSON (backend_config={...}) in newer ones.
  std::string BackendConfig() const;

  // Common attributes by meaning.
  std::vector<int64_t> dimensions() const { return GetInts("dimensions"); }
  int64_t tuple_index() const { return GetInt("index", 0); }
  DotDimensionNumbers dot_dimension_numbers() const;
  GatherDimensionNumbers gather_dimension_numbers() const;
  ScatterDimensionNumbers scatter_dimension_numbers() const;
  std::optional<ComparisonDirection> comparison_direction() const;
  ComparisonType comparison_type() const;

  // --- Called computations, in attribute order ---
  std::vector<HloComputation*> called_computations() const;
  // The single computation of attribute `name` (to_apply, condition, body,
  // calls, true_computation, ...), or nullptr.
  HloComputation* called_computation(std::string_view name) const;
  HloComputation* to_apply() const { return called_computation("to_apply"); }
  // Conditional branches, in index order (true_computation is branch 0).
  std::vector<HloComputation*> branch_computations() const;
  // Rewrites every computation reference through `map` (used by cloning).
  void RemapCalledComputations(const std::function<HloComputation*(HloComputation*)>& map);

  // --- Opcode-specific payloads ---
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }
  // Constant value (kConstant only). A constant printed as "{...}" (data
  // elided) has literal() with XLA's placeholder data (literal_parser.cc)
  // and literal_elided() true: it compiles and runs, but passes do not
  // fold or merge it and tools warn that results depend on missing data.
  const Literal& literal() const { return *literal_; }
  bool has_literal() const { return literal_ != nullptr; }
  void set_literal(Literal literal) { literal_ = std::make_unique<Literal>(std::move(literal)); }
  bool literal_elided() const { return literal_elided_; }
  void set_literal_elided(bool elided) { literal_elided_ = elided; }

  const SourceLocation& location() const { return location_; }
  void set_location(SourceLocation loc) { location_ = std::move(loc); }

  // "%name" plus location, for error messages: "%add.1 (m.hlo:12:3)".
  std::string DebugName() const;

  // A copy with the same opcode, shape, attributes and payload whose
  // operands are `new_operands`; not attached to any computation.
  std::unique_ptr<HloInstruction> CloneWithOperands(const std::vector<HloInstruction*>& new_operands,
                                                   const std::string& new_name) const;

 private:
  friend class HloComputation;
  void RemoveUser(HloInstruction* user);
  void AddUser(HloInstruction* user);

  HloOpcode opcode_;
  std::string name_;
  Shape shape_;
  HloComputation* parent_ = nullptr;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloInstruction*> control_preds_;
  std::vector<HloInstruction*> control_succs_;
  std::vector<Attribute> attrs_;
  int64_t parameter_number_ = -1;
  std::unique_ptr<Literal> literal_;
  bool literal_elided_ = false;
  SourceLocation location_;
};

}  // namespace kiln::hlo
