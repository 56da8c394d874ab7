// Reference semantics of gather and scatter, following XLA's HloEvaluator
// and docs/operation_semantics.md, including operand/indices batching
// dimensions.
//
// Both ops view their indices array as a batch of index vectors laid along
// index_vector_dim (index_vector_dim == rank means an implicit trailing
// dimension of size 1). Each index vector, scattered into operand
// dimensions by start_index_map / scatter_dims_to_operand_dims, plus the
// batch coordinates for batching dimensions, gives the start of one window:
//
//  * gather clamps every start into [0, operand_dim - slice_size], so it
//    always reads a full in-bounds slice;
//  * scatter skips a window entirely when any part of it would fall out of
//    bounds. Updates are applied one element at a time as
//    to_apply(current..., update...), visiting the update scatter positions
//    in the updates layout's minor-to-major order as XLA's evaluator does;
//    XLA leaves the order of combining duplicate indices unspecified, so
//    other backends may differ when to_apply is not commutative.
#include <algorithm>

#include "compiler/evaluator/index_util.h"
#include "compiler/evaluator/op_evaluators.h"

namespace kiln::hlo {
namespace {

// The indices operand viewed as a batch of index vectors.
class IndexVectors {
 public:
  IndexVectors(const Literal& indices, int64_t index_vector_dim)
      : indices_(indices),
        dims_(indices.shape().dims()),
        strides_(RowMajorStrides(dims_)),
        ivd_(index_vector_dim) {
    for (int64_t d = 0; d < static_cast<int64_t>(dims_.size()); ++d)
      if (d != ivd_) batch_dims_.push_back(dims_[d]);
  }

  // Dimensions of the batch (the indices dimensions other than ivd).
  const std::vector<int64_t>& batch_dims() const { return batch_dims_; }
  int64_t vector_size() const { return ivd_ < static_cast<int64_t>(dims_.size()) ? dims_[ivd_] : 1; }
  // Position in the batch index of indices dimension d (d != ivd).
  int64_t BatchPosition(int64_t d) const { return d < ivd_ ? d : d - 1; }

  // Reads the index vector at batch position `batch` into `out`.
  void Read(const std::vector<int64_t>& batch, std::vector<int64_t>& out) const {
    int64_t base = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(dims_.size()); ++d)
      if (d != ivd_) base += batch[BatchPosition(d)] * strides_[d];
    int64_t stride = ivd_ < static_cast<int64_t>(dims_.size()) ? strides_[ivd_] : 0;
    out.resize(vector_size());
    for (int64_t k = 0; k < vector_size(); ++k) out[k] = indices_.GetS64(base + k * stride);
  }

 private:
  const Literal& indices_;
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;
  int64_t ivd_;
  std::vector<int64_t> batch_dims_;
};

Status CheckIndices(const HloInstruction& inst, const Literal& indices, int64_t index_vector_dim) {
  if (!indices.shape().IsArray() || !IsInteger(indices.element_type()))
    return InstError(inst, "indices must be an integer array, got " + indices.shape().ToString(false));
  if (index_vector_dim < 0 || index_vector_dim > indices.shape().rank())
    return InstError(inst, "index_vector_dim " + std::to_string(index_vector_dim) +
                               " is out of range for indices of rank " +
                               std::to_string(indices.shape().rank()));
  return Status::Ok();
}

// Checks the batching dimension pairs: distinct, in range, not the index
// vector dimension, and of equal sizes on both sides.
Status CheckBatchingDims(const HloInstruction& inst, const std::vector<int64_t>& operand_dims,
                         const std::vector<int64_t>& operand_batching, const Literal& indices,
                         const std::vector<int64_t>& indices_batching, int64_t index_vector_dim) {
  KILN_RETURN_IF_ERROR(CheckDimList(inst, operand_batching, operand_dims.size(),
                                    "operand batching dims", /*sorted=*/true));
  KILN_RETURN_IF_ERROR(CheckDimList(inst, indices_batching, indices.shape().rank(),
                                    "indices batching dims", /*sorted=*/false));
  if (operand_batching.size() != indices_batching.size())
    return InstError(inst, "operand and indices batching dims differ in number");
  for (size_t i = 0; i < indices_batching.size(); ++i) {
    if (indices_batching[i] == index_vector_dim)
      return InstError(inst, "indices batching dims include index_vector_dim");
    if (indices.shape().dim(indices_batching[i]) != operand_dims[operand_batching[i]])
      return InstError(inst, "batching dimension sizes differ between operand and indices");
  }
  return Status::Ok();
}

Status CheckDisjoint(const HloInstruction& inst, const std::vector<int64_t>& a,
                     const std::vector<int64_t>& b, const std::string& what) {
  for (int64_t v : a)
    if (Contains(b, v)) return InstError(inst, what + " share dimension " + std::to_string(v));
  return Status::Ok();
}

// Linear offsets (in two arrays) of every position of a window whose extent
// along a_dims[k] / b_dims[k] is sizes[k], in row-major window order.
void WindowOffsets(const std::vector<int64_t>& sizes, const std::vector<int64_t>& a_strides,
                   const std::vector<int64_t>& a_dims, const std::vector<int64_t>& b_strides,
                   const std::vector<int64_t>& b_dims, std::vector<int64_t>& a_offsets,
                   std::vector<int64_t>& b_offsets) {
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  if (count == 0) return;
  std::vector<int64_t> t(sizes.size(), 0);
  do {
    int64_t a = 0, b = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      a += t[k] * a_strides[a_dims[k]];
      b += t[k] * b_strides[b_dims[k]];
    }
    a_offsets.push_back(a);
    b_offsets.push_back(b);
  } while (NextIndex(sizes, t));
}

// ---------------------------------------------------------------- gather

StatusOr<Literal> EvalGather(const HloInstruction& inst, const Operands& operands) {
  if (operands.size() != 2) return InstError(inst, "gather takes operand and start indices");
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  if (!operand.shape().IsArray()) return InstError(inst, "gather operand must be an array");
  const GatherDimensionNumbers dn = inst.gather_dimension_numbers();
  KILN_RETURN_IF_ERROR(CheckIndices(inst, indices, dn.index_vector_dim));
  const std::vector<int64_t>& op_dims = operand.shape().dims();
  const int64_t rank = static_cast<int64_t>(op_dims.size());
  const std::vector<int64_t> slice_sizes = inst.GetInts("slice_sizes");
  if (static_cast<int64_t>(slice_sizes.size()) != rank)
    return InstError(inst, "slice_sizes needs one entry per operand dimension");
  for (int64_t d = 0; d < rank; ++d)
    if (slice_sizes[d] < 0 || slice_sizes[d] > op_dims[d])
      return InstError(inst, "slice size " + std::to_string(slice_sizes[d]) +
                                 " does not fit operand dimension " + std::to_string(d));
  IndexVectors vectors(indices, dn.index_vector_dim);
  KILN_RETURN_IF_ERROR(CheckDimList(inst, dn.collapsed_slice_dims, rank, "collapsed_slice_dims", true));
  KILN_RETURN_IF_ERROR(CheckDimList(inst, dn.start_index_map, rank, "start_index_map", false));
  KILN_RETURN_IF_ERROR(CheckBatchingDims(inst, op_dims, dn.operand_batching_dims, indices,
                                         dn.start_indices_batching_dims, dn.index_vector_dim));
  KILN_RETURN_IF_ERROR(CheckDisjoint(inst, dn.collapsed_slice_dims, dn.operand_batching_dims,
                                     "collapsed_slice_dims and operand_batching_dims"));
  KILN_RETURN_IF_ERROR(CheckDisjoint(inst, dn.start_index_map, dn.operand_batching_dims,
                                     "start_index_map and operand_batching_dims"));
  if (static_cast<int64_t>(dn.start_index_map.size()) != vectors.vector_size())
    return InstError(inst, "start_index_map has " + std::to_string(dn.start_index_map.size()) +
                               " entries but index vectors have " +
                               std::to_string(vectors.vector_size()));
  std::vector<int64_t> window_operand_dims;  // operand dims that appear in the output
  for (int64_t d = 0; d < rank; ++d) {
    bool dropped = Contains(dn.collapsed_slice_dims, d) || Contains(dn.operand_batching_dims, d);
    if (dropped && slice_sizes[d] != 1)
      return InstError(inst, "collapsed and batching dimensions need slice size 1");
    if (!dropped) window_operand_dims.push_back(d);
  }
  const std::vector<int64_t>& batch_dims = vectors.batch_dims();
  const int64_t out_rank = static_cast<int64_t>(batch_dims.size() + window_operand_dims.size());
  KILN_RETURN_IF_ERROR(CheckDimList(inst, dn.offset_dims, out_rank, "offset_dims", true));
  if (dn.offset_dims.size() != window_operand_dims.size())
    return InstError(inst, "offset_dims must name one output dimension per non-collapsed, "
                           "non-batching operand dimension");

  // Output dimensions: offset dims take slice sizes, the rest are the batch.
  std::vector<int64_t> out_dims, out_batch_dims, window_sizes;
  for (int64_t d = 0, w = 0, b = 0; d < out_rank; ++d) {
    if (Contains(dn.offset_dims, d)) {
      window_sizes.push_back(slice_sizes[window_operand_dims[w]]);
      out_dims.push_back(window_sizes.back());
      ++w;
    } else {
      out_batch_dims.push_back(d);
      out_dims.push_back(batch_dims[b++]);
    }
  }
  if (!inst.shape().IsArray() || inst.shape().dims() != out_dims)
    return InstError(inst, "result shape " + inst.shape().ToString(false) +
                               " does not have the gathered dimensions " + IntListToString(out_dims));
  Literal result(inst.shape());
  if (operand.element_count() == 0 || result.element_count() == 0) return result;

  const std::vector<int64_t> op_strides = RowMajorStrides(op_dims);
  const std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  std::vector<int64_t> op_offsets, out_offsets;
  WindowOffsets(window_sizes, op_strides, window_operand_dims, out_strides, dn.offset_dims,
                op_offsets, out_offsets);
  std::vector<int64_t> batch(batch_dims.size(), 0), vec, start(rank);
  do {
    vectors.Read(batch, vec);
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < vec.size(); ++k) start[dn.start_index_map[k]] = vec[k];
    for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i)
      start[dn.operand_batching_dims[i]] =
          batch[vectors.BatchPosition(dn.start_indices_batching_dims[i])];
    int64_t op_base = 0, out_base = 0;
    for (int64_t d = 0; d < rank; ++d) {
      // XLA clamps so that the whole slice lies inside the operand.
      start[d] = std::clamp<int64_t>(start[d], 0, op_dims[d] - slice_sizes[d]);
      op_base += start[d] * op_strides[d];
    }
    for (size_t j = 0; j < out_batch_dims.size(); ++j)
      out_base += batch[j] * out_strides[out_batch_dims[j]];
    for (size_t t = 0; t < op_offsets.size(); ++t)
      CopyConverted(result, out_base + out_offsets[t], operand, op_base + op_offsets[t]);
  } while (NextIndex(batch_dims, batch));
  return result;
}

// --------------------------------------------------------------- scatter

Literal PackScatter(const HloInstruction& inst, std::vector<Literal> outputs) {
  if (inst.shape().IsTuple()) return Literal::MakeTuple(std::move(outputs));
  return std::move(outputs[0]);
}

StatusOr<Literal> EvalScatter(const HloInstruction& inst, const Operands& operands,
                              EvalContext& ctx) {
  if (operands.size() < 3 || operands.size() % 2 == 0)
    return InstError(inst, "scatter takes N operands, the indices and N updates");
  const size_t n = (operands.size() - 1) / 2;
  const Literal& indices = *operands[n];
  const std::vector<int64_t>& op_dims = operands[0]->shape().dims();
  const std::vector<int64_t>& upd_dims = operands[n + 1]->shape().dims();
  for (size_t i = 0; i < n; ++i) {
    const Shape& op = operands[i]->shape();
    const Shape& upd = operands[n + 1 + i]->shape();
    if (!op.IsArray() || op.dims() != op_dims || !upd.IsArray() || upd.dims() != upd_dims)
      return InstError(inst, "scatter operands (and updates) must be arrays of equal dimensions");
  }
  const ScatterDimensionNumbers dn = inst.scatter_dimension_numbers();
  KILN_RETURN_IF_ERROR(CheckIndices(inst, indices, dn.index_vector_dim));
  const int64_t rank = static_cast<int64_t>(op_dims.size());
  const int64_t upd_rank = static_cast<int64_t>(upd_dims.size());
  IndexVectors vectors(indices, dn.index_vector_dim);
  KILN_RETURN_IF_ERROR(CheckDimList(inst, dn.update_window_dims, upd_rank, "update_window_dims", true));
  KILN_RETURN_IF_ERROR(CheckDimList(inst, dn.inserted_window_dims, rank, "inserted_window_dims", true));
  KILN_RETURN_IF_ERROR(CheckDimList(inst, dn.scatter_dims_to_operand_dims, rank,
                                    "scatter_dims_to_operand_dims", false));
  KILN_RETURN_IF_ERROR(CheckBatchingDims(inst, op_dims, dn.input_batching_dims, indices,
                                         dn.scatter_indices_batching_dims, dn.index_vector_dim));
  KILN_RETURN_IF_ERROR(CheckDisjoint(inst, dn.inserted_window_dims, dn.input_batching_dims,
                                     "inserted_window_dims and input_batching_dims"));
  KILN_RETURN_IF_ERROR(CheckDisjoint(inst, dn.scatter_dims_to_operand_dims, dn.input_batching_dims,
                                     "scatter_dims_to_operand_dims and input_batching_dims"));
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != vectors.vector_size())
    return InstError(inst, "scatter_dims_to_operand_dims has " +
                               std::to_string(dn.scatter_dims_to_operand_dims.size()) +
                               " entries but index vectors have " +
                               std::to_string(vectors.vector_size()));
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < rank; ++d)
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d))
      window_operand_dims.push_back(d);
  if (window_operand_dims.size() != dn.update_window_dims.size())
    return InstError(inst, "update_window_dims must name one updates dimension per operand "
                           "dimension that is neither inserted nor batching");
  // Window extent per operand dimension (1 for inserted and batching ones).
  std::vector<int64_t> window_sizes, extent(rank, 1);
  for (size_t k = 0; k < window_operand_dims.size(); ++k) {
    window_sizes.push_back(upd_dims[dn.update_window_dims[k]]);
    extent[window_operand_dims[k]] = window_sizes.back();
    if (window_sizes.back() > op_dims[window_operand_dims[k]])
      return InstError(inst, "update window is larger than the operand");
  }
  std::vector<int64_t> upd_scatter_dims;
  for (int64_t d = 0; d < upd_rank; ++d)
    if (!Contains(dn.update_window_dims, d)) upd_scatter_dims.push_back(d);
  const std::vector<int64_t>& batch_dims = vectors.batch_dims();
  if (upd_scatter_dims.size() != batch_dims.size())
    return InstError(inst, "updates have " + std::to_string(upd_scatter_dims.size()) +
                               " scatter dimensions but the indices have " +
                               std::to_string(batch_dims.size()));
  for (size_t j = 0; j < batch_dims.size(); ++j)
    if (upd_dims[upd_scatter_dims[j]] != batch_dims[j])
      return InstError(inst, "updates scatter dimensions do not match the indices");

  std::vector<Literal> outputs;
  const Shape& shape = inst.shape();
  if (shape.IsTuple() ? shape.tuple_size() != static_cast<int64_t>(n) : n != 1)
    return InstError(inst, "result must have one element per scatter operand");
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = shape.IsTuple() ? shape.tuple_shape(i) : shape;
    if (!s.IsArray() || !s.Compatible(operands[i]->shape()))
      return InstError(inst, "result shape " + s.ToString(false) + " does not match operand " +
                                 std::to_string(i));
    outputs.push_back(*operands[i]);
  }
  KILN_ASSIGN_OR_RETURN(ScalarCaller call, ScalarCaller::Create(inst, "to_apply", 2 * n));

  const std::vector<int64_t> op_strides = RowMajorStrides(op_dims);
  const std::vector<int64_t> upd_strides = RowMajorStrides(upd_dims);
  std::vector<int64_t> op_offsets, upd_offsets;
  WindowOffsets(window_sizes, op_strides, window_operand_dims, upd_strides, dn.update_window_dims,
                op_offsets, upd_offsets);
  if (operands[n + 1]->element_count() == 0) return PackScatter(inst, std::move(outputs));

  // Visit update scatter positions in the updates layout's order.
  std::vector<int64_t> order;
  for (int64_t d : LayoutOrder(inst.operand(n + 1)->shape().rank() == upd_rank
                                   ? inst.operand(n + 1)->shape()
                                   : operands[n + 1]->shape()))
    if (!Contains(dn.update_window_dims, d)) order.push_back(d);
  std::vector<int64_t> upd_index(upd_rank, 0), batch(batch_dims.size()), vec, start(rank);
  do {
    for (size_t j = 0; j < upd_scatter_dims.size(); ++j) batch[j] = upd_index[upd_scatter_dims[j]];
    vectors.Read(batch, vec);
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < vec.size(); ++k) start[dn.scatter_dims_to_operand_dims[k]] = vec[k];
    for (size_t i = 0; i < dn.input_batching_dims.size(); ++i)
      start[dn.input_batching_dims[i]] =
          batch[vectors.BatchPosition(dn.scatter_indices_batching_dims[i])];
    bool in_bounds = true;
    for (int64_t d = 0; d < rank; ++d)
      in_bounds = in_bounds && start[d] >= 0 && start[d] <= op_dims[d] - extent[d];
    if (!in_bounds) continue;  // XLA skips the whole window
    int64_t op_base = 0, upd_base = 0;
    for (int64_t d = 0; d < rank; ++d) op_base += start[d] * op_strides[d];
    for (int64_t d : upd_scatter_dims) upd_base += upd_index[d] * upd_strides[d];
    for (size_t t = 0; t < op_offsets.size(); ++t) {
      const int64_t target = op_base + op_offsets[t];
      for (size_t i = 0; i < n; ++i) {
        call.SetArg(i, outputs[i], target);
        call.SetArg(n + i, *operands[n + 1 + i], upd_base + upd_offsets[t]);
      }
      KILN_RETURN_IF_ERROR(call.Run(ctx, n));
      for (size_t i = 0; i < n; ++i) CopyConverted(outputs[i], target, call.result(i), 0);
    }
  } while (NextIndexInOrder(upd_dims, order, upd_index));
  return PackScatter(inst, std::move(outputs));
}

}  // namespace

StatusOr<Literal> EvalIndexingOp(const HloInstruction& inst, const Operands& operands,
                                 EvalContext& ctx) {
  switch (inst.opcode()) {
    case HloOpcode::kGather:
      return EvalGather(inst, operands);
    case HloOpcode::kScatter:
      return EvalScatter(inst, operands, ctx);
    default:
      return UnsupportedOp(inst);
  }
}

}  // namespace kiln::hlo
