// Shape inference for elementwise operations: unary and binary arithmetic,
// comparisons, conversions, clamp, select and map.
//
// HLO has no implicit broadcasting: every array operand of an elementwise op
// has the result's dimensions (XLA's "Implicit broadcast is not allowed in
// HLO"); the only exceptions are a scalar clamp bound and a scalar select
// predicate. Element types must match exactly (no mixed precision).
#include "compiler/hlo/shape_inference.h"

#include <algorithm>

namespace kiln::hlo::shape_inference {
namespace {

std::string OpName(const HloInstruction& inst) { return std::string(OpcodeName(inst.opcode())); }

Status TypeError(const HloInstruction& inst, const std::string& expected, const Shape& shape) {
  return Fail(inst, OpName(inst) + " expects " + expected + " operands, got " + Str(shape));
}

// Floating point or signed integer ("signed" in XLA's sense).
bool IsSignedElement(ElementType t) { return IsSignedInteger(t) || IsFloat(t); }

Status CheckComparisonType(const HloInstruction& inst, ElementType operand_type) {
  const ComparisonType type = inst.comparison_type();
  if (type == ComparisonType::kDefault) return Status::Ok();
  bool ok;
  if (IsFloat(operand_type) || IsComplex(operand_type))
    ok = type == ComparisonType::kFloat || type == ComparisonType::kTotalOrder ||
         type == ComparisonType::kPartialOrder;
  else if (IsSignedInteger(operand_type))
    ok = type == ComparisonType::kSigned;
  else
    ok = type == ComparisonType::kUnsigned;  // unsigned integers and pred
  if (!ok)
    return Fail(inst, "comparison type " + inst.GetString("type") + " does not fit operands of type " +
                          std::string(ElementTypeName(operand_type)));
  return Status::Ok();
}

}  // namespace

StatusOr<Shape> InferUnary(const HloInstruction& inst) {
  const Shape& shape = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, shape, "the operand of " + OpName(inst)));
  const ElementType t = shape.element_type();
  Shape result = WithoutLayout(shape);
  switch (inst.opcode()) {
    case HloOpcode::kFloor: case HloOpcode::kCeil: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
      if (!IsFloat(t)) return TypeError(inst, "floating-point", shape);
      return result;
    case HloOpcode::kCos: case HloOpcode::kSin: case HloOpcode::kTan: case HloOpcode::kExp:
    case HloOpcode::kExpm1: case HloOpcode::kLog: case HloOpcode::kLog1p:
    case HloOpcode::kLogistic: case HloOpcode::kRsqrt: case HloOpcode::kSqrt:
    case HloOpcode::kCbrt: case HloOpcode::kTanh: case HloOpcode::kErf:
      if (!IsFloat(t) && !IsComplex(t)) return TypeError(inst, "floating-point or complex", shape);
      return result;
    case HloOpcode::kReal: case HloOpcode::kImag:
      if (IsComplex(t)) {
        result.set_element_type(ComplexComponentType(t));
        return result;
      }
      if (!IsFloat(t)) return TypeError(inst, "floating-point or complex", shape);
      return result;
    case HloOpcode::kAbs:
      if (IsComplex(t)) {
        result.set_element_type(ComplexComponentType(t));
        return result;
      }
      if (!IsSignedElement(t)) return TypeError(inst, "signed, floating-point or complex", shape);
      return result;
    case HloOpcode::kClz: case HloOpcode::kPopulationCount:
      if (!IsInteger(t)) return TypeError(inst, "integer", shape);
      return result;
    case HloOpcode::kNegate:
      if (IsPred(t)) return TypeError(inst, "numeric", shape);
      return result;
    case HloOpcode::kSign:
      if (!IsSignedElement(t) && !IsComplex(t))
        return TypeError(inst, "signed, floating-point or complex", shape);
      return result;
    case HloOpcode::kNot:
      if (!IsPred(t) && !IsInteger(t)) return TypeError(inst, "pred or integer", shape);
      return result;
    case HloOpcode::kIsFinite:
      if (!IsFloat(t)) return TypeError(inst, "floating-point", shape);
      result.set_element_type(ElementType::kPred);
      return result;
    default:
      return Error("shape inference not implemented for " + OpName(inst));
  }
}

StatusOr<Shape> InferBinary(const HloInstruction& inst) {
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, lhs, "the lhs of " + OpName(inst)));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, rhs, "the rhs of " + OpName(inst)));
  if (lhs.element_type() != rhs.element_type())
    return Fail(inst, OpName(inst) + " operands have different element types: " + Str(lhs) +
                          " and " + Str(rhs));
  if (lhs.dims() != rhs.dims())
    return Fail(inst, OpName(inst) + " operands have different dimensions: " + Str(lhs) + " and " +
                          Str(rhs) + " (HLO has no implicit broadcast)");
  const ElementType t = lhs.element_type();
  Shape result = WithoutLayout(lhs);
  switch (inst.opcode()) {
    case HloOpcode::kAdd: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
    case HloOpcode::kMultiply:
      return result;
    case HloOpcode::kSubtract: case HloOpcode::kAtan2: case HloOpcode::kPower:
    case HloOpcode::kDivide: case HloOpcode::kRemainder: case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical:
      if (IsPred(t)) return TypeError(inst, "arithmetic (non-pred)", lhs);
      return result;
    case HloOpcode::kAnd: case HloOpcode::kOr: case HloOpcode::kXor:
      if (!IsPred(t) && !IsInteger(t)) return TypeError(inst, "pred or integer", lhs);
      return result;
    case HloOpcode::kComplex:
      if (t == ElementType::kF32) result.set_element_type(ElementType::kC64);
      else if (t == ElementType::kF64) result.set_element_type(ElementType::kC128);
      else return TypeError(inst, "f32 or f64", lhs);
      return result;
    case HloOpcode::kCompare:
      if (!inst.comparison_direction())
        return Fail(inst, "compare has no valid direction (EQ, NE, GE, GT, LE, LT)");
      KILN_RETURN_IF_ERROR(CheckComparisonType(inst, t));
      result.set_element_type(ElementType::kPred);
      return result;
    default:
      return Error("shape inference not implemented for " + OpName(inst));
  }
}

StatusOr<Shape> InferClamp(const HloInstruction& inst) {
  const Shape& min = inst.operand(0)->shape();
  const Shape& x = inst.operand(1)->shape();
  const Shape& max = inst.operand(2)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, min, "clamp min"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, x, "clamp operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, max, "clamp max"));
  for (const Shape* bound : {&min, &max}) {
    if (bound->element_type() != x.element_type())
      return Fail(inst, "clamp bound " + Str(*bound) + " has a different element type than operand " +
                            Str(x));
    if (!bound->IsScalar() && bound->dims() != x.dims())
      return Fail(inst, "clamp bound " + Str(*bound) + " must be a scalar or match operand " +
                            Str(x));
  }
  return WithoutLayout(x);
}

StatusOr<Shape> InferSelect(const HloInstruction& inst) {
  const Shape& pred = inst.operand(0)->shape();
  const Shape& on_true = inst.operand(1)->shape();
  const Shape& on_false = inst.operand(2)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, pred, "select predicate"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, on_true, "select on-true operand"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, on_false, "select on-false operand"));
  if (!on_true.Compatible(on_false))
    return Fail(inst, "select branches differ: " + Str(on_true) + " and " + Str(on_false));
  if (pred.element_type() != ElementType::kPred)
    return Fail(inst, "select predicate must be pred, got " + Str(pred));
  if (!pred.IsScalar() && pred.dims() != on_true.dims())
    return Fail(inst, "select predicate " + Str(pred) + " must be a scalar or match " +
                          Str(on_true));
  return WithoutLayout(on_true);
}

StatusOr<Shape> InferConvert(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of convert"));
  if (!IsArrayType(inst.shape().element_type()))
    return Fail(inst, "convert must produce an array, declared " + Str(inst.shape()));
  Shape result = WithoutLayout(operand);
  result.set_element_type(inst.shape().element_type());
  return result;
}

StatusOr<Shape> InferBitcastConvert(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of bitcast-convert"));
  const ElementType from = operand.element_type();
  const ElementType to = inst.shape().element_type();
  if (!IsArrayType(to))
    return Fail(inst, "bitcast-convert must produce an array, declared " + Str(inst.shape()));
  if (IsComplex(from) != IsComplex(to))
    return Fail(inst, "bitcast-convert cannot convert between complex and real types");
  const int from_bits = BitWidth(from), to_bits = BitWidth(to);
  const int wide = std::max(from_bits, to_bits), narrow = std::min(from_bits, to_bits);
  if (wide % narrow != 0)
    return Fail(inst, "bitcast-convert between bit widths " + std::to_string(from_bits) + " and " +
                          std::to_string(to_bits) + " that do not divide");
  const int64_t ratio = wide / narrow;
  std::vector<int64_t> dims = operand.dims();
  if (from_bits > to_bits) {
    dims.push_back(ratio);  // each wide element becomes `ratio` narrow ones
  } else if (from_bits < to_bits) {
    if (dims.empty() || dims.back() != ratio)
      return Fail(inst, "bitcast-convert from " + Str(operand) + " to " +
                            std::string(ElementTypeName(to)) + " needs a last dimension of " +
                            std::to_string(ratio));
    dims.pop_back();
  }
  return Shape(to, dims);
}

StatusOr<Shape> InferStochasticConvert(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& random = inst.operand(1)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of stochastic-convert"));
  KILN_RETURN_IF_ERROR(ExpectArray(inst, random, "the random operand of stochastic-convert"));
  if (!IsFloat(operand.element_type()))
    return Fail(inst, "stochastic-convert expects a floating-point operand, got " + Str(operand));
  if (!IsUnsignedInteger(random.element_type()) ||
      BitWidth(random.element_type()) != BitWidth(operand.element_type()))
    return Fail(inst, "stochastic-convert random bits " + Str(random) +
                          " must be unsigned with the operand's bit width");
  if (random.dims() != operand.dims())
    return Fail(inst, "stochastic-convert random bits " + Str(random) + " must match operand " +
                          Str(operand));
  if (!IsArrayType(inst.shape().element_type()))
    return Fail(inst, "stochastic-convert must produce an array");
  return Shape(inst.shape().element_type(), operand.dims());
}

StatusOr<Shape> InferReducePrecision(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  KILN_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand of reduce-precision"));
  if (!IsFloat(operand.element_type()))
    return TypeError(inst, "floating-point", operand);
  std::optional<int64_t> exponent = IntAttr(inst, "exponent_bits");
  std::optional<int64_t> mantissa = IntAttr(inst, "mantissa_bits");
  if (!exponent || !mantissa)
    return Fail(inst, "reduce-precision needs exponent_bits and mantissa_bits");
  if (*exponent < 1) return Fail(inst, "reduce-precision needs exponent_bits >= 1");
  if (*mantissa < 0) return Fail(inst, "reduce-precision needs mantissa_bits >= 0");
  return WithoutLayout(operand);
}

StatusOr<Shape> InferMap(const HloInstruction& inst) {
  const Shape& first = inst.operand(0)->shape();
  for (const HloInstruction* operand : inst.operands()) {
    KILN_RETURN_IF_ERROR(ExpectArray(inst, operand->shape(), "map operand"));
    if (operand->shape().dims() != first.dims())
      return Fail(inst, "map operands differ in dimensions: " + Str(first) + " and " +
                            Str(operand->shape()));
  }
  if (inst.HasAttribute("dimensions")) {
    std::vector<int64_t> dims = IntsAttr(inst, "dimensions");
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != static_cast<int64_t>(i) || dims.size() != first.dims().size())
        return Fail(inst, "map dimensions " + Str(dims) + " must be all operand dimensions in order");
  }
  KILN_ASSIGN_OR_RETURN(Signature sig, CalleeSignature(inst, "to_apply"));
  if (sig.parameters.size() != static_cast<size_t>(inst.operand_count()))
    return Fail(inst, "map computation " + sig.name + " takes " +
                          std::to_string(sig.parameters.size()) + " parameters for " +
                          std::to_string(inst.operand_count()) + " operands");
  for (size_t i = 0; i < sig.parameters.size(); ++i) {
    const Shape expected = Shape::Scalar(inst.operand(i)->shape().element_type());
    if (!sig.parameters[i].Compatible(expected))
      return Fail(inst, "map computation " + sig.name + " parameter " + std::to_string(i) +
                            " has shape " + Str(sig.parameters[i]) + ", expected " + Str(expected));
  }
  if (!sig.result.IsScalar())
    return Fail(inst, "map computation " + sig.name + " must return a scalar, returns " +
                          Str(sig.result));
  return Shape(sig.result.element_type(), first.dims());
}

}  // namespace kiln::hlo::shape_inference
