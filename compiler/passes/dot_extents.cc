// Dot extents: see dot_extents.h.
#include "compiler/passes/dot_extents.h"

#include <algorithm>

namespace kiln::passes {

int64_t DimensionsExtent(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape.dim(d);
  return p;
}

int64_t FreeExtent(const Shape& shape, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
  int64_t p = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    bool bound = std::find(batch.begin(), batch.end(), d) != batch.end() ||
                 std::find(contracting.begin(), contracting.end(), d) != contracting.end();
    if (!bound) p *= shape.dim(d);
  }
  return p;
}

}  // namespace kiln::passes
