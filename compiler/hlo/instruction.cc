#include "compiler/hlo/instruction.h"

#include <algorithm>

#include "compiler/hlo/computation.h"

namespace kiln::hlo {

std::string SourceLocation::ToString() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

HloInstruction::HloInstruction(HloOpcode opcode, std::string name, Shape shape)
    : opcode_(opcode), name_(std::move(name)), shape_(std::move(shape)) {}

void HloInstruction::AddUser(HloInstruction* user) {
  if (std::find(users_.begin(), users_.end(), user) == users_.end()) users_.push_back(user);
}

void HloInstruction::RemoveUser(HloInstruction* user) {
  // Only drop the user once it no longer uses this instruction at all.
  if (std::find(user->operands_.begin(), user->operands_.end(), this) != user->operands_.end())
    return;
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  operand->AddUser(this);
}

void HloInstruction::ReplaceOperand(int64_t i, HloInstruction* new_operand) {
  HloInstruction* old = operands_[i];
  operands_[i] = new_operand;
  old->RemoveUser(this);
  new_operand->AddUser(this);
}

void HloInstruction::RemoveAllOperands() {
  std::vector<HloInstruction*> old = std::move(operands_);
  operands_.clear();
  for (HloInstruction* op : old) op->RemoveUser(this);
}

namespace {

int64_t MemorySpace(const Shape& shape) {
  return shape.IsArray() && shape.has_layout() ? shape.layout()->memory_space : 0;
}

}  // namespace

void HloInstruction::ReplaceAllUsesWith(HloInstruction* other) {
  // `other` stands for this value from now on, so it keeps the value's
  // memory space (S(n), what buffer assignment colors by) when it has none
  // of its own: a pass that rebuilds a value from layout-free shapes must
  // not move it back to the default memory.
  if (int64_t space = MemorySpace(shape_); space != 0 && other->shape_.IsArray() && MemorySpace(other->shape_) == 0) {
    Layout layout = other->shape_.layout().value_or(Layout{});
    if (layout.minor_to_major.empty()) layout.minor_to_major = other->shape_.MinorToMajor();
    layout.memory_space = space;
    other->shape_.set_layout(std::move(layout));
  }
  std::vector<HloInstruction*> users = users_;
  for (HloInstruction* user : users) {
    if (user == other) continue;  // e.g. x -> f(x) replacing x by f(x)
    for (int64_t i = 0; i < user->operand_count(); ++i)
      if (user->operands_[i] == this) user->ReplaceOperand(i, other);
  }
  if (parent_ && parent_->root() == this) parent_->set_root(other);
}

void HloInstruction::AddControlDependencyTo(HloInstruction* successor) {
  if (std::find(control_succs_.begin(), control_succs_.end(), successor) != control_succs_.end())
    return;
  control_succs_.push_back(successor);
  successor->control_preds_.push_back(this);
}

void HloInstruction::DropAllControlDependencies() {
  for (HloInstruction* s : control_succs_) {
    auto& p = s->control_preds_;
    p.erase(std::remove(p.begin(), p.end(), this), p.end());
  }
  for (HloInstruction* p : control_preds_) {
    auto& s = p->control_succs_;
    s.erase(std::remove(s.begin(), s.end(), this), s.end());
  }
  control_succs_.clear();
  control_preds_.clear();
}

const Attribute* HloInstruction::FindAttribute(std::string_view name) const {
  for (const Attribute& a : attrs_)
    if (a.name == name) return &a;
  return nullptr;
}

void HloInstruction::SetAttribute(std::string name, AttrValue value) {
  for (Attribute& a : attrs_) {
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  }
  attrs_.push_back({std::move(name), std::move(value)});
}

void HloInstruction::RemoveAttribute(std::string_view name) {
  attrs_.erase(std::remove_if(attrs_.begin(), attrs_.end(),
                              [&](const Attribute& a) { return a.name == name; }),
               attrs_.end());
}

int64_t HloInstruction::GetInt(std::string_view name, int64_t default_value) const {
  const int64_t* v = GetAttribute<int64_t>(name);
  return v ? *v : default_value;
}

bool HloInstruction::GetBool(std::string_view name, bool default_value) const {
  const bool* v = GetAttribute<bool>(name);
  return v ? *v : default_value;
}

std::vector<int64_t> HloInstruction::GetInts(std::string_view name) const {
  const auto* v = GetAttribute<std::vector<int64_t>>(name);
  return v ? *v : std::vector<int64_t>{};
}

std::string HloInstruction::GetString(std::string_view name) const {
  if (const auto* e = GetAttribute<EnumAttr>(name)) return e->value;
  if (const auto* s = GetAttribute<StringAttr>(name)) return s->value;
  return "";
}

std::string HloInstruction::BackendConfig() const {
  if (const auto* raw = GetAttribute<RawAttr>("backend_config")) return raw->text;
  return GetString("backend_config");
}

DotDimensionNumbers HloInstruction::dot_dimension_numbers() const {
  return {GetInts("lhs_batch_dims"), GetInts("rhs_batch_dims"), GetInts("lhs_contracting_dims"),
          GetInts("rhs_contracting_dims")};
}

GatherDimensionNumbers HloInstruction::gather_dimension_numbers() const {
  GatherDimensionNumbers d;
  d.offset_dims = GetInts("offset_dims");
  d.collapsed_slice_dims = GetInts("collapsed_slice_dims");
  d.start_index_map = GetInts("start_index_map");
  d.operand_batching_dims = GetInts("operand_batching_dims");
  d.start_indices_batching_dims = GetInts("start_indices_batching_dims");
  d.index_vector_dim = GetInt("index_vector_dim", 0);
  return d;
}

ScatterDimensionNumbers HloInstruction::scatter_dimension_numbers() const {
  ScatterDimensionNumbers d;
  d.update_window_dims = GetInts("update_window_dims");
  d.inserted_window_dims = GetInts("inserted_window_dims");
  d.scatter_dims_to_operand_dims = GetInts("scatter_dims_to_operand_dims");
  d.input_batching_dims = GetInts("input_batching_dims");
  d.scatter_indices_batching_dims = GetInts("scatter_indices_batching_dims");
  d.index_vector_dim = GetInt("index_vector_dim", 0);
  return d;
}

std::optional<ComparisonDirection> HloInstruction::comparison_direction() const {
  std::string d = GetString("direction");
  if (d == "EQ") return ComparisonDirection::kEq;
  if (d == "NE") return ComparisonDirection::kNe;
  if (d == "GE") return ComparisonDirection::kGe;
  if (d == "GT") return ComparisonDirection::kGt;
  if (d == "LE") return ComparisonDirection::kLe;
  if (d == "LT") return ComparisonDirection::kLt;
  return std::nullopt;
}

ComparisonType HloInstruction::comparison_type() const {
  std::string t = GetString("type");
  if (t == "FLOAT") return ComparisonType::kFloat;
  if (t == "TOTALORDER") return ComparisonType::kTotalOrder;
  if (t == "SIGNED") return ComparisonType::kSigned;
  if (t == "UNSIGNED") return ComparisonType::kUnsigned;
  if (t == "PARTIALORDER") return ComparisonType::kPartialOrder;
  return ComparisonType::kDefault;
}

std::vector<HloComputation*> HloInstruction::called_computations() const {
  std::vector<HloComputation*> result;
  for (const Attribute& a : attrs_)
    if (const auto* refs = std::get_if<ComputationRefs>(&a.value))
      result.insert(result.end(), refs->computations.begin(), refs->computations.end());
  return result;
}

HloComputation* HloInstruction::called_computation(std::string_view name) const {
  const auto* refs = GetAttribute<ComputationRefs>(name);
  return refs && refs->computations.size() == 1 ? refs->computations[0] : nullptr;
}

std::vector<HloComputation*> HloInstruction::branch_computations() const {
  if (const auto* refs = GetAttribute<ComputationRefs>("branch_computations"))
    return refs->computations;
  std::vector<HloComputation*> result;
  if (HloComputation* t = called_computation("true_computation")) result.push_back(t);
  if (HloComputation* f = called_computation("false_computation")) result.push_back(f);
  return result;
}

void HloInstruction::RemapCalledComputations(
    const std::function<HloComputation*(HloComputation*)>& map) {
  for (Attribute& a : attrs_)
    if (auto* refs = std::get_if<ComputationRefs>(&a.value))
      for (HloComputation*& c : refs->computations) c = map(c);
}

std::string HloInstruction::DebugName() const {
  std::string s = "%" + name_;
  if (location_.valid()) s += " (" + location_.ToString() + ")";
  return s;
}

std::unique_ptr<HloInstruction> HloInstruction::CloneWithOperands(
    const std::vector<HloInstruction*>& new_operands, const std::string& new_name) const {
  auto clone = std::make_unique<HloInstruction>(opcode_, new_name, shape_);
  for (HloInstruction* op : new_operands) clone->AppendOperand(op);
  clone->attrs_ = attrs_;
  clone->parameter_number_ = parameter_number_;
  if (literal_) clone->literal_ = std::make_unique<Literal>(*literal_);
  clone->literal_elided_ = literal_elided_;
  clone->location_ = location_;
  return clone;
}

}  // namespace kiln::hlo
