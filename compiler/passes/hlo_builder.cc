// NameUniquer and instruction creation helpers for passes.
#include "compiler/passes/hlo_builder.h"

#include <algorithm>

namespace kiln::passes {

NameUniquer::NameUniquer(const hlo::HloModule& module) {
  std::hash<std::string_view> hash;
  for (const hlo::HloComputation* c : module.computations()) {
    module_name_hashes_.push_back(hash(c->name()));
    for (const hlo::HloInstruction* inst : c->instructions()) module_name_hashes_.push_back(hash(inst->name()));
  }
  std::sort(module_name_hashes_.begin(), module_name_hashes_.end());
}

bool NameUniquer::Taken(const std::string& name) const {
  return std::binary_search(module_name_hashes_.begin(), module_name_hashes_.end(),
                            std::hash<std::string_view>()(name)) ||
         handed_out_.count(name);
}

std::string NameUniquer::Get(std::string_view base) {
  std::string name(base);
  if (!Taken(name)) {
    handed_out_.insert(name);
    return name;
  }
  // Resume after the last suffix handed out for this base, so asking for
  // the same base many times ("param_0") stays linear overall.
  int64_t& next = next_suffix_[name];
  do {
    name = std::string(base) + "." + std::to_string(++next);
  } while (Taken(name));
  handed_out_.insert(name);
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

hlo::HloInstruction* AddScalarConstant(hlo::HloComputation& computation, ElementType type, double value,
                                       std::string name) {
  Literal literal(Shape(type, {}));
  literal.SetF64(0, value);
  hlo::HloInstruction* c = AddInstruction(computation, hlo::HloOpcode::kConstant, Shape(type, {}), {}, std::move(name));
  c->set_literal(std::move(literal));
  return c;
}

hlo::HloInstruction* AddSplat(hlo::HloComputation& computation, const Shape& shape, double value,
                              NameUniquer& names, std::string_view base) {
  hlo::HloInstruction* scalar =
      AddScalarConstant(computation, shape.element_type(), value, names.Get(std::string(base) + ".constant"));
  hlo::HloInstruction* splat = AddInstruction(computation, hlo::HloOpcode::kBroadcast,
                                              Shape(shape.element_type(), shape.dims()), {scalar},
                                              names.Get(std::string(base) + ".broadcast"));
  splat->SetAttribute("dimensions", std::vector<int64_t>{});
  return splat;
}

hlo::HloComputation* AddBinaryComputation(hlo::HloModule& module, NameUniquer& names, hlo::HloOpcode opcode,
                                          ElementType type, std::string_view base) {
  auto comp = std::make_unique<hlo::HloComputation>(names.Get(base));
  Shape scalar(type, {});
  std::vector<hlo::HloInstruction*> params;
  for (int64_t i = 0; i < 2; ++i) {
    auto p = std::make_unique<hlo::HloInstruction>(hlo::HloOpcode::kParameter,
                                                   names.Get(std::string(base) + "_p"), scalar);
    p->set_parameter_number(i);
    params.push_back(comp->AddInstruction(std::move(p)));
  }
  comp->set_root(AddInstruction(*comp, opcode, scalar, params, names.Get(std::string(base) + "_r")));
  return module.AddComputation(std::move(comp));
}

StatusOr<bool> ExpandInstructions(hlo::HloModule& module, const InstructionMatcher& match,
                                  const InstructionExpander& expand) {
  bool changed = false;
  NameUniquer names(module);
  for (hlo::HloComputation* comp : module.computations()) {
    std::vector<hlo::HloInstruction*> matched;
    for (hlo::HloInstruction* inst : comp->instructions())
      if (match(*inst)) matched.push_back(inst);
    for (hlo::HloInstruction* inst : matched) {
      KILN_ASSIGN_OR_RETURN(hlo::HloInstruction * replacement, expand(inst, names));
      if (!replacement) continue;
      inst->ReplaceAllUsesWith(replacement);
      inst->DropAllControlDependencies();
      KILN_RETURN_IF_ERROR(comp->RemoveInstruction(inst));
      changed = true;
    }
  }
  return changed;
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
