// Cse: hash-based common subexpression elimination, one post-order walk per
// computation.
#include "compiler/passes/cse.h"

#include <functional>
#include <unordered_map>
#include <vector>

#include "compiler/passes/side_effects.h"

namespace kiln::passes {
namespace {

// Metadata (source op names and lines) does not change what an instruction
// computes; every other attribute, even one kiln does not interpret, might.
bool IgnoredAttribute(const hlo::Attribute& attr) { return attr.name == "metadata"; }

bool SameAttributes(const hlo::HloInstruction& a, const hlo::HloInstruction& b) {
  auto next = [](const std::vector<hlo::Attribute>& attrs, size_t i) {
    while (i < attrs.size() && IgnoredAttribute(attrs[i])) ++i;
    return i;
  };
  const auto& x = a.attributes();
  const auto& y = b.attributes();
  size_t i = next(x, 0), j = next(y, 0);
  for (; i < x.size() && j < y.size(); i = next(x, i + 1), j = next(y, j + 1))
    if (x[i].name != y[j].name || !(x[i].value == y[j].value)) return false;
  return i == x.size() && j == y.size();
}

bool Equivalent(const hlo::HloInstruction& a, const hlo::HloInstruction& b) {
  if (a.opcode() != b.opcode() || !(a.shape() == b.shape()) || a.operands() != b.operands())
    return false;
  if (a.opcode() == hlo::HloOpcode::kConstant &&
      (!a.has_literal() || !b.has_literal() || a.literal() != b.literal()))
    return false;
  return SameAttributes(a, b);
}

void HashCombine(size_t& seed, size_t value) { seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2); }

// Hashes what Equivalent compares cheaply: opcode, element type, dimensions,
// operand identities, and for constants the literal's bytes.
size_t Hash(const hlo::HloInstruction& inst) {
  size_t h = static_cast<size_t>(inst.opcode());
  HashCombine(h, static_cast<size_t>(inst.shape().element_type()));
  if (inst.shape().IsArray())
    for (int64_t d : inst.shape().dims()) HashCombine(h, static_cast<size_t>(d));
  for (const hlo::HloInstruction* op : inst.operands()) HashCombine(h, std::hash<const void*>()(op));
  if (inst.opcode() == hlo::HloOpcode::kConstant && inst.has_literal()) {
    const Literal& lit = inst.literal();
    HashCombine(h, std::hash<std::string_view>()(
                       std::string_view(reinterpret_cast<const char*>(lit.raw()), lit.raw_size())));
  }
  return h;
}

bool Mergeable(const hlo::HloInstruction& inst, SideEffectAnalysis& effects) {
  if (!inst.control_predecessors().empty() || !inst.control_successors().empty()) return false;
  // An elided constant's data is unknown: two of them need not be equal.
  if (inst.opcode() == hlo::HloOpcode::kConstant && (!inst.has_literal() || inst.literal_elided()))
    return false;
  return !effects.HasSideEffect(inst);
}

StatusOr<bool> RunOnComputation(hlo::HloComputation& comp, SideEffectAnalysis& effects) {
  std::unordered_map<size_t, std::vector<hlo::HloInstruction*>> seen;
  std::vector<hlo::HloInstruction*> duplicates;
  for (hlo::HloInstruction* inst : comp.PostOrder()) {
    if (!Mergeable(*inst, effects)) continue;
    std::vector<hlo::HloInstruction*>& bucket = seen[Hash(*inst)];
    hlo::HloInstruction* kept = nullptr;
    for (hlo::HloInstruction* candidate : bucket)
      if (Equivalent(*candidate, *inst)) {
        kept = candidate;
        break;
      }
    if (!kept) {
      bucket.push_back(inst);
      continue;
    }
    // Users come later in post-order, so they are hashed with `kept` as
    // their operand and merge in turn.
    inst->ReplaceAllUsesWith(kept);
    duplicates.push_back(inst);
  }
  for (hlo::HloInstruction* dup : duplicates) KILN_RETURN_IF_ERROR(comp.RemoveInstruction(dup));
  return !duplicates.empty();
}

}  // namespace

StatusOr<bool> Cse::Run(hlo::HloModule& module) {
  bool changed = false;
  SideEffectAnalysis effects;
  for (hlo::HloComputation* comp : module.computations()) {
    KILN_ASSIGN_OR_RETURN(bool c, RunOnComputation(*comp, effects));
    changed |= c;
  }
  return changed;
}

}  // namespace kiln::passes
