// The indexing ops of the ElementalEmitter: pad, dynamic-slice,
// dynamic-update-slice (elemental form) and gather, with XLA's semantics
// (the reference is compiler/evaluator/shape_ops.cc and indexing_ops.cc):
//
//  * pad: result position p along a dimension holds operand element
//    (p - low) / (interior + 1) when that division is exact and in range,
//    else the padding value; negative low/high crop.
//  * dynamic-slice / dynamic-update-slice: each start index is clamped to
//    [0, dim - size] so the window stays in bounds.
//  * gather: the start an index vector selects is clamped so the whole
//    slice lies in the operand.
//
// Each builds the operand index the result index maps to; branches that may
// read out of range are guarded by scf.if rather than a select, so no load
// ever leaves its buffer.
#include <algorithm>

#include "compiler/codegen/elemental_emitter.h"

namespace kiln::codegen::internal {

using hlo::HloInstruction;
using mlir::Value;
using Pi = mlir::arith::CmpIPredicate;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

StatusOr<Value> ElementalEmitter::EmitPad(const HloInstruction& inst, const Index& index) {
  const auto* config = inst.GetAttribute<hlo::PaddingConfig>("padding");
  const Shape& in = inst.operand(0)->shape();
  if (!config || static_cast<int64_t>(config->dims.size()) != in.rank())
    return Error(inst.DebugName() + ": pad needs padding=low_high_interior per operand dimension");
  Index operand_index(in.rank());
  std::vector<Value> inside;  // conditions for reading the operand
  for (int64_t d = 0; d < in.rank(); ++d) {
    const hlo::PadDim& p = config->dims[d];
    if (p.interior < 0) return Error(inst.DebugName() + ": negative interior padding");
    // Only the conditions that can fail are emitted: pos >= 0 needs low > 0,
    // the upper bound needs high > 0 (the last result position is
    // (n - 1) * (interior + 1) + high past low).
    Value pos = Sub(index[d], Const(p.low));
    Value src = pos;
    if (p.interior > 0) {
      Value step = Const(p.interior + 1);
      Value rem = mlir::arith::RemSIOp::create(b_, loc_, pos, step);
      inside.push_back(ops_.IndexCompare(Pi::eq, rem, Const(0)));
      src = mlir::arith::DivSIOp::create(b_, loc_, pos, step);
    }
    if (p.low > 0) inside.push_back(ops_.IndexCompare(Pi::sge, pos, Const(0)));
    if (p.high > 0) inside.push_back(ops_.IndexCompare(Pi::slt, src, Const(in.dim(d))));
    operand_index[d] = src;
  }
  auto operand = [&] { return Emit(inst.operand(0), operand_index); };
  if (inside.empty()) return operand();
  return EmitIf(ops_.AllOf(inside), inst.shape().element_type(), operand,
                [&] { return Emit(inst.operand(1), Index{}); });
}

StatusOr<Index> ElementalEmitter::DynamicStarts(const HloInstruction& inst, int64_t first,
                                                const std::vector<int64_t>& sizes) {
  const Shape& in = inst.operand(0)->shape();
  if (inst.operand_count() != first + in.rank() || static_cast<int64_t>(sizes.size()) != in.rank())
    return Error(inst.DebugName() + ": expected " + std::to_string(in.rank()) + " scalar start indices");
  Index starts;
  for (int64_t d = 0; d < in.rank(); ++d) {
    const HloInstruction* start = inst.operand(first + d);
    ElementType t = start->shape().element_type();
    if (!start->shape().IsScalar() || !IsInteger(t))
      return Error(inst.DebugName() + ": start index " + std::to_string(d) + " must be an integer scalar");
    if (sizes[d] > in.dim(d)) return Error(inst.DebugName() + ": window exceeds the operand");
    KILN_ASSIGN_OR_RETURN(Value v, Emit(start, Index{}));
    starts.push_back(ops_.ClampIndex(ops_.IndexFromInteger(v, t), 0, in.dim(d) - sizes[d]));
  }
  return starts;
}

StatusOr<Value> ElementalEmitter::EmitDynamicSlice(const HloInstruction& inst, const Index& index) {
  KILN_ASSIGN_OR_RETURN(Index starts, DynamicStarts(inst, 1, inst.shape().dims()));
  Index operand_index;
  for (size_t d = 0; d < starts.size(); ++d) operand_index.push_back(Add(starts[d], index[d]));
  return Emit(inst.operand(0), operand_index);
}

// Elemental form: every result element reads either the update (inside the
// clamped window) or the operand. The in-place form, which writes only the
// window, is in in_place_emitter.cc.
StatusOr<Value> ElementalEmitter::EmitDynamicUpdateSlice(const HloInstruction& inst, const Index& index) {
  const Shape& update = inst.operand(1)->shape();
  KILN_ASSIGN_OR_RETURN(Index starts, DynamicStarts(inst, 2, update.dims()));
  Index update_index;
  std::vector<Value> inside;
  for (size_t d = 0; d < starts.size(); ++d) {
    if (update.dim(d) == inst.shape().dim(d)) {  // the window spans the dimension
      update_index.push_back(index[d]);
      continue;
    }
    Value rel = Sub(index[d], starts[d]);
    inside.push_back(ops_.IndexCompare(Pi::sge, rel, Const(0)));
    inside.push_back(ops_.IndexCompare(Pi::slt, rel, Const(update.dim(d))));
    update_index.push_back(rel);
  }
  auto from_update = [&] { return Emit(inst.operand(1), update_index); };
  if (inside.empty()) return from_update();
  return EmitIf(ops_.AllOf(inside), inst.shape().element_type(), from_update,
                [&] { return Emit(inst.operand(0), index); });
}

StatusOr<Index> ElementalEmitter::WindowStart(const HloInstruction& indices, const IndexVectorMap& map,
                                              const Index& batch, int64_t operand_rank) {
  const Shape& shape = indices.shape();
  ElementType t = shape.element_type();
  const int64_t ivd = map.index_vector_dim;
  if (!shape.IsArray() || !IsInteger(t) || ivd < 0 || ivd > shape.rank())
    return Error(indices.DebugName() + ": indices must be an integer array with index_vector_dim in range");
  int64_t vector_size = ivd < shape.rank() ? shape.dim(ivd) : 1;
  if (static_cast<int64_t>(map.index_map.size()) != vector_size ||
      map.operand_batching.size() != map.indices_batching.size())
    return Error(indices.DebugName() + ": index vectors do not match the dimension numbers");
  // Position in the batch of indices dimension d (d != ivd).
  auto batch_position = [&](int64_t d) { return d < ivd ? d : d - 1; };
  Index start(operand_rank, Const(0));
  for (int64_t k = 0; k < vector_size; ++k) {
    Index at;
    for (int64_t d = 0; d < shape.rank(); ++d) at.push_back(d == ivd ? Const(k) : batch[batch_position(d)]);
    KILN_ASSIGN_OR_RETURN(Value v, Emit(&indices, at));
    int64_t dim = map.index_map[k];
    if (dim < 0 || dim >= operand_rank) return Error(indices.DebugName() + ": index map out of range");
    start[dim] = ops_.IndexFromInteger(v, t);
  }
  for (size_t i = 0; i < map.operand_batching.size(); ++i) {
    int64_t dim = map.operand_batching[i], from = map.indices_batching[i];
    if (dim < 0 || dim >= operand_rank || from < 0 || from >= shape.rank() || from == ivd)
      return Error(indices.DebugName() + ": batching dimensions out of range");
    start[dim] = batch[batch_position(from)];
  }
  return start;
}

StatusOr<Value> ElementalEmitter::EmitGather(const HloInstruction& inst, const Index& index) {
  const hlo::GatherDimensionNumbers dn = inst.gather_dimension_numbers();
  const Shape& operand = inst.operand(0)->shape();
  const std::vector<int64_t> slice_sizes = inst.GetInts("slice_sizes");
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank())
    return Error(inst.DebugName() + ": slice_sizes needs one entry per operand dimension");
  // Result dimensions: offset_dims index the window, the others the batch.
  Index batch, window;
  for (int64_t d = 0; d < inst.shape().rank(); ++d) (Contains(dn.offset_dims, d) ? window : batch).push_back(index[d]);
  KILN_ASSIGN_OR_RETURN(Index start, WindowStart(*inst.operand(1),
                                                 {dn.index_vector_dim, dn.start_index_map,
                                                  dn.operand_batching_dims, dn.start_indices_batching_dims},
                                                 batch, operand.rank()));
  Index operand_index;
  size_t w = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.dim(d))
      return Error(inst.DebugName() + ": slice size does not fit the operand");
    Value s = ops_.ClampIndex(start[d], 0, operand.dim(d) - slice_sizes[d]);
    bool dropped = Contains(dn.collapsed_slice_dims, d) || Contains(dn.operand_batching_dims, d);
    if (!dropped) {
      if (w >= window.size()) return Error(inst.DebugName() + ": offset_dims do not match the slice");
      s = Add(s, window[w++]);
    }
    operand_index.push_back(s);
  }
  return Emit(inst.operand(0), operand_index);
}

}  // namespace kiln::codegen::internal
