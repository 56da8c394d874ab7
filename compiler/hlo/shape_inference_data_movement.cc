// Shape inference for operations that move or reinterpret data without
// arithmetic: broadcast, reshape, bitcast, transpose, slices, concatenate,
// pad, reverse, iota, tuple and get-tuple-element.
//
// Broadcast, reshape, bitcast and iota take their output dimensions from the
// declared shape (as in HLO text); inference checks them against the
// operand and returns them with the operand's element type, so an element
// type change shows up as a mismatch.
#include <algorithm>

#include "compiler/hlo/shape_inference.h"

namespace kiln::hlo::shape_inference {
namespace {

// Start indices of (dynamic-)slice ops: either one scalar integer per
// operand dimension, all of one type, or (legacy form) a single rank-1
// integer vector with `rank` elements.
Status CheckStartIndices(const HloInstruction& inst, int64_t first_index, int64_t rank) {
  const int64_t count = inst.operand_count() - first_index;
  if (count == 1 && inst.operand(first_index)->shape().rank() == 1) {
    const Shape& v = inst.operand(first_index)->shape();
    if (!IsInteger(v.element_type()) || v.dim(0) != rank)
      return Fail(inst, "start index vector " + Str(v) + " must be an integer vector of " +
                            std::to_string(rank) + " elements");
    return Status::Ok();
  }
  if (count != rank)
    return Fail(inst, "has " + std::to_string(count) + " start indices for an operand of rank " +
                          std::to_string(rank));
  for (int64_t i = first_index; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (!s.IsScalar() || !IsInteger(s.element_type()))
      return Fail(inst, "start index " + std::to_string(i - first_index) +
                            " must be an integer scalar, got " + Str(s));
    if (s.element_type() != inst.operand(first_index)->shape().element_type())
      return Fail(inst, "start indices must all have one type, got " +
                            Str(inst.operand(first_index)->shape()) + " and " + Str(s));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Shape> InferBroadcast(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of broadcast"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, out, "the result of broadcast"));
  const std::vector<int64_t> dims = IntsAttr(inst, "dimensions");
  if (static_cast<int64_t>(dims.size()) != operand.rank())
    return Fail(inst, "broadcast dimensions " + Str(dims) + " must name one output dimension for "
                      "each of the operand's " + std::to_string(operand.rank()) + " dimensions");
  // XLA's HLO verifier does not require the dimensions to be sorted.
  KILN_RETURN_IF_ERROR(CheckDims(inst, dims, out.rank(), "broadcast dimensions"));
  for (size_t i = 0; i < dims.size(); ++i)
    if (out.dim(dims[i]) != operand.dim(i))
      return Fail(inst, "broadcast maps operand dimension " + std::to_string(i) + " (size " +
                            std::to_string(operand.dim(i)) + ") to output dimension " +
                            std::to_string(dims[i]) + " of size " + std::to_string(out.dim(dims[i])));
  return Shape(operand.element_type(), out.dims());
}

StatusOr<Shape> InferReshape(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of reshape"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, inst.shape(), "the result of reshape"));
  if (operand.ElementCount() != inst.shape().ElementCount())
    return Fail(inst, "reshape from " + Str(operand) + " to " + Str(inst.shape()) +
                          " changes the element count");
  return Shape(operand.element_type(), inst.shape().dims());
}

StatusOr<Shape> InferDynamicReshape(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of dynamic-reshape"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, inst.shape(), "the result of dynamic-reshape"));
  if (inst.operand_count() != inst.shape().rank() + 1)
    return Fail(inst, "dynamic-reshape needs one size operand per result dimension");
  for (int64_t i = 1; i < inst.operand_count(); ++i)
    if (!inst.operand(i)->shape().Compatible(Shape::Scalar(ElementType::kS32)))
      return Fail(inst, "dynamic-reshape size operand " + std::to_string(i) + " must be s32[]");
  if (operand.ElementCount() != inst.shape().ElementCount())
    return Fail(inst, "dynamic-reshape from " + Str(operand) + " to " + Str(inst.shape()) +
                          " changes the element count bound");
  Shape result(operand.element_type(), inst.shape().dims());
  for (int64_t i = 0; i < result.rank(); ++i)
    result.set_dynamic_dim(i, inst.shape().is_dynamic_dim(i));
  return result;
}

StatusOr<Shape> InferBitcast(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of bitcast"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, inst.shape(), "the result of bitcast"));
  // A bitcast reinterprets the same buffer: it may change dimensions, layout
  // and even element type, but not the number of bits.
  const int64_t from_bits = operand.ElementCount() * BitWidth(operand.element_type());
  const int64_t to_bits = inst.shape().ElementCount() * BitWidth(inst.shape().element_type());
  if (from_bits != to_bits)
    return Fail(inst, "bitcast from " + Str(operand) + " to " + Str(inst.shape()) +
                          " changes the data size");
  return WithoutLayout(inst.shape());
}

StatusOr<Shape> InferTranspose(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of transpose"));
  const std::vector<int64_t> perm = IntsAttr(inst, "dimensions");
  if (static_cast<int64_t>(perm.size()) != operand.rank())
    return Fail(inst, "transpose dimensions " + Str(perm) + " are not a permutation of rank " +
                          std::to_string(operand.rank()));
  KILN_RETURN_IF_ERROR(CheckDims(inst, perm, operand.rank(), "transpose dimensions"));
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(operand.dim(p));  // output dim i is input dim perm[i]
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferSlice(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of slice"));
  std::vector<SliceDim> slice;
  if (const auto* s = inst.GetAttribute<std::vector<SliceDim>>("slice")) slice = *s;
  if (static_cast<int64_t>(slice.size()) != operand.rank())
    return Fail(inst, "slice has " + std::to_string(slice.size()) +
                          " ranges for an operand of rank " + std::to_string(operand.rank()));
  std::vector<int64_t> dims;
  for (size_t i = 0; i < slice.size(); ++i) {
    const SliceDim& s = slice[i];
    const std::string range = "slice range [" + std::to_string(s.start) + ":" +
                              std::to_string(s.limit) + ":" + std::to_string(s.stride) +
                              "] of dimension " + std::to_string(i);
    if (s.start < 0 || s.start > s.limit || s.limit > operand.dim(i))
      return Fail(inst, range + " is outside [0, " + std::to_string(operand.dim(i)) + "]");
    if (s.stride <= 0) return Fail(inst, range + " needs a positive stride");
    dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  }
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferDynamicSlice(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of dynamic-slice"));
  KILN_RETURN_IF_ERROR(CheckStartIndices(inst, 1, operand.rank()));
  const std::vector<int64_t> sizes = IntsAttr(inst, "dynamic_slice_sizes");
  if (static_cast<int64_t>(sizes.size()) != operand.rank())
    return Fail(inst, "dynamic_slice_sizes " + Str(sizes) + " must have one size per dimension of " +
                          Str(operand));
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < 0 || sizes[i] > operand.dim(i))
      return Fail(inst, "dynamic slice size " + std::to_string(sizes[i]) + " of dimension " +
                            std::to_string(i) + " is outside [0, " +
                            std::to_string(operand.dim(i)) + "]");
  return Shape(operand.element_type(), sizes);
}

StatusOr<Shape> InferDynamicUpdateSlice(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& update = inst.operand(1)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of dynamic-update-slice"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, update, "the update of dynamic-update-slice"));
  KILN_RETURN_IF_ERROR(CheckStartIndices(inst, 2, operand.rank()));
  if (update.element_type() != operand.element_type())
    return Fail(inst, "update " + Str(update) + " has a different element type than operand " +
                          Str(operand));
  if (update.rank() != operand.rank())
    return Fail(inst, "update " + Str(update) + " has a different rank than operand " + Str(operand));
  for (int64_t i = 0; i < operand.rank(); ++i)
    if (update.dim(i) > operand.dim(i))
      return Fail(inst, "update " + Str(update) + " is larger than operand " + Str(operand) +
                            " in dimension " + std::to_string(i));
  return WithoutLayout(operand);
}

StatusOr<Shape> InferConcatenate(const HloInstruction& inst) {
  const Shape& first = inst.operand(0)->shape();
  std::optional<int64_t> dim = IntAttr(inst, "dimensions");
  if (!dim) return Fail(inst, "concatenate needs dimensions={d}");
  for (const HloInstruction* operand : inst.operands())
    KILN_RETURN_IF_ERROR(ExpectArray(inst, operand->shape(), "concatenate operand"));
  if (*dim < 0 || *dim >= first.rank())
    return Fail(inst, "concatenate dimension " + std::to_string(*dim) + " is out of range for " +
                          Str(first));
  std::vector<int64_t> dims = first.dims();
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (s.element_type() != first.element_type() || s.rank() != first.rank())
      return Fail(inst, "cannot concatenate " + Str(first) + " and " + Str(s));
    for (int64_t d = 0; d < s.rank(); ++d)
      if (d != *dim && s.dim(d) != first.dim(d))
        return Fail(inst, "cannot concatenate " + Str(first) + " and " + Str(s) +
                              ": dimension " + std::to_string(d) + " differs");
    dims[*dim] += s.dim(*dim);
  }
  return Shape(first.element_type(), dims);
}

StatusOr<Shape> InferPad(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& value = inst.operand(1)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of pad"));
  if (!value.IsScalar() || value.element_type() != operand.element_type())
    return Fail(inst, "padding value " + Str(value) + " must be a scalar of the operand's type");
  PaddingConfig config;
  if (const auto* p = inst.GetAttribute<PaddingConfig>("padding")) config = *p;
  if (static_cast<int64_t>(config.dims.size()) != operand.rank())
    return Fail(inst, "padding has " + std::to_string(config.dims.size()) +
                          " dimensions for an operand of rank " + std::to_string(operand.rank()));
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PadDim& p = config.dims[i];
    if (p.interior < 0)
      return Fail(inst, "interior padding of dimension " + std::to_string(i) + " is negative");
    const int64_t size =
        operand.dim(i) + p.low + p.high + std::max<int64_t>(operand.dim(i) - 1, 0) * p.interior;
    if (size < 0)
      return Fail(inst, "padding makes dimension " + std::to_string(i) + " negative (" +
                            std::to_string(size) + ")");
    dims.push_back(size);
  }
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferReverse(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of reverse"));
  KILN_RETURN_IF_ERROR(
      CheckDims(inst, IntsAttr(inst, "dimensions"), operand.rank(), "reverse dimensions"));
  return WithoutLayout(operand);
}

StatusOr<Shape> InferIota(const HloInstruction& inst) {
  const Shape& out = inst.shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, out, "the result of iota"));
  if (out.rank() == 0) return Fail(inst, "iota cannot produce a scalar");
  std::optional<int64_t> dim = IntAttr(inst, "iota_dimension");
  if (!dim || *dim < 0 || *dim >= out.rank())
    return Fail(inst, "iota_dimension must be in [0, " + std::to_string(out.rank()) + ")");
  const ElementType t = out.element_type();
  if (!IsInteger(t) && !IsFloat(t) && !IsComplex(t))
    return Fail(inst, "iota cannot produce elements of type " + std::string(ElementTypeName(t)));
  return WithoutLayout(out);
}

StatusOr<Shape> InferTuple(const HloInstruction& inst) {
  std::vector<Shape> elements;
  for (const HloInstruction* operand : inst.operands())
    elements.push_back(WithoutLayout(operand->shape()));
  return Shape::Tuple(std::move(elements));
}

StatusOr<Shape> InferGetTupleElement(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  if (!operand.IsTuple())
    return Fail(inst, "get-tuple-element of non-tuple " + Str(operand));
  std::optional<int64_t> index = IntAttr(inst, "index");
  if (!index) return Fail(inst, "get-tuple-element needs index=");
  if (*index < 0 || *index >= operand.tuple_size())
    return Fail(inst, "tuple index " + std::to_string(*index) + " is out of range for " +
                          Str(operand));
  return WithoutLayout(operand.tuple_shape(*index));
}

}  // namespace kiln::hlo::shape_inference
