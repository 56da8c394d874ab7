// Fp8Gemm: see fp8_gemm.h.
#include "compiler/passes/fp8_gemm.h"

#include "compiler/passes/dot_extents.h"
#include "thunks/thunk.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;

bool AlignedExtent(int64_t v) { return v > 0 && v % 16 == 0; }

}  // namespace

ElementType Fp8GemmOutputType(ElementType out) {
  return out == ElementType::kBF16 || out == ElementType::kF16 ? out : ElementType::kF32;
}

bool IsFp8GemmDot(const Shape& ls, const Shape& rs, const hlo::DotDimensionNumbers& dn, ElementType out) {
  const ElementType lt = ls.element_type(), rt = rs.element_type();
  if (!thunks::IsFp8GemmOperandType(lt) || !thunks::IsFp8GemmOperandType(rt)) return false;
  if (lt == ElementType::kF8E5M2 && rt == ElementType::kF8E5M2) return false;  // no e5m2 x e5m2 kernels
  if (!IsFloat(out)) return false;
  return AlignedExtent(DimensionsExtent(ls, dn.lhs_contracting)) &&
         AlignedExtent(FreeExtent(rs, dn.rhs_batch, dn.rhs_contracting)) &&
         FreeExtent(ls, dn.lhs_batch, dn.lhs_contracting) > 0;
}

bool IsFp8GemmDot(const HloInstruction& dot) {
  if (dot.opcode() != hlo::HloOpcode::kDot || dot.operand_count() != 2 || !dot.shape().IsArray()) return false;
  return IsFp8GemmDot(dot.operand(0)->shape(), dot.operand(1)->shape(), dot.dot_dimension_numbers(),
                      dot.shape().element_type());
}

}  // namespace kiln::passes
