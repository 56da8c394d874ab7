// NameUniquer and instruction creation helpers for passes.
#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {

NameUniquer::NameUniquer(const hlo::HloModule& module) {
  for (const hlo::HloComputation* c : module.computations()) {
    used_.insert(c->name());
    for (const hlo::HloInstruction* inst : c->instructions()) used_.insert(inst->name());
  }
}

std::string NameUniquer::Get(std::string_view base) {
  std::string name(base);
  if (used_.insert(name).second) return name;
  // Resume after the last suffix handed out for this base, so asking for
  // the same base many times ("param_0") stays linear overall.
  int64_t& next = next_suffix_[name];
  do {
    name = std::string(base) + "." + std::to_string(++next);
  } while (!used_.insert(name).second);
  return name;
}

hlo::HloInstruction* AddInstruction(hlo::HloComputation& computation, hlo::HloOpcode opcode,
                                    const Shape& shape,
                                    const std::vector<hlo::HloInstruction*>& operands,
                                    std::string name) {
  auto inst = std::make_unique<hlo::HloInstruction>(opcode, std::move(name), shape);
  for (hlo::HloInstruction* operand : operands) inst->AppendOperand(operand);
  return computation.AddInstruction(std::move(inst));
}

Shape WithMemorySpaceOf(Shape shape, const Shape& like) {
  int64_t space = like.IsArray() && like.has_layout() ? like.layout()->memory_space : 0;
  if (space == 0 || !shape.IsArray()) return shape;
  Layout layout;
  layout.minor_to_major = shape.MinorToMajor();
  layout.memory_space = space;
  shape.set_layout(std::move(layout));
  return shape;
}

Shape WithoutLayout(Shape shape) {
  shape.clear_layout();
  return shape;
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

}  // namespace kiln::passes
