// Int8Gemm: see int8_gemm.h.
#include "compiler/passes/int8_gemm.h"

#include <algorithm>
#include <limits>

namespace kiln::passes {
namespace {

using hlo::HloInstruction;

// Product of `shape`'s dimensions `dims`.
int64_t Extent(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape.dim(d);
  return p;
}

// Product of the dimensions that are neither batch nor contracting.
int64_t FreeExtent(const Shape& shape, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
  int64_t p = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    bool bound = std::find(batch.begin(), batch.end(), d) != batch.end() ||
                 std::find(contracting.begin(), contracting.end(), d) != contracting.end();
    if (!bound) p *= shape.dim(d);
  }
  return p;
}

// A positive multiple of 4 that cuBLAS' int arguments can hold.
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
  return ImmaExtent(Extent(ls, dn.lhs_contracting)) && ImmaExtent(FreeExtent(rs, dn.rhs_batch, dn.rhs_contracting)) &&
         m > 0 && m <= std::numeric_limits<int>::max();
}

}  // namespace kiln::passes
