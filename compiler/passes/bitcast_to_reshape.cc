// BitcastToReshape: logical reshapes for bitcasts between row-major shapes.
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"

namespace kiln::passes {

bool HasRowMajorLayout(const Shape& shape) {
  if (!shape.IsArray()) return false;
  if (!shape.has_layout()) return true;
  const Layout& layout = *shape.layout();
  if (!layout.tiles.empty()) return false;
  std::vector<int64_t> m2m = shape.MinorToMajor();
  for (size_t i = 0; i < m2m.size(); ++i)
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  return true;
}

StatusOr<bool> BitcastToReshape::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  for (hlo::HloComputation* comp : module.computations()) {
    for (hlo::HloInstruction* inst : comp->PostOrder()) {
      if (inst->opcode() != hlo::HloOpcode::kBitcast) continue;
      const Shape& in = inst->operand(0)->shape();
      const Shape& out = inst->shape();
      if (!in.IsArray() || !out.IsArray() || in.element_type() != out.element_type())
        return Error(inst->DebugName() + ": bitcast from " + in.ToString() + " to " + out.ToString() +
                     " is not a reshape; kiln supports only bitcasts that keep the element type");
      if (!HasRowMajorLayout(in) || !HasRowMajorLayout(out))
        return Error(inst->DebugName() + ": bitcast from " + in.ToString() + " to " + out.ToString() +
                     " depends on a non-row-major layout, which kiln does not support yet");
      hlo::HloInstruction* reshape = AddInstruction(*comp, hlo::HloOpcode::kReshape, out, {inst->operand(0)},
                                                    names.Get(inst->name() + ".reshape"));
      reshape->set_location(inst->location());
      inst->ReplaceAllUsesWith(reshape);
      KILN_RETURN_IF_ERROR(comp->RemoveInstruction(inst));
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
