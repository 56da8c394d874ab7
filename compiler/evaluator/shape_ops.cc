// The evaluator's data-movement op group: broadcast, reshape, transpose,
// slice, dynamic-slice, dynamic-update-slice, concatenate, pad, reverse,
// iota, copy and bitcast.
//
// These ops move elements without computing on them, so they copy raw
// element bytes (NaN payloads and all). Each checks its operands and
// attributes against the declared result shape, since the verifier may not
// have run, and reports a mismatch naming the instruction.
#include <algorithm>
#include <cstring>

#include "compiler/evaluator/eval_attrs.h"
#include "compiler/evaluator/op_evaluators.h"

namespace kiln::hlo {
namespace {

std::string Dims(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

Status Fail(const HloInstruction& inst, const std::string& message) {
  return Error(inst.DebugName() + ": " + message);
}

// Calls f(index, linear) for every multi-index of `dims` in row-major order.
template <typename F>
void ForEachIndex(const std::vector<int64_t>& dims, F&& f) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    f(index, linear);
    NextIndex(dims, index);
  }
}

Status CheckOperands(const HloInstruction& inst, const Operands& ops, size_t min, size_t max) {
  if (ops.size() < min || ops.size() > max)
    return Fail(inst, std::string(OpcodeName(inst.opcode())) + " got " +
                          std::to_string(ops.size()) + " operands");
  for (const Literal* op : ops)
    if (!op->shape().IsArray()) return Fail(inst, "operands must be arrays");
  return Status::Ok();
}

Status CheckType(const HloInstruction& inst, const Literal& op) {
  if (op.element_type() != inst.shape().element_type())
    return Fail(inst, "operand element type " + std::string(ElementTypeName(op.element_type())) +
                          " differs from the result's " +
                          std::string(ElementTypeName(inst.shape().element_type())));
  return Status::Ok();
}

Status CheckResultDims(const HloInstruction& inst, const std::vector<int64_t>& expected) {
  if (inst.shape().dims() != expected)
    return Fail(inst, "result dimensions should be " + Dims(expected) + ", declared " +
                          Dims(inst.shape().dims()));
  return Status::Ok();
}

// `dims` must be distinct dimension numbers below `rank`.
Status CheckDimensionList(const HloInstruction& inst, const std::vector<int64_t>& dims,
                          int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d])
      return Fail(inst, "invalid dimension list " + Dims(dims) + " for rank " +
                            std::to_string(rank));
    seen[d] = true;
  }
  return Status::Ok();
}

// Linear row-major offset of `index` under `strides`.
int64_t Offset(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t i = 0; i < index.size(); ++i) offset += index[i] * strides[i];
  return offset;
}

Literal RawCopy(const HloInstruction& inst, const Literal& in) {
  Literal out(inst.shape());
  std::memcpy(out.raw(), in.raw(), out.raw_size());
  return out;
}

// ---------------------------------------------------------------------------

StatusOr<Literal> EvalBroadcast(const HloInstruction& inst, const Literal& in) {
  std::vector<int64_t> dims = eval::IntsAttr(inst, "dimensions").value_or(std::vector<int64_t>{});
  const Shape& out_shape = inst.shape();
  KILN_RETURN_IF_ERROR(CheckType(inst, in));
  if (static_cast<int64_t>(dims.size()) != in.shape().rank())
    return Fail(inst, "broadcast dimensions " + Dims(dims) + " do not match operand rank " +
                          std::to_string(in.shape().rank()));
  KILN_RETURN_IF_ERROR(CheckDimensionList(inst, dims, out_shape.rank()));
  for (size_t i = 0; i < dims.size(); ++i)
    if (out_shape.dim(dims[i]) != in.shape().dim(i))
      return Fail(inst, "operand dimension " + std::to_string(i) + " (size " +
                            std::to_string(in.shape().dim(i)) + ") does not match result dimension " +
                            std::to_string(dims[i]));
  std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dims());
  // Stride of each result dimension within the operand (0 if broadcast).
  std::vector<int64_t> strides(out_shape.rank(), 0);
  for (size_t i = 0; i < dims.size(); ++i) strides[dims[i]] = in_strides[i];
  Literal out(out_shape);
  ForEachIndex(out_shape.dims(), [&](const std::vector<int64_t>& index, int64_t linear) {
    out.CopyElementFrom(linear, in, Offset(index, strides));
  });
  return out;
}

StatusOr<Literal> EvalReshape(const HloInstruction& inst, const Literal& in) {
  KILN_RETURN_IF_ERROR(CheckType(inst, in));
  if (in.element_count() != inst.shape().ElementCount())
    return Fail(inst, "cannot reshape " + Dims(in.shape().dims()) + " to " +
                          Dims(inst.shape().dims()));
  return RawCopy(inst, in);  // row-major order is kept
}

StatusOr<Literal> EvalTranspose(const HloInstruction& inst, const Literal& in) {
  KILN_RETURN_IF_ERROR(CheckType(inst, in));
  std::vector<int64_t> perm = eval::IntsAttr(inst, "dimensions").value_or(std::vector<int64_t>{});
  int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return Fail(inst, "transpose permutation " + Dims(perm) + " does not match rank " +
                          std::to_string(rank));
  KILN_RETURN_IF_ERROR(CheckDimensionList(inst, perm, rank));
  std::vector<int64_t> expected(rank), in_strides = RowMajorStrides(in.shape().dims());
  std::vector<int64_t> strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    expected[i] = in.shape().dim(perm[i]);  // result dim i is operand dim perm[i]
    strides[i] = in_strides[perm[i]];
  }
  KILN_RETURN_IF_ERROR(CheckResultDims(inst, expected));
  Literal out(inst.shape());
  ForEachIndex(expected, [&](const std::vector<int64_t>& index, int64_t linear) {
    out.CopyElementFrom(linear, in, Offset(index, strides));
  });
  return out;
}

StatusOr<Literal> EvalSlice(const HloInstruction& inst, const Literal& in) {
  KILN_RETURN_IF_ERROR(CheckType(inst, in));
  const auto* slice = inst.GetAttribute<std::vector<SliceDim>>("slice");
  int64_t rank = in.shape().rank();
  if (!slice || static_cast<int64_t>(slice->size()) != rank)
    return Fail(inst, "slice needs one [start:limit:stride] per operand dimension");
  std::vector<int64_t> expected(rank), in_strides = RowMajorStrides(in.shape().dims());
  std::vector<int64_t> strides(rank);
  int64_t base = 0;
  for (int64_t i = 0; i < rank; ++i) {
    const SliceDim& s = (*slice)[i];
    if (s.start < 0 || s.start > s.limit || s.limit > in.shape().dim(i) || s.stride < 1)
      return Fail(inst, "slice [" + std::to_string(s.start) + ":" + std::to_string(s.limit) + ":" +
                            std::to_string(s.stride) + "] is out of bounds for dimension " +
                            std::to_string(i) + " of size " + std::to_string(in.shape().dim(i)));
    expected[i] = (s.limit - s.start + s.stride - 1) / s.stride;
    base += s.start * in_strides[i];
    strides[i] = s.stride * in_strides[i];
  }
  KILN_RETURN_IF_ERROR(CheckResultDims(inst, expected));
  Literal out(inst.shape());
  ForEachIndex(expected, [&](const std::vector<int64_t>& index, int64_t linear) {
    out.CopyElementFrom(linear, in, base + Offset(index, strides));
  });
  return out;
}

// Start indices of dynamic-slice / dynamic-update-slice: one integer scalar
// operand per dimension from `first`, each clamped to [0, dim - size] as
// XLA does so the window stays in bounds.
StatusOr<std::vector<int64_t>> ClampedStarts(const HloInstruction& inst, const Operands& ops,
                                             size_t first, const std::vector<int64_t>& operand_dims,
                                             const std::vector<int64_t>& sizes) {
  size_t rank = operand_dims.size();
  if (ops.size() != first + rank)
    return Fail(inst, "expected " + std::to_string(rank) + " start index operands, got " +
                          std::to_string(ops.size() - first));
  std::vector<int64_t> starts(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Literal& index = *ops[first + i];
    ElementType t = index.element_type();
    if (!index.shape().IsScalar() || !IsInteger(t))
      return Fail(inst, "start index " + std::to_string(i) + " must be an integer scalar");
    int64_t start = IsSignedInteger(t)
                        ? index.GetS64(0)
                        : static_cast<int64_t>(std::min<uint64_t>(index.GetU64(0), INT64_MAX));
    starts[i] = std::clamp<int64_t>(start, 0, operand_dims[i] - sizes[i]);
  }
  return starts;
}

StatusOr<Literal> EvalDynamicSlice(const HloInstruction& inst, const Operands& ops) {
  const Literal& in = *ops[0];
  KILN_RETURN_IF_ERROR(CheckType(inst, in));
  const std::vector<int64_t>& dims = in.shape().dims();
  std::vector<int64_t> sizes = eval::IntsAttr(inst, "dynamic_slice_sizes").value_or(inst.shape().dims());
  if (sizes.size() != dims.size())
    return Fail(inst, "dynamic_slice_sizes " + Dims(sizes) + " do not match operand rank");
  for (size_t i = 0; i < dims.size(); ++i)
    if (sizes[i] < 0 || sizes[i] > dims[i])
      return Fail(inst, "slice size " + Dims(sizes) + " exceeds operand " + Dims(dims));
  KILN_RETURN_IF_ERROR(CheckResultDims(inst, sizes));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ClampedStarts(inst, ops, 1, dims, sizes));
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t base = Offset(starts, strides);
  Literal out(inst.shape());
  ForEachIndex(sizes, [&](const std::vector<int64_t>& index, int64_t linear) {
    out.CopyElementFrom(linear, in, base + Offset(index, strides));
  });
  return out;
}

StatusOr<Literal> EvalDynamicUpdateSlice(const HloInstruction& inst, const Operands& ops) {
  if (ops.size() < 2) return Fail(inst, "dynamic-update-slice needs an operand and an update");
  const Literal& in = *ops[0];
  const Literal& update = *ops[1];
  KILN_RETURN_IF_ERROR(CheckType(inst, in));
  KILN_RETURN_IF_ERROR(CheckType(inst, update));
  KILN_RETURN_IF_ERROR(CheckResultDims(inst, in.shape().dims()));
  const std::vector<int64_t>& dims = in.shape().dims();
  const std::vector<int64_t>& sizes = update.shape().dims();
  if (sizes.size() != dims.size())
    return Fail(inst, "update rank differs from operand rank");
  for (size_t i = 0; i < dims.size(); ++i)
    if (sizes[i] > dims[i]) return Fail(inst, "update " + Dims(sizes) + " exceeds operand " + Dims(dims));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ClampedStarts(inst, ops, 2, dims, sizes));
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t base = Offset(starts, strides);
  Literal out = RawCopy(inst, in);
  ForEachIndex(sizes, [&](const std::vector<int64_t>& index, int64_t linear) {
    out.CopyElementFrom(base + Offset(index, strides), update, linear);
  });
  return out;
}

StatusOr<Literal> EvalConcatenate(const HloInstruction& inst, const Operands& ops) {
  std::optional<int64_t> dim = eval::IntAttr(inst, "dimensions");
  int64_t rank = inst.shape().rank();
  if (!dim || *dim < 0 || *dim >= rank) return Fail(inst, "concatenate needs dimensions={d}");
  for (const Literal* op : ops)
    if (op->shape().rank() != rank)
      return Fail(inst, "concatenate operands must all have rank " + std::to_string(rank));
  std::vector<int64_t> expected = ops[0]->shape().dims();
  expected[*dim] = 0;
  for (const Literal* op : ops) {
    KILN_RETURN_IF_ERROR(CheckType(inst, *op));
    const std::vector<int64_t>& d = op->shape().dims();
    for (int64_t i = 0; i < rank; ++i)
      if (i != *dim && d[i] != expected[i])
        return Fail(inst, "concatenate operand " + Dims(d) + " does not match " +
                              Dims(ops[0]->shape().dims()) + " outside dimension " +
                              std::to_string(*dim));
    expected[*dim] += d[*dim];
  }
  KILN_RETURN_IF_ERROR(CheckResultDims(inst, expected));
  Literal out(inst.shape());
  std::vector<int64_t> out_strides = RowMajorStrides(expected);
  int64_t offset = 0;  // position along `dim` where the next operand starts
  for (const Literal* op : ops) {
    ForEachIndex(op->shape().dims(), [&](const std::vector<int64_t>& index, int64_t linear) {
      out.CopyElementFrom(Offset(index, out_strides) + offset * out_strides[*dim], *op, linear);
    });
    offset += op->shape().dim(*dim);
  }
  return out;
}

// Result size of a padded dimension: low + high + n + (n - 1) * interior.
int64_t PaddedSize(int64_t n, const PadDim& p) {
  return p.low + p.high + n + std::max<int64_t>(n - 1, 0) * p.interior;
}

StatusOr<Literal> EvalPad(const HloInstruction& inst, const Operands& ops) {
  if (ops.size() != 2) return Fail(inst, "pad takes an operand and a padding value");
  const Literal& in = *ops[0];
  const Literal& value = *ops[1];
  KILN_RETURN_IF_ERROR(CheckType(inst, in));
  KILN_RETURN_IF_ERROR(CheckType(inst, value));
  if (!value.shape().IsScalar()) return Fail(inst, "the padding value must be a scalar");
  const auto* config = inst.GetAttribute<PaddingConfig>("padding");
  int64_t rank = in.shape().rank();
  if (!config || static_cast<int64_t>(config->dims.size()) != rank)
    return Fail(inst, "pad needs padding=low_high_interior per operand dimension");
  std::vector<int64_t> expected(rank);
  for (int64_t i = 0; i < rank; ++i) {
    const PadDim& p = config->dims[i];
    expected[i] = PaddedSize(in.shape().dim(i), p);
    if (p.interior < 0 || expected[i] < 0)
      return Fail(inst, "invalid padding for dimension " + std::to_string(i));
  }
  KILN_RETURN_IF_ERROR(CheckResultDims(inst, expected));
  Literal out(inst.shape());
  for (int64_t i = 0; i < out.element_count(); ++i) out.CopyElementFrom(i, value, 0);
  std::vector<int64_t> out_strides = RowMajorStrides(expected);
  ForEachIndex(in.shape().dims(), [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t target = 0;
    for (int64_t i = 0; i < rank; ++i) {
      const PadDim& p = config->dims[i];
      int64_t pos = p.low + index[i] * (p.interior + 1);
      if (pos < 0 || pos >= expected[i]) return;  // cropped by negative padding
      target += pos * out_strides[i];
    }
    out.CopyElementFrom(target, in, linear);
  });
  return out;
}

StatusOr<Literal> EvalReverse(const HloInstruction& inst, const Literal& in) {
  KILN_RETURN_IF_ERROR(CheckType(inst, in));
  KILN_RETURN_IF_ERROR(CheckResultDims(inst, in.shape().dims()));
  std::vector<int64_t> dims = eval::IntsAttr(inst, "dimensions").value_or(std::vector<int64_t>{});
  KILN_RETURN_IF_ERROR(CheckDimensionList(inst, dims, in.shape().rank()));
  std::vector<bool> reversed(in.shape().rank(), false);
  for (int64_t d : dims) reversed[d] = true;
  const std::vector<int64_t>& shape = in.shape().dims();
  std::vector<int64_t> strides = RowMajorStrides(shape);
  Literal out(inst.shape());
  ForEachIndex(shape, [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t src = 0;
    for (size_t i = 0; i < index.size(); ++i)
      src += (reversed[i] ? shape[i] - 1 - index[i] : index[i]) * strides[i];
    out.CopyElementFrom(linear, in, src);
  });
  return out;
}

StatusOr<Literal> EvalIota(const HloInstruction& inst) {
  std::optional<int64_t> dim = eval::IntAttr(inst, "iota_dimension");
  const Shape& shape = inst.shape();
  if (!dim || *dim < 0 || *dim >= shape.rank())
    return Fail(inst, "iota needs iota_dimension below the result rank");
  ElementType t = shape.element_type();
  Literal out(shape);
  ForEachIndex(shape.dims(), [&](const std::vector<int64_t>& index, int64_t linear) {
    int64_t v = index[*dim];
    // Converted to the element type as convert would (rounded for floats).
    if (IsPred(t)) out.SetPred(linear, v != 0);
    else if (IsInteger(t)) out.SetS64(linear, v);
    else if (IsComplex(t)) out.SetC128(linear, {static_cast<double>(v), 0.0});
    else out.SetF64(linear, static_cast<double>(v));
  });
  return out;
}

StatusOr<Literal> EvalCopy(const HloInstruction& inst, const Literal& in) {
  KILN_RETURN_IF_ERROR(CheckType(inst, in));
  KILN_RETURN_IF_ERROR(CheckResultDims(inst, in.shape().dims()));
  return RawCopy(inst, in);
}

// Row-major linear index of every element, listed in physical (layout)
// order: entry p is the logical position of the p-th element in memory.
std::vector<int64_t> PhysicalOrder(const Shape& shape) {
  std::vector<int64_t> minor_to_major = shape.MinorToMajor();
  std::vector<int64_t> strides = RowMajorStrides(shape.dims());
  // Physical dims from major to minor.
  std::vector<int64_t> physical_dims, physical_strides;
  for (auto it = minor_to_major.rbegin(); it != minor_to_major.rend(); ++it) {
    physical_dims.push_back(shape.dim(*it));
    physical_strides.push_back(strides[*it]);
  }
  std::vector<int64_t> order(shape.ElementCount());
  ForEachIndex(physical_dims, [&](const std::vector<int64_t>& index, int64_t p) {
    order[p] = Offset(index, physical_strides);
  });
  return order;
}

bool ValidMinorToMajor(const Shape& shape) {
  std::vector<int64_t> m = shape.MinorToMajor();
  std::vector<int64_t> sorted = m;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i)) return false;
  return static_cast<int64_t>(m.size()) == shape.rank();
}

// bitcast reinterprets the operand's memory: the operand's storage bytes,
// taken element by element in its physical order (its layout), are laid down
// as the result's elements in the result's physical order. The byte sizes
// must match; the element types may differ (XLA's simplifier turns
// same-size bitcast-converts into bitcasts), but sub-byte types, which kiln
// stores one per byte, only bitcast to types of their own width.
StatusOr<Literal> EvalBitcast(const HloInstruction& inst, const Literal& in) {
  // The declared operand shape carries the layout (arguments may not).
  Shape in_shape = inst.operand_count() == 1 ? inst.operand(0)->shape() : in.shape();
  if (!in_shape.IsArray() || in_shape.dims() != in.shape().dims()) in_shape = in.shape();
  const Shape& out_shape = inst.shape();
  for (const Shape* s : std::initializer_list<const Shape*>{&in_shape, &out_shape}) {
    if (s->has_layout() && !s->layout()->tiles.empty())
      return Fail(inst, "bitcast of tiled layout " + s->ToString() + " is not supported");
    if (!ValidMinorToMajor(*s)) return Fail(inst, "invalid layout in " + s->ToString());
  }
  ElementType from = in.element_type(), to = out_shape.element_type();
  bool sub_byte = BitWidth(from) < 8 || BitWidth(to) < 8;
  if (out_shape.ByteSize() != in.shape().ByteSize() ||
      (sub_byte && BitWidth(from) != BitWidth(to)))
    return Fail(inst, "bitcast from " + in_shape.ToString() + " to " + out_shape.ToString() +
                          " changes the size in memory");
  int in_bytes = StorageBytes(from), out_bytes = StorageBytes(to);
  std::vector<uint8_t> memory(in.raw_size());
  std::vector<int64_t> in_order = PhysicalOrder(in_shape);
  for (size_t p = 0; p < in_order.size(); ++p)
    std::memcpy(memory.data() + p * in_bytes, in.raw() + in_order[p] * in_bytes, in_bytes);
  std::vector<int64_t> out_order = PhysicalOrder(out_shape);
  Literal out(out_shape);
  for (size_t p = 0; p < out_order.size(); ++p)
    std::memcpy(out.raw() + out_order[p] * out_bytes, memory.data() + p * out_bytes, out_bytes);
  if (IsPred(to))  // keep pred storage canonical (0/1)
    for (int64_t i = 0; i < out.element_count(); ++i) out.raw()[i] = out.raw()[i] != 0;
  return out;
}

}  // namespace

StatusOr<Literal> EvalShapeOp(const HloInstruction& inst, const Operands& operands,
                              EvalContext& /*ctx*/) {
  // copy also applies to tuples (a deep copy, which for values is identity).
  if (inst.opcode() == HloOpcode::kCopy && inst.shape().IsTuple() && operands.size() == 1 &&
      operands[0]->shape().Compatible(inst.shape()))
    return *operands[0];
  if (!inst.shape().IsArray())
    return Fail(inst, std::string(OpcodeName(inst.opcode())) + " must produce an array, not " +
                          inst.shape().ToString(false));
  switch (inst.opcode()) {
    case HloOpcode::kIota:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 0, 0));
      return EvalIota(inst);
    case HloOpcode::kBroadcast:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 1, 1));
      return EvalBroadcast(inst, *operands[0]);
    case HloOpcode::kReshape:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 1, 1));
      return EvalReshape(inst, *operands[0]);
    case HloOpcode::kTranspose:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 1, 1));
      return EvalTranspose(inst, *operands[0]);
    case HloOpcode::kSlice:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 1, 1));
      return EvalSlice(inst, *operands[0]);
    case HloOpcode::kDynamicSlice:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 1, SIZE_MAX));
      return EvalDynamicSlice(inst, operands);
    case HloOpcode::kDynamicUpdateSlice:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 2, SIZE_MAX));
      return EvalDynamicUpdateSlice(inst, operands);
    case HloOpcode::kConcatenate:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 1, SIZE_MAX));
      return EvalConcatenate(inst, operands);
    case HloOpcode::kPad:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 2, 2));
      return EvalPad(inst, operands);
    case HloOpcode::kReverse:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 1, 1));
      return EvalReverse(inst, *operands[0]);
    case HloOpcode::kCopy:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 1, 1));
      return EvalCopy(inst, *operands[0]);
    case HloOpcode::kBitcast:
      KILN_RETURN_IF_ERROR(CheckOperands(inst, operands, 1, 1));
      return EvalBitcast(inst, *operands[0]);
    default:
      return UnsupportedOp(inst);
  }
}

}  // namespace kiln::hlo
