// MapInliner: see map_inliner.h.
#include "compiler/passes/map_inliner.h"

#include <unordered_map>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// Whether every instruction of `f` can be applied to whole arrays.
bool IsElementwiseComputation(const hlo::HloComputation& f, int64_t operand_count) {
  if (f.parameter_count() != operand_count || !f.root()) return false;
  for (const HloInstruction* inst : f.instructions()) {
    if (!inst->shape().IsArray() || inst->shape().rank() != 0) return false;
    if (inst->opcode() == HloOpcode::kParameter || inst->opcode() == HloOpcode::kConstant) continue;
    if (!hlo::IsElementwise(inst->opcode()) || !inst->called_computations().empty()) return false;
  }
  return true;
}

Shape WithDims(const Shape& scalar, const std::vector<int64_t>& dims) {
  return Shape(scalar.element_type(), dims);
}

// Clones f's instructions at the map's dimensions in front of `map`.
HloInstruction* InlineMap(HloInstruction* map, NameUniquer& names) {
  const hlo::HloComputation& f = *map->to_apply();
  hlo::HloComputation& comp = *map->parent();
  const std::vector<int64_t> dims = map->shape().dims();
  std::unordered_map<const HloInstruction*, HloInstruction*> clones;
  for (int64_t i = 0; i < f.parameter_count(); ++i) clones[f.parameter(i)] = map->operand(i);
  for (const HloInstruction* inst : f.PostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    if (inst->opcode() == HloOpcode::kConstant) {
      HloInstruction* scalar = comp.AddInstruction(inst->CloneWithOperands({}, names.Get(inst->name())));
      HloInstruction* broadcast = AddInstruction(comp, HloOpcode::kBroadcast, WithDims(inst->shape(), dims),
                                                 {scalar}, names.Get(inst->name() + ".broadcast"));
      broadcast->SetAttribute("dimensions", std::vector<int64_t>{});
      clones[inst] = broadcast;
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* op : inst->operands()) operands.push_back(clones.at(op));
    std::unique_ptr<HloInstruction> clone = inst->CloneWithOperands(operands, names.Get(inst->name()));
    clone->mutable_shape() = WithDims(inst->shape(), dims);
    clones[inst] = comp.AddInstruction(std::move(clone));
  }
  return clones.at(f.root());
}

}  // namespace

StatusOr<bool> MapInliner::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module,
      [](const HloInstruction& inst) {
        return inst.opcode() == HloOpcode::kMap && inst.to_apply() && inst.shape().IsArray() &&
               IsElementwiseComputation(*inst.to_apply(), inst.operand_count());
      },
      [](HloInstruction* map, NameUniquer& names) -> StatusOr<HloInstruction*> { return InlineMap(map, names); });
}

}  // namespace kiln::passes
