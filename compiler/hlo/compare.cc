// Structural comparison of two modules, used to check that printing and
// re-parsing (or cloning, or a pass that should be a no-op) preserves a
// module exactly. Instructions are compared by position, references
// (operands, control predecessors, called computations) by name, so the two
// modules may live at different addresses. The first difference is reported
// with enough context to find it: "computation %c instruction %i: ...".
#include "compiler/hlo/compare.h"

#include <cmath>

#include "compiler/hlo/printer.h"

namespace kiln::hlo {
namespace {

std::string Versus(const std::string& a, const std::string& b) { return a + " vs " + b; }

std::string RefName(const HloInstruction* inst) { return inst ? "%" + inst->name() : "<null>"; }
std::string RefName(const HloComputation* comp) { return comp ? "%" + comp->name() : "<null>"; }

std::string NameList(const std::vector<HloInstruction*>& insts) {
  std::string s = "{";
  for (size_t i = 0; i < insts.size(); ++i) {
    if (i) s += ", ";
    s += RefName(insts[i]);
  }
  return s + "}";
}

std::string ProgramShapeText(const std::optional<ProgramShape>& p) {
  if (!p) return "<none>";
  std::string s = "(";
  for (size_t i = 0; i < p->parameters.size(); ++i) {
    if (i) s += ", ";
    s += p->parameters[i].ToString(true);
  }
  return s + ")->" + p->result.ToString(true);
}

// ---------------------------------------------------------------------------
// Attributes
// ---------------------------------------------------------------------------

bool SameComputationRefs(const ComputationRefs& a, const ComputationRefs& b) {
  if (a.computations.size() != b.computations.size()) return false;
  for (size_t i = 0; i < a.computations.size(); ++i) {
    const HloComputation* x = a.computations[i];
    const HloComputation* y = b.computations[i];
    if ((x == nullptr) != (y == nullptr)) return false;
    if (x && x->name() != y->name()) return false;
  }
  return true;
}

// Same alternative and value; computations by name; doubles bitwise-equal
// in meaning (NaN equals NaN, so a NaN-valued attribute compares equal).
bool SameAttrValue(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<ComputationRefs>(&a))
    return SameComputationRefs(*x, std::get<ComputationRefs>(b));
  if (const auto* x = std::get_if<double>(&a)) {
    double y = std::get<double>(b);
    return *x == y ? std::signbit(*x) == std::signbit(y) : (std::isnan(*x) && std::isnan(y));
  }
  return a == b;
}

Status CompareAttributes(const HloInstruction& a, const HloInstruction& b) {
  const std::vector<Attribute>& x = a.attributes();
  const std::vector<Attribute>& y = b.attributes();
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (x[i].name != y[i].name)
      return Error("attribute " + std::to_string(i) + " differs: " + Versus(x[i].name, y[i].name));
    if (!SameAttrValue(x[i].value, y[i].value))
      return Error("attribute " + x[i].name + " differs: " +
                   Versus(PrintAttributeValue(x[i]), PrintAttributeValue(y[i])));
  }
  if (x.size() != y.size()) {
    const Attribute& extra = x.size() > y.size() ? x[y.size()] : y[x.size()];
    return Error("attribute count differs: " + Versus(std::to_string(x.size()), std::to_string(y.size())) +
                 " (first unmatched: " + extra.name + ")");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Instructions and computations
// ---------------------------------------------------------------------------

Status CompareLiterals(const HloInstruction& a, const HloInstruction& b) {
  if (a.literal_elided() != b.literal_elided())
    return Error(std::string("literal elided differs: ") + (a.literal_elided() ? "true" : "false") +
                 " vs " + (b.literal_elided() ? "true" : "false"));
  if (a.has_literal() != b.has_literal()) return Error("one instruction has no literal");
  if (!a.has_literal() || a.literal_elided()) return Status::Ok();
  if (a.literal() != b.literal())
    return Error("literal differs: " + Versus(a.literal().ToStringTruncated(16),
                                              b.literal().ToStringTruncated(16)));
  return Status::Ok();
}

std::vector<std::string> Names(const std::vector<HloInstruction*>& insts) {
  std::vector<std::string> names;
  for (const HloInstruction* i : insts) names.push_back(RefName(i));
  return names;
}

Status CompareInstructions(const HloInstruction& a, const HloInstruction& b) {
  if (a.opcode() != b.opcode())
    return Error("opcode differs: " +
                 Versus(std::string(OpcodeName(a.opcode())), std::string(OpcodeName(b.opcode()))));
  if (a.shape() != b.shape())
    return Error("shape differs: " + Versus(a.shape().ToString(true), b.shape().ToString(true)));
  if (Names(a.operands()) != Names(b.operands()))
    return Error("operands differ: " + Versus(NameList(a.operands()), NameList(b.operands())));
  KILN_RETURN_IF_ERROR(CompareAttributes(a, b));
  if (a.parameter_number() != b.parameter_number())
    return Error("parameter number differs: " + Versus(std::to_string(a.parameter_number()),
                                                       std::to_string(b.parameter_number())));
  KILN_RETURN_IF_ERROR(CompareLiterals(a, b));
  if (Names(a.control_predecessors()) != Names(b.control_predecessors()))
    return Error("control predecessors differ: " +
                 Versus(NameList(a.control_predecessors()), NameList(b.control_predecessors())));
  return Status::Ok();
}

Status CompareComputations(const HloComputation& a, const HloComputation& b) {
  std::vector<HloInstruction*> x = a.instructions();
  std::vector<HloInstruction*> y = b.instructions();
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (x[i]->name() != y[i]->name())
      return Error("instruction " + std::to_string(i) + " name differs: " +
                   Versus(RefName(x[i]), RefName(y[i])));
    KILN_RETURN_IF_ERROR(
        CompareInstructions(*x[i], *y[i]).WithContext("instruction " + RefName(x[i])));
  }
  if (x.size() != y.size())
    return Error("instruction count differs: " +
                 Versus(std::to_string(x.size()), std::to_string(y.size())));
  if (RefName(a.root()) != RefName(b.root()))
    return Error("root differs: " + Versus(RefName(a.root()), RefName(b.root())));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Module configuration
// ---------------------------------------------------------------------------

std::string AliasesText(const std::vector<InputOutputAlias>& aliases) {
  std::string s = "{";
  for (size_t i = 0; i < aliases.size(); ++i) {
    const InputOutputAlias& a = aliases[i];
    if (i) s += ", ";
    s += ShapeIndexToString(a.output_index) + ": (" + std::to_string(a.parameter_number) + ", " +
         ShapeIndexToString(a.parameter_index) + (a.must_alias ? ", must-alias)" : ", may-alias)");
  }
  return s + "}";
}

std::string DonorsText(const std::vector<BufferDonor>& donors) {
  std::string s = "{";
  for (size_t i = 0; i < donors.size(); ++i) {
    if (i) s += ", ";
    s += "(" + std::to_string(donors[i].parameter_number) + ", " +
         ShapeIndexToString(donors[i].parameter_index) + ")";
  }
  return s + "}";
}

std::string OtherAttributesText(const std::vector<std::pair<std::string, std::string>>& attrs) {
  std::string s = "{";
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (i) s += ", ";
    s += attrs[i].first + "=" + attrs[i].second;
  }
  return s + "}";
}

Status CompareConfig(const ModuleConfig& a, const ModuleConfig& b) {
  if (a.replica_count != b.replica_count)
    return Error("replica_count differs: " +
                 Versus(std::to_string(a.replica_count), std::to_string(b.replica_count)));
  if (a.num_partitions != b.num_partitions)
    return Error("num_partitions differs: " +
                 Versus(std::to_string(a.num_partitions), std::to_string(b.num_partitions)));
  if (a.is_scheduled != b.is_scheduled)
    return Error(std::string("is_scheduled differs: ") + (a.is_scheduled ? "true" : "false") +
                 " vs " + (b.is_scheduled ? "true" : "false"));
  if (a.entry_computation_layout != b.entry_computation_layout)
    return Error("entry_computation_layout differs: " +
                 Versus(ProgramShapeText(a.entry_computation_layout),
                        ProgramShapeText(b.entry_computation_layout)));
  if (a.input_output_alias != b.input_output_alias)
    return Error("input_output_alias differs: " +
                 Versus(AliasesText(a.input_output_alias), AliasesText(b.input_output_alias)));
  if (a.buffer_donors != b.buffer_donors)
    return Error("buffer_donor differs: " +
                 Versus(DonorsText(a.buffer_donors), DonorsText(b.buffer_donors)));
  if (a.other_attributes != b.other_attributes)
    return Error("header attributes differ: " + Versus(OtherAttributesText(a.other_attributes),
                                                       OtherAttributesText(b.other_attributes)));
  return Status::Ok();
}

}  // namespace

Status CompareModules(const HloModule& a, const HloModule& b) {
  if (a.name() != b.name()) return Error("module name differs: " + Versus(a.name(), b.name()));
  KILN_RETURN_IF_ERROR(CompareConfig(a.config(), b.config()));
  if (RefName(a.entry()) != RefName(b.entry()))
    return Error("entry computation differs: " + Versus(RefName(a.entry()), RefName(b.entry())));
  std::vector<HloComputation*> x = a.computations();
  std::vector<HloComputation*> y = b.computations();
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (x[i]->name() != y[i]->name())
      return Error("computation " + std::to_string(i) + " name differs: " +
                   Versus(RefName(x[i]), RefName(y[i])));
    KILN_RETURN_IF_ERROR(CompareComputations(*x[i], *y[i]).WithContext("computation " + RefName(x[i])));
  }
  if (x.size() != y.size())
    return Error("computation count differs: " +
                 Versus(std::to_string(x.size()), std::to_string(y.size())));
  if (a.trailing_sections() != b.trailing_sections())
    return Error("trailing sections differ (" + std::to_string(a.trailing_sections().size()) +
                 " vs " + std::to_string(b.trailing_sections().size()) + " bytes)");
  return Status::Ok();
}

}  // namespace kiln::hlo
