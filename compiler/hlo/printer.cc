// Printer: canonical HLO text in XLA's format (HloModule::ToString,
// HloComputation::ToString, HloInstruction::ToString), such that
// ParseHloModule(PrintModule(m)) is structurally identical to m and printing
// is idempotent.
//
// Canonical choices: operands are written as bare "%name" (no operand
// shapes), attributes in their stored order with control-predecessors last,
// computations in module order, instructions in stored order (the schedule of
// a scheduled module), header fields in XLA's order. Constants are written by
// Literal::ToString(), which keeps every bit pattern that HLO text can
// express (-nan, NaN payloads, narrow-float values) through a round trip.
#include "compiler/hlo/printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/float_formats.h"

namespace kiln::hlo {
namespace {

// ---------------------------------------------------------------------------
// Literals
// ---------------------------------------------------------------------------

// XLA writes small constants even when large ones are elided.
constexpr int64_t kMaxElementsOfSmallConstant = 10;

std::string ConstantText(const HloInstruction& inst, const PrintOptions& options) {
  if (!inst.has_literal() || inst.literal_elided()) return "{...}";
  const Literal& lit = inst.literal();
  bool small = lit.shape().IsArray() && lit.shape().ElementCount() <= kMaxElementsOfSmallConstant;
  if (!options.print_large_constants && !small) return "{...}";
  return lit.ToString();
}

// ---------------------------------------------------------------------------
// Attribute values
// ---------------------------------------------------------------------------

// Shortest round-trip decimal, always recognisable as floating point (a
// trailing ".0" keeps 1.0 from reading back as the integer 1).
std::string FormatDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  std::string s = FormatFloat(ElementType::kF64, value);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

// C-style escaping of a quoted string: \" \\ \n \t \r and octal \ooo for
// other control bytes; bytes >= 0x80 (UTF-8) pass through unchanged.
std::string QuoteString(const std::string& value) {
  std::string s = "\"";
  for (unsigned char c : value) {
    switch (c) {
      case '"': s += "\\\""; break;
      case '\\': s += "\\\\"; break;
      case '\n': s += "\\n"; break;
      case '\t': s += "\\t"; break;
      case '\r': s += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\%03o", c);
          s += buf;
        } else {
          s += static_cast<char>(c);
        }
    }
  }
  return s + "\"";
}

std::string ComputationName(const HloComputation* c) {
  return c ? "%" + c->name() : std::string("%<null>");
}

// Attributes that XLA always writes as a braced list, even with one entry.
bool IsComputationListAttribute(const std::string& name) {
  return name == "branch_computations" || name == "called_computations";
}

std::string FormatComputationRefs(const std::string& name, const ComputationRefs& refs) {
  if (refs.computations.size() == 1 && !IsComputationListAttribute(name))
    return ComputationName(refs.computations[0]);
  std::string s = "{";
  for (size_t i = 0; i < refs.computations.size(); ++i) {
    if (i) s += ", ";
    s += ComputationName(refs.computations[i]);
  }
  return s + "}";
}

std::string FormatIntListList(const IntListList& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.lists.size(); ++i) {
    if (i) s += ",";
    s += IntListToString(v.lists[i]);
  }
  return s + "}";
}

struct AttrValuePrinter {
  const std::string& name;
  std::string operator()(int64_t v) const { return std::to_string(v); }
  std::string operator()(double v) const { return FormatDouble(v); }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(const std::vector<int64_t>& v) const { return IntListToString(v); }
  std::string operator()(const std::vector<SliceDim>& v) const { return SliceToString(v); }
  std::string operator()(const Window& v) const { return WindowToString(v); }
  std::string operator()(const ConvDimensionNumbers& v) const {
    return ConvDimensionNumbersToString(v);
  }
  std::string operator()(const PaddingConfig& v) const { return PaddingConfigToString(v); }
  std::string operator()(const ReplicaGroups& v) const { return ReplicaGroupsToString(v); }
  std::string operator()(const ComputationRefs& v) const { return FormatComputationRefs(name, v); }
  std::string operator()(const RawAttr& v) const { return v.text; }
  std::string operator()(const StringAttr& v) const { return QuoteString(v.value); }
  std::string operator()(const EnumAttr& v) const { return v.value; }
  std::string operator()(const IntListList& v) const { return FormatIntListList(v); }
};

// ---------------------------------------------------------------------------
// Instructions and computations
// ---------------------------------------------------------------------------

std::string InstructionRef(const HloInstruction* inst) {
  return inst ? "%" + inst->name() : std::string("%<null>");
}

std::string OperandText(const HloInstruction& inst, const PrintOptions& options) {
  switch (inst.opcode()) {
    case HloOpcode::kParameter: return std::to_string(inst.parameter_number());
    case HloOpcode::kConstant: return ConstantText(inst, options);
    default: break;
  }
  std::string s;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (i) s += ", ";
    s += InstructionRef(inst.operand(i));
  }
  return s;
}

std::string AttributesText(const HloInstruction& inst, const PrintOptions& options) {
  std::string s;
  for (const Attribute& attr : inst.attributes()) {
    if (!options.print_metadata && attr.name == "metadata") continue;
    s += ", " + attr.name + "=" + PrintAttributeValue(attr);
  }
  if (!inst.control_predecessors().empty()) {
    s += ", control-predecessors={";
    for (size_t i = 0; i < inst.control_predecessors().size(); ++i) {
      if (i) s += ", ";
      s += InstructionRef(inst.control_predecessors()[i]);
    }
    s += "}";
  }
  return s;
}

// "(p.0: f32[], p.1: f32[]) -> f32[]". Like XLA (ShapeUtil::HumanString), the
// signature never shows layouts: the instructions carry them.
std::string SignatureText(const HloComputation& computation) {
  std::string s = "(";
  bool first = true;
  for (const HloInstruction* param : computation.parameters()) {
    if (param == nullptr) continue;  // a gap while building; nothing to print
    if (!first) s += ", ";
    first = false;
    s += param->name() + ": " + param->shape().ToString(false);
  }
  s += ") -> ";
  s += computation.root() ? computation.root()->shape().ToString(false) : std::string("()");
  return s;
}

// ---------------------------------------------------------------------------
// Module header
// ---------------------------------------------------------------------------

std::string AliasText(const std::vector<InputOutputAlias>& aliases) {
  std::string s = "{ ";
  for (size_t i = 0; i < aliases.size(); ++i) {
    const InputOutputAlias& a = aliases[i];
    if (i) s += ", ";
    s += ShapeIndexToString(a.output_index) + ": (" + std::to_string(a.parameter_number) + ", " +
         ShapeIndexToString(a.parameter_index) + ", " + (a.must_alias ? "must-alias" : "may-alias") +
         ")";
  }
  return s + " }";
}

std::string BufferDonorText(const std::vector<BufferDonor>& donors) {
  std::string s = "{ ";
  for (size_t i = 0; i < donors.size(); ++i) {
    if (i) s += ", ";
    s += "(" + std::to_string(donors[i].parameter_number) + ", " +
         ShapeIndexToString(donors[i].parameter_index) + ")";
  }
  return s + " }";
}

// entry_computation_layout always carries layouts: it exists to state them.
std::string ProgramShapeText(const ProgramShape& program) {
  std::string s = "{(";
  for (size_t i = 0; i < program.parameters.size(); ++i) {
    if (i) s += ", ";
    s += program.parameters[i].ToString(true);
  }
  return s + ")->" + program.result.ToString(true) + "}";
}

// XLA's order: is_scheduled, input_output_alias, buffer_donor,
// entry_computation_layout, the remaining options, replica_count,
// num_partitions, frontend_attributes.
std::string HeaderText(const HloModule& module) {
  const ModuleConfig& config = module.config();
  std::string s = "HloModule " + module.name();
  if (config.is_scheduled) s += ", is_scheduled=true";
  if (!config.input_output_alias.empty())
    s += ", input_output_alias=" + AliasText(config.input_output_alias);
  if (!config.buffer_donors.empty()) s += ", buffer_donor=" + BufferDonorText(config.buffer_donors);
  if (config.entry_computation_layout)
    s += ", entry_computation_layout=" + ProgramShapeText(*config.entry_computation_layout);
  for (const auto& [name, text] : config.other_attributes)
    if (name != "frontend_attributes") s += ", " + name + "=" + text;
  if (config.replica_count != 1) s += ", replica_count=" + std::to_string(config.replica_count);
  if (config.num_partitions != 1) s += ", num_partitions=" + std::to_string(config.num_partitions);
  for (const auto& [name, text] : config.other_attributes)
    if (name == "frontend_attributes") s += ", " + name + "=" + text;
  return s;
}

}  // namespace

std::string PrintAttributeValue(const Attribute& attribute) {
  return std::visit(AttrValuePrinter{attribute.name}, attribute.value);
}

std::string PrintInstruction(const HloInstruction& inst, const PrintOptions& options) {
  return "%" + inst.name() + " = " + inst.shape().ToString(options.print_layouts) + " " +
         std::string(OpcodeName(inst.opcode())) + "(" + OperandText(inst, options) + ")" +
         AttributesText(inst, options);
}

std::string PrintComputation(const HloComputation& computation, const PrintOptions& options) {
  std::string s;
  const HloModule* module = computation.parent();
  if (module && module->entry() == &computation) s += "ENTRY ";
  s += "%" + computation.name() + " " + SignatureText(computation) + " {\n";
  for (const HloInstruction* inst : computation.instructions()) {
    s += inst == computation.root() ? "  ROOT " : "  ";
    s += PrintInstruction(*inst, options);
    s += "\n";
  }
  return s + "}\n";
}

// Layout: header, blank line, the verbatim FileNames/.../StackFrames
// sections (where XLA writes them) and a blank line, then the computations
// separated by blank lines.
std::string PrintModule(const HloModule& module, const PrintOptions& options) {
  std::string s = HeaderText(module) + "\n\n";
  const std::string& sections = module.trailing_sections();
  if (!sections.empty()) {
    s += sections;
    if (sections.back() != '\n') s += "\n";
    s += "\n";
  }
  std::vector<HloComputation*> computations = module.computations();
  for (size_t i = 0; i < computations.size(); ++i) {
    if (i) s += "\n";
    s += PrintComputation(*computations[i], options);
  }
  return s;
}

}  // namespace kiln::hlo
