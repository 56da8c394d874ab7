// Int8Gemm: see int8_gemm.h.
#include "compiler/passes/int8_gemm.h"

#include <limits>

#include "compiler/passes/dot_extents.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;

bool ImmaExtent(int64_t v) { return v > 0 && v % 4 == 0 && v <= std::numeric_limits<int>::max(); }

}  // namespace

bool IsInt8GemmDot(const HloInstruction& dot) {
  if (dot.opcode() != hlo::HloOpcode::kDot || dot.operand_count() != 2 || !dot.shape().IsArray()) return false;
  const Shape& ls = dot.operand(0)->shape();
  const Shape& rs = dot.operand(1)->shape();
  if (ls.element_type() != ElementType::kS8 || rs.element_type() != ElementType::kS8 ||
      dot.shape().element_type() != ElementType::kS32)
    return false;
  const hlo::DotDimensionNumbers dn = dot.dot_dimension_numbers();
  const int64_t m = FreeExtent(ls, dn.lhs_batch, dn.lhs_contracting);
  return ImmaExtent(DimensionsExtent(ls, dn.lhs_contracting)) &&
         ImmaExtent(FreeExtent(rs, dn.rhs_batch, dn.rhs_contracting)) && m > 0 && m <= std::numeric_limits<int>::max();
}

}  // namespace kiln::passes
