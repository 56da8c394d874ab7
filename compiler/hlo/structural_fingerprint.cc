// StructuralFingerprint (structural_fingerprint.h): every field is written
// with its length in front, so that no two different computations can give
// the same bytes by shifting text from one field into the next.
#include "compiler/hlo/structural_fingerprint.h"

#include <cstring>
#include <map>
#include <unordered_map>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/printer.h"

namespace kiln::hlo {
namespace {

// Attributes that annotate an instruction without changing what it
// computes.
bool IsAnnotation(const std::string& attribute) { return attribute == "metadata"; }

class Fingerprinter {
 public:
  const std::string& Of(const HloComputation& computation) {
    auto it = done_.find(&computation);
    if (it != done_.end()) return it->second;
    std::string out;
    Computation(computation, out);
    return done_.emplace(&computation, std::move(out)).first->second;
  }

 private:
  static void Field(std::string_view bytes, std::string& out) {
    Int(static_cast<int64_t>(bytes.size()), out);
    out.append(bytes);
  }
  static void Int(int64_t v, std::string& out) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

  void Value(const AttrValue& value, std::string& out) {
    Int(static_cast<int64_t>(value.index()), out);
    if (const auto* refs = std::get_if<ComputationRefs>(&value)) {
      Int(static_cast<int64_t>(refs->computations.size()), out);
      for (const HloComputation* c : refs->computations) {
        Int(c != nullptr, out);
        if (c) Field(Of(*c), out);
      }
      return;
    }
    if (const auto* d = std::get_if<double>(&value)) {  // every bit: -0.0, NaN payloads
      int64_t bits;
      std::memcpy(&bits, d, sizeof bits);
      Int(bits, out);
      return;
    }
    Field(PrintAttributeValue(Attribute{"", value}), out);
  }

  void Computation(const HloComputation& computation, std::string& out) {
    std::vector<HloInstruction*> instructions = computation.instructions();
    std::unordered_map<const HloInstruction*, int64_t> position;
    for (size_t i = 0; i < instructions.size(); ++i) position[instructions[i]] = static_cast<int64_t>(i);
    auto ref = [&](const HloInstruction* inst) {
      auto it = position.find(inst);
      Int(it == position.end() ? -1 : it->second, out);
    };
    Int(static_cast<int64_t>(instructions.size()), out);
    ref(computation.root());
    for (const HloInstruction* inst : instructions) {
      Int(static_cast<int64_t>(inst->opcode()), out);
      Field(inst->shape().ToString(/*print_layout=*/true), out);
      Int(inst->parameter_number(), out);
      Int(inst->operand_count(), out);
      for (const HloInstruction* op : inst->operands()) ref(op);
      Int(static_cast<int64_t>(inst->control_predecessors().size()), out);
      for (const HloInstruction* pred : inst->control_predecessors()) ref(pred);
      int64_t attributes = 0;
      for (const Attribute& a : inst->attributes()) attributes += !IsAnnotation(a.name);
      Int(attributes, out);
      for (const Attribute& a : inst->attributes()) {
        if (IsAnnotation(a.name)) continue;
        Field(a.name, out);
        Value(a.value, out);
      }
      Int(inst->has_literal(), out);
      if (inst->has_literal()) {
        const Literal& lit = inst->literal();
        Int(inst->literal_elided(), out);
        Field(lit.shape().ToString(/*print_layout=*/true), out);
        Field(std::string_view(reinterpret_cast<const char*>(lit.raw()), lit.raw_size()), out);
      }
    }
  }

  std::map<const HloComputation*, std::string> done_;
};

}  // namespace

std::string StructuralFingerprint(const HloComputation& computation) {
  return Fingerprinter().Of(computation);
}

}  // namespace kiln::hlo
