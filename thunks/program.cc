// Shape-leaf enumeration for signatures (see program.h).
#include "thunks/program.h"

namespace kiln::thunks {
namespace {

void CollectLeaves(const Shape& shape, ShapeIndex& prefix, std::vector<ShapeIndex>& out) {
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      prefix.push_back(i);
      CollectLeaves(shape.tuple_shape(i), prefix, out);
      prefix.pop_back();
    }
    return;
  }
  if (shape.IsArray()) out.push_back(prefix);
}

}  // namespace

std::vector<ShapeIndex> ArrayLeafIndices(const Shape& shape) {
  std::vector<ShapeIndex> out;
  ShapeIndex prefix;
  CollectLeaves(shape, prefix, out);
  return out;
}

}  // namespace kiln::thunks
