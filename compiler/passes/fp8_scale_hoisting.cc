// Fp8ScaleHoisting: see fp8_scale_hoisting.h.
#include "compiler/passes/fp8_scale_hoisting.h"

#include "compiler/passes/fp8_gemm.h"
#include "compiler/passes/hlo_builder.h"
#include "thunks/thunk.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// An f8 operand behind its widening and optional scale: `value` is the f8
// instruction, `scale` the scalar (of the widened type) or null.
struct ScaledF8 {
  HloInstruction* value = nullptr;
  HloInstruction* scale = nullptr;
  bool widened = false;  // behind a convert (else the dot reads the f8 value itself)
};

bool IsF8(const HloInstruction* v) { return thunks::IsFp8GemmOperandType(v->shape().element_type()); }

// convert(x_f8) to a float type.
HloInstruction* WidenedF8(HloInstruction* v) {
  if (v->opcode() != HloOpcode::kConvert || !IsFloat(v->shape().element_type()) || !IsF8(v->operand(0)))
    return nullptr;
  return v->operand(0);
}

// broadcast(s) of a scalar s of the broadcast's type.
HloInstruction* BroadcastScalar(HloInstruction* v) {
  if (v->opcode() != HloOpcode::kBroadcast || !v->operand(0)->shape().IsScalar() ||
      v->operand(0)->shape().element_type() != v->shape().element_type())
    return nullptr;
  return v->operand(0);
}

ScaledF8 Match(HloInstruction* operand) {
  if (IsF8(operand)) return {operand, nullptr, false};
  if (HloInstruction* x = WidenedF8(operand)) return {x, nullptr, true};
  if (operand->opcode() != HloOpcode::kMultiply) return {};
  for (int i = 0; i < 2; ++i) {
    HloInstruction* x = WidenedF8(operand->operand(i));
    HloInstruction* s = BroadcastScalar(operand->operand(1 - i));
    if (x && s) return {x, s, true};
  }
  return {};
}

class Hoister {
 public:
  Hoister(HloInstruction* dot, NameUniquer& names) : dot_(dot), comp_(*dot->parent()), names_(names) {}

  // The replacement of the dot, or null when it is not a scaled FP8 dot.
  HloInstruction* Build() {
    ScaledF8 lhs = Match(dot_->operand(0)), rhs = Match(dot_->operand(1));
    if (!lhs.value || !rhs.value || (!lhs.widened && !rhs.widened)) return nullptr;
    const Shape& out = dot_->shape();
    if (!IsFloat(out.element_type())) return nullptr;
    const bool scaled = lhs.scale || rhs.scale;
    const ElementType gemm_type = scaled ? ElementType::kF32 : out.element_type();
    if (!IsFp8GemmDot(lhs.value->shape(), rhs.value->shape(), dot_->dot_dimension_numbers(), gemm_type))
      return nullptr;
    HloInstruction* gemm = Add(HloOpcode::kDot, Shape(gemm_type, out.dims()), {lhs.value, rhs.value}, ".fp8");
    for (const char* attr : {"lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims",
                             "metadata"})
      if (const hlo::Attribute* a = dot_->FindAttribute(attr)) gemm->SetAttribute(attr, a->value);
    if (!scaled) return gemm;
    HloInstruction* factor = ScaleProduct(lhs.scale, rhs.scale);
    HloInstruction* splat = Add(HloOpcode::kBroadcast, Shape(ElementType::kF32, out.dims()), {factor}, ".scale_b");
    splat->SetAttribute("dimensions", std::vector<int64_t>{});
    HloInstruction* result =
        Add(HloOpcode::kMultiply, Shape(ElementType::kF32, out.dims()), {gemm, splat}, ".scaled");
    if (out.element_type() != ElementType::kF32)
      result = Add(HloOpcode::kConvert, Shape(out.element_type(), out.dims()), {result}, ".round");
    return result;
  }

 private:
  HloInstruction* Add(HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands,
                      const std::string& suffix) {
    HloInstruction* inst = AddInstruction(comp_, opcode, shape, operands, names_.Get(dot_->name() + suffix));
    inst->set_location(dot_->location());
    return inst;
  }

  // A scale as an f32 scalar.
  HloInstruction* AsF32(HloInstruction* scale) {
    if (scale->shape().element_type() == ElementType::kF32) return scale;
    return Add(HloOpcode::kConvert, Shape(ElementType::kF32, {}), {scale}, ".scale_f32");
  }

  // s_a * s_b in f32 (either may be absent, not both).
  HloInstruction* ScaleProduct(HloInstruction* a, HloInstruction* b) {
    if (!a) return AsF32(b);
    if (!b) return AsF32(a);
    return Add(HloOpcode::kMultiply, Shape(ElementType::kF32, {}), {AsF32(a), AsF32(b)}, ".scale");
  }

  HloInstruction* dot_;
  hlo::HloComputation& comp_;
  NameUniquer& names_;
};

}  // namespace

StatusOr<bool> Fp8ScaleHoisting::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module,
      [](const HloInstruction& inst) { return inst.opcode() == HloOpcode::kDot && inst.operand_count() == 2; },
      [](HloInstruction* dot, NameUniquer& names) -> StatusOr<HloInstruction*> {
        return Hoister(dot, names).Build();
      });
}

}  // namespace kiln::passes
