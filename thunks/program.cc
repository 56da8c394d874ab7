// Shape-leaf enumeration and the caller's view of signatures (see program.h).
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

namespace {

int64_t SizeLeafCount(const Signature& sig, bool of_result) {
  int64_t n = 0;
  for (const DynamicDimension& d : sig.dynamic_dimensions) n += d.of_result == of_result;
  return n;
}

}  // namespace

int64_t CallerParameterCount(const Signature& sig) {
  return static_cast<int64_t>(sig.parameters.size()) - SizeLeafCount(sig, false);
}

int64_t CallerParameterLeafCount(const Signature& sig) {
  return static_cast<int64_t>(sig.parameter_leaves.size()) - SizeLeafCount(sig, false);
}

int64_t CallerResultLeafCount(const Signature& sig) {
  return static_cast<int64_t>(sig.result_leaves.size()) - SizeLeafCount(sig, true);
}

const Shape& CallerResultShape(const Signature& sig) {
  return SizeLeafCount(sig, true) > 0 ? sig.result.tuple_shape(0) : sig.result;
}

}  // namespace kiln::thunks
