// TriangularSolveUpcast: see triangular_solve_upcast.h.
#include "compiler/passes/triangular_solve_upcast.h"

#include <string>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsNarrowFloat(const Shape& s) {
  return s.IsArray() && (s.element_type() == ElementType::kF16 || s.element_type() == ElementType::kBF16);
}

}  // namespace

StatusOr<bool> TriangularSolveUpcast::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module,
      [](const HloInstruction& inst) {
        return inst.opcode() == HloOpcode::kTriangularSolve && inst.operand_count() == 2 && IsNarrowFloat(inst.shape()) &&
               IsNarrowFloat(inst.operand(0)->shape()) && IsNarrowFloat(inst.operand(1)->shape());
      },
      [](HloInstruction* solve, NameUniquer& names) -> StatusOr<HloInstruction*> {
        hlo::HloComputation& comp = *solve->parent();
        auto f32 = [](const Shape& s) { return Shape(ElementType::kF32, s.dims()); };
        std::vector<HloInstruction*> wide;
        for (HloInstruction* operand : solve->operands())
          wide.push_back(AddInstruction(comp, HloOpcode::kConvert, f32(operand->shape()), {operand},
                                        names.Get(solve->name() + ".f32")));
        HloInstruction* solved = AddInstruction(comp, HloOpcode::kTriangularSolve, f32(solve->shape()), wide,
                                                names.Get(solve->name() + ".solve"));
        for (const hlo::Attribute& attr : solve->attributes()) solved->SetAttribute(attr.name, attr.value);
        return AddInstruction(comp, HloOpcode::kConvert, Shape(solve->shape().element_type(), solve->shape().dims()),
                              {solved}, names.Get(solve->name() + ".narrow"));
      });
}

}  // namespace kiln::passes
