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
  for (int64_t i = 1; !used_.insert(name).second; ++i) name = std::string(base) + "." + std::to_string(i);
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

Shape WithoutLayout(Shape shape) {
  shape.clear_layout();
  return shape;
}

}  // namespace kiln::passes
