// Shape inference for gather and scatter, including the batching
// dimensions (operand_batching_dims / input_batching_dims) of newer HLO.
//
// Both ops read "index vectors" out of an indices array along
// index_vector_dim; when index_vector_dim equals the indices' rank the
// indices are treated as having a trailing dimension of size 1. The other
// indices dimensions are the "batch" (scatter) dimensions.
#include "compiler/hlo/shape_inference.h"

namespace kiln::hlo::shape_inference {
namespace {

// Indices dimensions with the implicit trailing 1 appended when
// index_vector_dim == rank.
StatusOr<std::vector<int64_t>> ExpandedIndices(const HloInstruction& inst, const Shape& indices,
                                               int64_t index_vector_dim) {
  KILN_RETURN_IF_ERROR(ExpectArray(inst, indices, "indices"));
  if (!IsInteger(indices.element_type()))
    return Fail(inst, "indices must be integers, got " + Str(indices));
  if (index_vector_dim < 0 || index_vector_dim > indices.rank())
    return Fail(inst, "index_vector_dim " + std::to_string(index_vector_dim) +
                          " is outside [0, " + std::to_string(indices.rank()) + "]");
  std::vector<int64_t> dims = indices.dims();
  if (index_vector_dim == indices.rank()) dims.push_back(1);
  return dims;
}

// Checks the index map (start_index_map / scatter_dims_to_operand_dims) and
// the batching dimension pairs shared by gather and scatter.
Status CheckIndexMapAndBatching(const HloInstruction& inst, const std::vector<int64_t>& expanded,
                                int64_t index_vector_dim, const Shape& operand,
                                const std::vector<int64_t>& index_map, const std::string& map_name,
                                const std::vector<int64_t>& operand_batching,
                                const std::vector<int64_t>& indices_batching) {
  if (static_cast<int64_t>(index_map.size()) != expanded[index_vector_dim])
    return Fail(inst, map_name + " " + Str(index_map) + " must have as many entries as the index " +
                          "vector dimension's size " + std::to_string(expanded[index_vector_dim]));
  KILN_RETURN_IF_ERROR(CheckDims(inst, index_map, operand.rank(), map_name));
  for (int64_t d : index_map)
    if (Contains(operand_batching, d))
      return Fail(inst, map_name + " " + Str(index_map) + " overlaps the operand batching dims " +
                            Str(operand_batching));
  if (operand_batching.size() != indices_batching.size())
    return Fail(inst, "operand batching dims " + Str(operand_batching) +
                          " and indices batching dims " + Str(indices_batching) +
                          " differ in length");
  KILN_RETURN_IF_ERROR(CheckDims(inst, indices_batching, static_cast<int64_t>(expanded.size()),
                                 "indices batching dims"));
  for (size_t i = 0; i < indices_batching.size(); ++i) {
    if (indices_batching[i] == index_vector_dim)
      return Fail(inst, "indices batching dims " + Str(indices_batching) +
                            " include index_vector_dim");
    if (operand.dim(operand_batching[i]) != expanded[indices_batching[i]])
      return Fail(inst, "operand batching dimension " + std::to_string(operand_batching[i]) +
                            " and indices batching dimension " +
                            std::to_string(indices_batching[i]) + " differ in size");
  }
  return Status::Ok();
}

// Operand dims that a slice window removes (collapsed / inserted window dims
// and batching dims): distinct, sorted per kind, and in range.
Status CheckRemovedDims(const HloInstruction& inst, const std::vector<int64_t>& removed,
                        const std::string& removed_name, const std::vector<int64_t>& batching,
                        const std::string& batching_name, int64_t rank) {
  KILN_RETURN_IF_ERROR(CheckSortedDims(inst, removed, removed_name));
  KILN_RETURN_IF_ERROR(CheckSortedDims(inst, batching, batching_name));
  std::vector<int64_t> all = removed;
  all.insert(all.end(), batching.begin(), batching.end());
  return CheckDims(inst, all, rank, removed_name + " and " + batching_name);
}

}  // namespace

StatusOr<Shape> InferGather(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of gather"));
  const GatherDimensionNumbers d = inst.gather_dimension_numbers();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> expanded,
                        ExpandedIndices(inst, inst.operand(1)->shape(), d.index_vector_dim));
  KILN_RETURN_IF_ERROR(CheckRemovedDims(inst, d.collapsed_slice_dims, "collapsed_slice_dims",
                                        d.operand_batching_dims, "operand_batching_dims",
                                        operand.rank()));
  KILN_RETURN_IF_ERROR(CheckIndexMapAndBatching(inst, expanded, d.index_vector_dim, operand,
                                                d.start_index_map, "start_index_map",
                                                d.operand_batching_dims,
                                                d.start_indices_batching_dims));
  const std::vector<int64_t> slice_sizes = IntsAttr(inst, "slice_sizes");
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank())
    return Fail(inst, "slice_sizes " + Str(slice_sizes) + " must have one entry per dimension of " +
                          Str(operand));
  const size_t window_dims = d.offset_dims.size() + d.collapsed_slice_dims.size() +
                             d.operand_batching_dims.size();
  if (static_cast<int64_t>(window_dims) != operand.rank())
    return Fail(inst, "offset_dims, collapsed_slice_dims and operand_batching_dims must together "
                      "cover the operand's " + std::to_string(operand.rank()) + " dimensions");
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dim(i))
      return Fail(inst, "slice size " + std::to_string(slice_sizes[i]) + " of dimension " +
                            std::to_string(i) + " is outside [0, " + std::to_string(operand.dim(i)) +
                            "]");
    if ((Contains(d.collapsed_slice_dims, i) || Contains(d.operand_batching_dims, i)) &&
        slice_sizes[i] > 1)
      return Fail(inst, "collapsed or batching dimension " + std::to_string(i) +
                            " must have slice size <= 1, has " + std::to_string(slice_sizes[i]));
  }
  const int64_t out_rank = static_cast<int64_t>(d.offset_dims.size() + expanded.size() - 1);
  KILN_RETURN_IF_ERROR(CheckSortedDims(inst, d.offset_dims, "offset_dims"));
  KILN_RETURN_IF_ERROR(CheckDims(inst, d.offset_dims, out_rank, "offset_dims"));
  // Offset dims take the kept slice sizes in order; the rest take the
  // indices' batch dimensions in order (skipping index_vector_dim).
  std::vector<int64_t> dims;
  int64_t operand_dim = 0, indices_dim = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (Contains(d.offset_dims, i)) {
      while (Contains(d.collapsed_slice_dims, operand_dim) ||
             Contains(d.operand_batching_dims, operand_dim))
        ++operand_dim;
      dims.push_back(slice_sizes[operand_dim++]);
    } else {
      if (indices_dim == d.index_vector_dim) ++indices_dim;
      dims.push_back(expanded[indices_dim++]);
    }
  }
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferScatter(const HloInstruction& inst) {
  const int64_t n = inst.operand_count() / 2;
  const ScatterDimensionNumbers d = inst.scatter_dimension_numbers();
  const Shape& first = inst.operand(0)->shape();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> expanded,
                        ExpandedIndices(inst, inst.operand(n)->shape(), d.index_vector_dim));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, first, "scatter operand 0"));
  KILN_RETURN_IF_ERROR(CheckRemovedDims(inst, d.inserted_window_dims, "inserted_window_dims",
                                        d.input_batching_dims, "input_batching_dims",
                                        first.rank()));
  KILN_RETURN_IF_ERROR(CheckIndexMapAndBatching(
      inst, expanded, d.index_vector_dim, first, d.scatter_dims_to_operand_dims,
      "scatter_dims_to_operand_dims", d.input_batching_dims, d.scatter_indices_batching_dims));
  if (static_cast<int64_t>(d.update_window_dims.size() + d.inserted_window_dims.size() +
                           d.input_batching_dims.size()) != first.rank())
    return Fail(inst, "update_window_dims, inserted_window_dims and input_batching_dims must "
                      "together cover the operand's " + std::to_string(first.rank()) + " dimensions");
  KILN_RETURN_IF_ERROR(CheckSortedDims(inst, d.update_window_dims, "update_window_dims"));
  // Operand dims an update window spans: those not inserted or batching.
  std::vector<int64_t> window_bounds;
  for (int64_t i = 0; i < first.rank(); ++i)
    if (!Contains(d.inserted_window_dims, i) && !Contains(d.input_batching_dims, i))
      window_bounds.push_back(first.dim(i));
  const int64_t updates_rank = static_cast<int64_t>(expanded.size() - 1 + d.update_window_dims.size());
  std::vector<Shape> operands, inits;
  std::vector<ElementType> update_types;
  for (int64_t k = 0; k < n; ++k) {
    const Shape& operand = inst.operand(k)->shape();
    const Shape& updates = inst.operand(n + 1 + k)->shape();
    KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "scatter operand " + std::to_string(k)));
    KILN_RETURN_IF_ERROR(ExpectArray(inst, updates, "scatter updates " + std::to_string(k)));
    if (operand.dims() != first.dims())
      return Fail(inst, "scatter operands differ in dimensions: " + Str(first) + " and " +
                            Str(operand));
    if (updates.rank() != updates_rank)
      return Fail(inst, "updates " + Str(updates) + " must have rank " + std::to_string(updates_rank));
    KILN_RETURN_IF_ERROR(CheckDims(inst, d.update_window_dims, updates_rank, "update_window_dims"));
    int64_t window_index = 0, indices_dim = 0;
    for (int64_t i = 0; i < updates_rank; ++i) {
      if (Contains(d.update_window_dims, i)) {
        if (updates.dim(i) > window_bounds[window_index])
          return Fail(inst, "updates " + Str(updates) + " window dimension " + std::to_string(i) +
                                " exceeds the operand bound " +
                                std::to_string(window_bounds[window_index]));
        ++window_index;
      } else {
        if (indices_dim == d.index_vector_dim) ++indices_dim;
        if (updates.dim(i) != expanded[indices_dim])
          return Fail(inst, "updates " + Str(updates) + " scatter dimension " + std::to_string(i) +
                                " must match the indices' size " +
                                std::to_string(expanded[indices_dim]));
        ++indices_dim;
      }
    }
    operands.push_back(WithoutLayout(operand));
    inits.push_back(Shape::Scalar(operand.element_type()));
    update_types.push_back(updates.element_type());
  }
  KILN_ASSIGN_OR_RETURN(Signature reducer, CalleeSignature(inst, "to_apply"));
  KILN_RETURN_IF_ERROR(CheckReducer(inst, reducer, inits, update_types));
  if (n == 1) return operands[0];
  return Shape::Tuple(std::move(operands));
}

}  // namespace kiln::hlo::shape_inference
