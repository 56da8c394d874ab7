// Literal <-> runtime::Buffer; see buffer_literal.h.
#include "tools/common/buffer_literal.h"

#include <cstring>

namespace kiln::tools {
namespace {

Status CheckLayout(const Shape& shape) {
  if (shape.has_layout() && !shape.layout()->tiles.empty())
    return Error("tiled layout " + shape.ToString() + " is not supported");
  return Status::Ok();
}

bool IsDefaultLayout(const Shape& shape) {
  std::vector<int64_t> m2m = shape.MinorToMajor();
  for (size_t i = 0; i < m2m.size(); ++i)
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  return true;
}

// Element offset of each logical (row-major) element in memory, for a
// non-default layout: dimension minor_to_major[0] varies fastest.
std::vector<int64_t> PhysicalOffsets(const Shape& shape) {
  const std::vector<int64_t>& dims = shape.dims();
  std::vector<int64_t> m2m = shape.MinorToMajor();
  std::vector<int64_t> stride(dims.size(), 0);
  int64_t s = 1;
  for (int64_t d : m2m) {
    stride[d] = s;
    s *= dims[d];
  }
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(shape.ElementCount()));
  std::vector<int64_t> index(dims.size(), 0);
  if (shape.ElementCount() == 0) return offsets;
  do {
    int64_t offset = 0;
    for (size_t i = 0; i < dims.size(); ++i) offset += index[i] * stride[i];
    offsets.push_back(offset);
  } while (NextIndex(dims, index));
  return offsets;
}

}  // namespace

StatusOr<runtime::Buffer> LiteralToBuffer(const Literal& literal, const Shape& declared) {
  // A bounded dynamic dimension takes the value's own extent.
  const Shape shape = declared.is_dynamic() && FitsDeclaredShape(literal.shape(), declared)
                          ? Shape(declared.element_type(), literal.shape().dims())
                          : declared;
  if (!literal.shape().IsArray() || !literal.shape().Compatible(shape))
    return Error("value " + literal.shape().ToString(false) + " does not match the expected " +
                 shape.ToString(false));
  KILN_RETURN_IF_ERROR(CheckLayout(shape));
  KILN_ASSIGN_OR_RETURN(runtime::Buffer buffer, runtime::Buffer::Allocate(shape));
  size_t bytes = static_cast<size_t>(shape.ByteSize());
  if (literal.raw_size() < bytes) return Error("value holds fewer bytes than its shape");
  if (IsDefaultLayout(shape)) {
    if (bytes) std::memcpy(buffer.data(), literal.raw(), bytes);
    return buffer;
  }
  size_t element = static_cast<size_t>(StorageBytes(shape.element_type()));
  std::vector<int64_t> offsets = PhysicalOffsets(shape);
  for (size_t i = 0; i < offsets.size(); ++i)
    std::memcpy(buffer.data() + offsets[i] * element, literal.raw() + i * element, element);
  return buffer;
}

StatusOr<Literal> BufferToLiteral(const runtime::Buffer& buffer) {
  const Shape& shape = buffer.shape();
  if (!shape.IsArray()) return Error("output is not an array: " + shape.ToString());
  KILN_RETURN_IF_ERROR(CheckLayout(shape));
  Shape logical = shape;
  logical.clear_layout();
  Literal literal(logical);
  size_t bytes = static_cast<size_t>(shape.ByteSize());
  if (buffer.size() < static_cast<int64_t>(bytes))
    return Error("output buffer of " + std::to_string(buffer.size()) + " bytes is too small for " +
                 shape.ToString(false));
  if (IsDefaultLayout(shape)) {
    if (bytes) std::memcpy(literal.raw(), buffer.data(), bytes);
    return literal;
  }
  size_t element = static_cast<size_t>(StorageBytes(shape.element_type()));
  std::vector<int64_t> offsets = PhysicalOffsets(shape);
  for (size_t i = 0; i < offsets.size(); ++i)
    std::memcpy(literal.raw() + i * element, buffer.data() + offsets[i] * element, element);
  return literal;
}

}  // namespace kiln::tools
