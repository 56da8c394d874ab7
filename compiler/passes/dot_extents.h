// Dot extents: the sizes of a dot operand's batch, contracting and free
// parts, which the GEMM predicates (int8_gemm.h, fp8_gemm.h) check against
// the libraries' alignment rules.
#pragma once

#include <cstdint>
#include <vector>

#include "common/shape.h"

namespace kiln::passes {

// Product of `shape`'s dimensions `dims`.
int64_t DimensionsExtent(const Shape& shape, const std::vector<int64_t>& dims);

// Product of the dimensions that are neither batch nor contracting.
int64_t FreeExtent(const Shape& shape, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting);

}  // namespace kiln::passes
