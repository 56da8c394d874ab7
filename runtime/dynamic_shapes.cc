// Padding arguments to their bounds and cutting results to their sizes
// (see dynamic_shapes.h).
#include "runtime/dynamic_shapes.h"

#include <cstring>

namespace kiln::runtime {

namespace th = ::kiln::thunks;

namespace {

int64_t ElementBytes(const Shape& shape) { return StorageBytes(shape.element_type()); }

// Copies the row-major array `from` (dims `from_dims`) into the row-major
// array `to` (dims `to_dims`) over the common extent min(from, to) of every
// dimension, one run of the minor dimension at a time.
void CopyCommonExtent(const uint8_t* from, const std::vector<int64_t>& from_dims, uint8_t* to,
                      const std::vector<int64_t>& to_dims, int64_t element_bytes) {
  const size_t rank = from_dims.size();
  if (rank == 0) {
    std::memcpy(to, from, element_bytes);
    return;
  }
  std::vector<int64_t> common(rank);
  for (size_t i = 0; i < rank; ++i) common[i] = std::min(from_dims[i], to_dims[i]);
  for (int64_t c : common)
    if (c == 0) return;
  const std::vector<int64_t> from_strides = RowMajorStrides(from_dims);
  const std::vector<int64_t> to_strides = RowMajorStrides(to_dims);
  std::vector<int64_t> outer(common.begin(), common.end() - 1), index(rank - 1, 0);
  const int64_t run = common.back() * element_bytes;
  do {
    int64_t f = 0, t = 0;
    for (size_t i = 0; i + 1 < rank; ++i) {
      f += index[i] * from_strides[i];
      t += index[i] * to_strides[i];
    }
    std::memcpy(to + t * element_bytes, from + f * element_bytes, run);
  } while (NextIndex(outer, index));
}

StatusOr<Buffer> SizeArgument(int64_t size) {
  KILN_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(Shape::Scalar(ElementType::kS32)));
  const int32_t v = static_cast<int32_t>(size);
  std::memcpy(b.data(), &v, sizeof(v));
  return b;
}

}  // namespace

Status CheckCallerArgument(const Shape& actual, const Shape& want) {
  if (actual.Compatible(want) || (want.is_dynamic() && FitsDeclaredShape(actual, want))) return Status::Ok();
  return Error("expected " + want.ToString(false) + ", got " + actual.ToString(false));
}

StatusOr<std::vector<Buffer>> ProgramArguments(const ProgramBinding& b, std::vector<Buffer> args) {
  const th::Signature& sig = b.program.signature;
  if (sig.dynamic_dimensions.empty()) return args;
  std::vector<std::vector<int64_t>> extents;
  for (const Buffer& arg : args) extents.push_back(arg.shape().dims());
  args.resize(sig.parameter_leaves.size());
  for (const th::DynamicDimension& d : sig.dynamic_dimensions) {
    if (d.of_result) continue;
    KILN_ASSIGN_OR_RETURN(args[d.size_leaf], SizeArgument(extents[d.leaf][d.dimension]));
  }
  for (size_t i = 0; i < extents.size(); ++i) {
    const Shape& bound = b.argument_shapes[i];
    if (extents[i] == bound.dims()) continue;
    KILN_ASSIGN_OR_RETURN(Buffer padded, Buffer::Allocate(bound));
    CopyCommonExtent(args[i].data(), extents[i], padded.data(), bound.dims(), ElementBytes(bound));
    args[i] = std::move(padded);
  }
  return args;
}

StatusOr<ExecutionResult> CallerResult(const ProgramBinding& b, StatusOr<ExecutionResult> result) {
  const th::Signature& sig = b.program.signature;
  if (!result.ok() || sig.dynamic_dimensions.empty()) return result;
  ExecutionResult& r = *result;
  std::vector<std::vector<int64_t>> sizes(b.caller_output_shapes.size());
  for (size_t i = 0; i < sizes.size(); ++i) sizes[i] = b.output_shapes[i].dims();
  bool any = false;
  for (const th::DynamicDimension& d : sig.dynamic_dimensions) {
    if (!d.of_result) continue;
    any = true;
    int32_t size = 0;
    if (r.results_computed) std::memcpy(&size, r.outputs[d.size_leaf].data(), sizeof(size));
    const int64_t bound = b.output_shapes[d.leaf].dim(d.dimension);
    if (size < 0 || size > bound) {
      return Error("output " + std::to_string(d.leaf) + ": the program computed size " +
                   std::to_string(size) + " for dimension " + std::to_string(d.dimension) +
                   ", outside its bound " + std::to_string(bound));
    }
    if (r.results_computed) sizes[d.leaf][d.dimension] = size;
  }
  r.outputs.resize(b.caller_output_shapes.size());
  if (!any) return result;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    if (sizes[i] == b.output_shapes[i].dims()) continue;
    Shape actual(b.output_shapes[i].element_type(), sizes[i]);
    KILN_ASSIGN_OR_RETURN(Buffer cut, Buffer::Allocate(actual));
    CopyCommonExtent(r.outputs[i].data(), b.output_shapes[i].dims(), cut.data(), sizes[i],
                     ElementBytes(actual));
    r.outputs[i] = std::move(cut);
  }
  return result;
}

}  // namespace kiln::runtime
