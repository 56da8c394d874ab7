// ComplexDotExpander: see complex_dot_expander.h.
#include "compiler/passes/complex_dot_expander.h"

#include <memory>
#include <string>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsComplexDot(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kDot || inst.operand_count() != 2 || !inst.shape().IsArray()) return false;
  ElementType t = inst.shape().element_type();
  return IsComplex(t) && inst.operand(0)->shape().element_type() == t && inst.operand(1)->shape().element_type() == t;
}

StatusOr<HloInstruction*> Expand(HloInstruction* dot, NameUniquer& names) {
  hlo::HloComputation& comp = *dot->parent();
  const ElementType part = ComplexComponentType(dot->shape().element_type());
  auto take = [&](HloOpcode opcode, HloInstruction* v, const char* suffix) {
    return AddInstruction(comp, opcode, Shape(part, v->shape().dims()), {v}, names.Get(v->name() + suffix));
  };
  HloInstruction* a_re = take(HloOpcode::kReal, dot->operand(0), ".re");
  HloInstruction* a_im = take(HloOpcode::kImag, dot->operand(0), ".im");
  HloInstruction* b_re = take(HloOpcode::kReal, dot->operand(1), ".re");
  HloInstruction* b_im = take(HloOpcode::kImag, dot->operand(1), ".im");
  const Shape part_shape(part, dot->shape().dims());
  auto real_dot = [&](HloInstruction* a, HloInstruction* b, const char* suffix) {
    std::unique_ptr<HloInstruction> clone = dot->CloneWithOperands({a, b}, names.Get(dot->name() + suffix));
    clone->mutable_shape() = part_shape;
    return comp.AddInstruction(std::move(clone));
  };
  HloInstruction* re = AddInstruction(comp, HloOpcode::kSubtract, part_shape,
                                      {real_dot(a_re, b_re, ".rr"), real_dot(a_im, b_im, ".ii")},
                                      names.Get(dot->name() + ".re"));
  HloInstruction* im = AddInstruction(comp, HloOpcode::kAdd, part_shape,
                                      {real_dot(a_re, b_im, ".ri"), real_dot(a_im, b_re, ".ir")},
                                      names.Get(dot->name() + ".im"));
  return AddInstruction(comp, HloOpcode::kComplex, WithoutLayout(dot->shape()), {re, im}, names.Get(dot->name()));
}

}  // namespace

StatusOr<bool> ComplexDotExpander::Run(hlo::HloModule& module) {
  return ExpandInstructions(module, IsComplexDot, Expand);
}

}  // namespace kiln::passes
