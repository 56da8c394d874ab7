// Shape inference for reductions and sorting: reduce, reduce-window,
// select-and-scatter, sort and topk.
//
// Variadic reduce and reduce-window take N inputs followed by N init values;
// their reducer maps (acc_0..acc_N-1, x_0..x_N-1) to an N-tuple (or, for
// N == 1, a scalar), and the result is one array per input.
#include "compiler/hlo/shape_inference.h"

#include <algorithm>

namespace kiln::hlo::shape_inference {
namespace {

struct VariadicOperands {
  std::vector<Shape> inputs, inits;
  std::vector<ElementType> input_types;
};

// Splits N inputs + N init values, checking that the inputs share dimensions
// and the init values are scalars.
StatusOr<VariadicOperands> SplitInputsAndInits(const HloInstruction& inst) {
  VariadicOperands ops;
  const int64_t n = inst.operand_count() / 2;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = inst.operand(i)->shape();
    const Shape& init = inst.operand(n + i)->shape();
    KILN_RETURN_IF_ERROR(ExpectArray(inst, input, "input " + std::to_string(i)));
    if (!init.IsScalar())
      return Fail(inst, "init value " + std::to_string(i) + " must be a scalar, got " + Str(init));
    if (input.dims() != inst.operand(0)->shape().dims())
      return Fail(inst, "inputs differ in dimensions: " + Str(inst.operand(0)->shape()) + " and " +
                            Str(input));
    ops.inputs.push_back(WithoutLayout(input));
    ops.inits.push_back(WithoutLayout(init));
    ops.input_types.push_back(input.element_type());
  }
  return ops;
}

// One array per input, each with `dims` and its accumulator's element type;
// a single array when the reducer returns a scalar.
Shape ReductionResult(const Signature& reducer, const std::vector<int64_t>& dims) {
  if (!reducer.result.IsTuple()) return Shape(reducer.result.element_type(), dims);
  std::vector<Shape> elements;
  for (const Shape& acc : reducer.result.tuple_shapes())
    elements.push_back(Shape(acc.element_type(), dims));
  return Shape::Tuple(std::move(elements));
}

// The select computation of select-and-scatter: (T, T) -> pred[].
Status CheckSelectComputation(const HloInstruction& inst, const Signature& select,
                              ElementType operand_type) {
  const Shape element = Shape::Scalar(operand_type);
  if (select.parameters.size() != 2)
    return Fail(inst, "select computation " + select.name + " must take 2 parameters, takes " +
                          std::to_string(select.parameters.size()));
  for (const Shape& p : select.parameters)
    if (!p.Compatible(element))
      return Fail(inst, "select computation " + select.name + " parameter has shape " + Str(p) +
                            ", expected " + Str(element));
  if (!select.result.Compatible(Shape::Scalar(ElementType::kPred)))
    return Fail(inst, "select computation " + select.name + " must return pred[], returns " +
                          Str(select.result));
  return Status::Ok();
}

}  // namespace

StatusOr<Shape> InferReduce(const HloInstruction& inst) {
  KILN_ASSIGN_OR_RETURN(VariadicOperands ops, SplitInputsAndInits(inst));
  const std::vector<int64_t> reduced = IntsAttr(inst, "dimensions");
  const Shape& arg = ops.inputs[0];
  KILN_RETURN_IF_ERROR(CheckDims(inst, reduced, arg.rank(), "reduce dimensions"));
  KILN_ASSIGN_OR_RETURN(Signature reducer, CalleeSignature(inst, "to_apply"));
  KILN_RETURN_IF_ERROR(CheckReducer(inst, reducer, ops.inits, ops.input_types));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < arg.rank(); ++d)
    if (!Contains(reduced, d)) dims.push_back(arg.dim(d));
  return ReductionResult(reducer, dims);
}

StatusOr<Shape> InferReduceWindow(const HloInstruction& inst) {
  KILN_ASSIGN_OR_RETURN(VariadicOperands ops, SplitInputsAndInits(inst));
  KILN_ASSIGN_OR_RETURN(Signature reducer, CalleeSignature(inst, "to_apply"));
  KILN_RETURN_IF_ERROR(CheckReducer(inst, reducer, ops.inits, ops.input_types));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                        WindowOutputDims(inst, ops.inputs[0].dims(), WindowAttr(inst)));
  return ReductionResult(reducer, dims);
}

StatusOr<Shape> InferSelectAndScatter(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& source = inst.operand(1)->shape();
  const Shape& init = inst.operand(2)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of select-and-scatter"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, source, "the source of select-and-scatter"));
  if (!init.IsScalar())
    return Fail(inst, "init value must be a scalar, got " + Str(init));
  KILN_ASSIGN_OR_RETURN(Signature select, CalleeSignature(inst, "select"));
  KILN_RETURN_IF_ERROR(CheckSelectComputation(inst, select, operand.element_type()));
  KILN_ASSIGN_OR_RETURN(Signature scatter, CalleeSignature(inst, "scatter"));
  KILN_RETURN_IF_ERROR(
      CheckReducer(inst, scatter, {WithoutLayout(init)}, {source.element_type()}));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> window_dims,
                        WindowOutputDims(inst, operand.dims(), WindowAttr(inst)));
  if (source.dims() != window_dims)
    return Fail(inst, "source " + Str(source) + " does not match the windowed operand dimensions " +
                          Str(window_dims));
  return WithoutLayout(operand);
}

StatusOr<Shape> InferSort(const HloInstruction& inst) {
  const Shape& keys = inst.operand(0)->shape();
  for (const HloInstruction* operand : inst.operands()) {
    KILN_RETURN_IF_ERROR(ExpectArray(inst, operand->shape(), "sort operand"));
    if (operand->shape().dims() != keys.dims())
      return Fail(inst, "sort operands differ in dimensions: " + Str(keys) + " and " +
                            Str(operand->shape()));
  }
  const std::vector<int64_t> dims = IntsAttr(inst, "dimensions");
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= keys.rank())
    return Fail(inst, "sort dimension " + Str(dims) + " must be one dimension of " + Str(keys));
  KILN_ASSIGN_OR_RETURN(Signature cmp, CalleeSignature(inst, "to_apply"));
  if (cmp.parameters.size() != 2 * static_cast<size_t>(inst.operand_count()))
    return Fail(inst, "comparator " + cmp.name + " must take " +
                          std::to_string(2 * inst.operand_count()) + " parameters, takes " +
                          std::to_string(cmp.parameters.size()));
  for (size_t p = 0; p < cmp.parameters.size(); ++p) {
    const Shape expected = Shape::Scalar(inst.operand(p / 2)->shape().element_type());
    if (!cmp.parameters[p].Compatible(expected))
      return Fail(inst, "comparator " + cmp.name + " parameter " + std::to_string(p) +
                            " has shape " + Str(cmp.parameters[p]) + ", expected " + Str(expected));
  }
  if (!cmp.result.Compatible(Shape::Scalar(ElementType::kPred)))
    return Fail(inst, "comparator " + cmp.name + " must return pred[], returns " + Str(cmp.result));
  if (inst.operand_count() == 1) return WithoutLayout(keys);
  std::vector<Shape> elements;
  for (const HloInstruction* operand : inst.operands())
    elements.push_back(WithoutLayout(operand->shape()));
  return Shape::Tuple(std::move(elements));
}

StatusOr<Shape> InferTopK(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of topk"));
  if (operand.rank() < 1) return Fail(inst, "topk needs an operand of rank >= 1");
  std::optional<int64_t> k = IntAttr(inst, "k");
  if (!k || *k < 0 || *k > operand.dims().back())
    return Fail(inst, "topk k must be in [0, " + std::to_string(operand.dims().back()) + "]");
  std::vector<int64_t> dims = operand.dims();
  dims.back() = *k;
  return Shape::Tuple({Shape(operand.element_type(), dims), Shape(ElementType::kS32, dims)});
}

}  // namespace kiln::hlo::shape_inference
