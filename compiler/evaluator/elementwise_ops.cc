// The evaluator's elementwise op group: arithmetic, logic, comparisons,
// conversions, clamp, select, reduce-precision and map.
//
// Every op checks its operands against the declared result shape (the
// verifier may not have run) and refuses op/type combinations XLA does not
// define, naming the instruction, rather than guessing. Values are computed
// per value class by the tables in elementwise_math.h and rounded/wrapped
// once when stored in the result element type.
#include <algorithm>
#include <cmath>

#include "common/float_formats.h"
#include "compiler/evaluator/element_conversion.h"
#include "compiler/evaluator/elementwise_math.h"
#include "compiler/evaluator/eval_attrs.h"
#include "compiler/evaluator/op_evaluators.h"

namespace kiln::hlo {
namespace {

using elementwise::IntType;

std::string TypeName(ElementType t) { return std::string(ElementTypeName(t)); }
std::string OpName(const HloInstruction& inst) { return std::string(OpcodeName(inst.opcode())); }

Status TypeError(const HloInstruction& inst, ElementType t) {
  return Error(inst.DebugName() + ": " + OpName(inst) + " is not defined for element type " +
               TypeName(t));
}

Status CheckOperandCount(const HloInstruction& inst, const Operands& operands, size_t n) {
  if (operands.size() != n)
    return Error(inst.DebugName() + ": " + OpName(inst) + " takes " + std::to_string(n) +
                 " operands, got " + std::to_string(operands.size()));
  return Status::Ok();
}

// Operand `index` must be an array with the result's dimensions.
Status CheckSameDims(const HloInstruction& inst, const Operands& operands, size_t index) {
  const Shape& s = operands[index]->shape();
  if (!s.IsArray() || s.dims() != inst.shape().dims())
    return Error(inst.DebugName() + ": operand " + std::to_string(index) + " has shape " +
                 s.ToString(false) + ", expected the dimensions of " +
                 inst.shape().ToString(false));
  return Status::Ok();
}

Status CheckElementType(const HloInstruction& inst, const Literal& operand, ElementType expected) {
  if (operand.element_type() != expected)
    return Error(inst.DebugName() + ": operand element type " + TypeName(operand.element_type()) +
                 " does not match " + TypeName(expected));
  return Status::Ok();
}

IntType IntTypeOf(ElementType t) { return IntType{BitWidth(t), IsSignedInteger(t)}; }

// ---------------------------------------------------------------------------
// Unary and binary arithmetic with one element type throughout.

StatusOr<Literal> EvalUnary(const HloInstruction& inst, const Literal& in) {
  ElementType t = in.element_type();
  KILN_RETURN_IF_ERROR(CheckElementType(inst, in, inst.shape().element_type()));
  Literal out(inst.shape());
  int64_t n = in.element_count();
  if (IsPred(t)) {
    auto fn = elementwise::FindPredUnary(inst.opcode());
    if (!fn) return TypeError(inst, t);
    for (int64_t i = 0; i < n; ++i) out.SetPred(i, fn(in.GetPred(i)));
  } else if (IsInteger(t)) {
    auto fn = elementwise::FindIntUnary(inst.opcode());
    if (!fn) return TypeError(inst, t);
    IntType it = IntTypeOf(t);
    for (int64_t i = 0; i < n; ++i) out.SetU64(i, fn(in.GetU64(i), it));
  } else if (IsFloat(t)) {
    auto fn = elementwise::FindRealUnary(inst.opcode());
    if (!fn) return TypeError(inst, t);
    for (int64_t i = 0; i < n; ++i) out.SetF64(i, fn(in.GetF64(i)));
  } else if (IsComplex(t)) {
    auto fn = elementwise::FindComplexUnary(inst.opcode());
    if (!fn) return TypeError(inst, t);
    for (int64_t i = 0; i < n; ++i) out.SetC128(i, fn(in.GetC128(i)));
  } else {
    return TypeError(inst, t);
  }
  return out;
}

StatusOr<Literal> EvalBinary(const HloInstruction& inst, const Literal& a, const Literal& b) {
  ElementType t = a.element_type();
  KILN_RETURN_IF_ERROR(CheckElementType(inst, a, inst.shape().element_type()));
  KILN_RETURN_IF_ERROR(CheckElementType(inst, b, t));
  Literal out(inst.shape());
  int64_t n = a.element_count();
  if (IsPred(t)) {
    auto fn = elementwise::FindPredBinary(inst.opcode());
    if (!fn) return TypeError(inst, t);
    for (int64_t i = 0; i < n; ++i) out.SetPred(i, fn(a.GetPred(i), b.GetPred(i)));
  } else if (IsInteger(t)) {
    auto fn = elementwise::FindIntBinary(inst.opcode());
    if (!fn) return TypeError(inst, t);
    IntType it = IntTypeOf(t);
    for (int64_t i = 0; i < n; ++i) out.SetU64(i, fn(a.GetU64(i), b.GetU64(i), it));
  } else if (IsFloat(t)) {
    auto fn = elementwise::FindRealBinary(inst.opcode());
    if (!fn) return TypeError(inst, t);
    for (int64_t i = 0; i < n; ++i) out.SetF64(i, fn(a.GetF64(i), b.GetF64(i)));
  } else if (IsComplex(t)) {
    auto fn = elementwise::FindComplexBinary(inst.opcode());
    if (!fn) return TypeError(inst, t);
    for (int64_t i = 0; i < n; ++i) out.SetC128(i, fn(a.GetC128(i), b.GetC128(i)));
  } else {
    return TypeError(inst, t);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Comparison.

bool Holds(ComparisonDirection dir, bool less, bool equal, bool greater) {
  switch (dir) {
    case ComparisonDirection::kEq: return equal;
    case ComparisonDirection::kNe: return !equal;
    case ComparisonDirection::kLt: return less;
    case ComparisonDirection::kLe: return less || equal;
    case ComparisonDirection::kGt: return greater;
    case ComparisonDirection::kGe: return greater || equal;
  }
  return false;
}

template <typename T>
bool Compare3(ComparisonDirection dir, T a, T b) {
  return Holds(dir, a < b, a == b, b < a);  // NaN: all three false
}

StatusOr<Literal> EvalCompare(const HloInstruction& inst, const Literal& a, const Literal& b) {
  std::optional<ComparisonDirection> dir = inst.comparison_direction();
  if (!dir) return Error(inst.DebugName() + ": compare needs direction=EQ|NE|LT|LE|GT|GE");
  if (!IsPred(inst.shape().element_type()))
    return Error(inst.DebugName() + ": compare must produce pred, not " +
                 TypeName(inst.shape().element_type()));
  ElementType t = a.element_type();
  KILN_RETURN_IF_ERROR(CheckElementType(inst, b, t));
  ComparisonType type = inst.comparison_type();
  bool is_int = IsInteger(t) || IsPred(t);
  if (type == ComparisonType::kDefault)
    type = IsFloat(t) || IsComplex(t) ? ComparisonType::kFloat
           : IsSignedInteger(t)       ? ComparisonType::kSigned
                                      : ComparisonType::kUnsigned;
  if (type == ComparisonType::kPartialOrder) type = ComparisonType::kFloat;
  bool int_type = type == ComparisonType::kSigned || type == ComparisonType::kUnsigned;
  if (is_int != int_type || (IsComplex(t) && type != ComparisonType::kFloat))
    return Error(inst.DebugName() + ": comparison type " + inst.GetString("type") +
                 " does not apply to element type " + TypeName(t));
  if (IsComplex(t) && *dir != ComparisonDirection::kEq && *dir != ComparisonDirection::kNe)
    return Error(inst.DebugName() + ": complex values are only compared with EQ or NE");

  Literal out(inst.shape());
  int64_t n = a.element_count();
  for (int64_t i = 0; i < n; ++i) {
    bool r;
    if (IsComplex(t)) {
      bool equal = a.GetC128(i) == b.GetC128(i);
      r = *dir == ComparisonDirection::kEq ? equal : !equal;
    } else if (type == ComparisonType::kFloat) {
      r = Compare3(*dir, a.GetF64(i), b.GetF64(i));
    } else if (type == ComparisonType::kTotalOrder) {
      r = Compare3(*dir, TotalOrderKey(t, RawBits(a, i)), TotalOrderKey(t, RawBits(b, i)));
    } else if (type == ComparisonType::kSigned) {
      IntType it{BitWidth(t), true};
      r = Compare3(*dir, static_cast<int64_t>(elementwise::Canonical(a.GetU64(i), it)),
                   static_cast<int64_t>(elementwise::Canonical(b.GetU64(i), it)));
    } else {
      IntType it{IsPred(t) ? 8 : BitWidth(t), false};
      r = Compare3(*dir, elementwise::Canonical(a.GetU64(i), it),
                   elementwise::Canonical(b.GetU64(i), it));
    }
    out.SetPred(i, r);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Conversions and ops whose result type differs from the operand's.

StatusOr<Literal> EvalConvert(const HloInstruction& inst, const Literal& in) {
  Literal out(inst.shape());
  for (int64_t i = 0; i < in.element_count(); ++i) ConvertElement(in, i, out, i);
  return out;
}

StatusOr<Literal> EvalBitcastConvert(const HloInstruction& inst, const Literal& in) {
  Literal out(inst.shape());
  Status s = BitcastConvertInto(in, out);
  if (!s.ok()) return s.WithContext(inst.DebugName());
  return out;
}

StatusOr<Literal> EvalReducePrecision(const HloInstruction& inst, const Literal& in) {
  ElementType t = in.element_type();
  KILN_RETURN_IF_ERROR(CheckElementType(inst, in, inst.shape().element_type()));
  if (!IsFloat(t)) return TypeError(inst, t);
  int64_t exponent_bits = eval::IntAttr(inst, "exponent_bits").value_or(-1);
  int64_t mantissa_bits = eval::IntAttr(inst, "mantissa_bits").value_or(-1);
  if (exponent_bits < 1 || mantissa_bits < 0)
    return Error(inst.DebugName() + ": reduce-precision needs exponent_bits >= 1 and "
                 "mantissa_bits >= 0");
  Literal out(inst.shape());
  for (int64_t i = 0; i < in.element_count(); ++i)
    out.SetF64(i, ReducePrecision(t, in.GetF64(i), static_cast<int>(exponent_bits),
                                  static_cast<int>(mantissa_bits)));
  return out;
}

// real/imag of complex give the component type; of a real float, the value
// and zero. abs of complex is its magnitude in the component type.
StatusOr<Literal> EvalComplexPart(const HloInstruction& inst, const Literal& in) {
  ElementType t = in.element_type();
  ElementType expected = IsComplex(t) ? ComplexComponentType(t) : t;
  if (!IsComplex(t) && !IsFloat(t)) return TypeError(inst, t);
  if (inst.shape().element_type() != expected)
    return Error(inst.DebugName() + ": " + OpName(inst) + " of " + TypeName(t) + " produces " +
                 TypeName(expected) + ", not " + TypeName(inst.shape().element_type()));
  Literal out(inst.shape());
  for (int64_t i = 0; i < in.element_count(); ++i) {
    std::complex<double> c = in.GetC128(i);
    double v = inst.opcode() == HloOpcode::kReal ? c.real()
               : inst.opcode() == HloOpcode::kImag ? c.imag()
                                                   : std::abs(c);
    out.SetF64(i, v);
  }
  return out;
}

StatusOr<Literal> EvalMakeComplex(const HloInstruction& inst, const Literal& re, const Literal& im) {
  ElementType t = re.element_type();
  KILN_RETURN_IF_ERROR(CheckElementType(inst, im, t));
  ElementType result = inst.shape().element_type();
  if (!IsComplex(result) || ComplexComponentType(result) != t)
    return Error(inst.DebugName() + ": complex of " + TypeName(t) + " cannot produce " +
                 TypeName(result));
  Literal out(inst.shape());
  for (int64_t i = 0; i < re.element_count(); ++i)
    out.SetC128(i, {re.GetF64(i), im.GetF64(i)});
  return out;
}

StatusOr<Literal> EvalIsFinite(const HloInstruction& inst, const Literal& in) {
  if (!IsFloat(in.element_type())) return TypeError(inst, in.element_type());
  if (!IsPred(inst.shape().element_type()))
    return Error(inst.DebugName() + ": is-finite must produce pred");
  Literal out(inst.shape());
  for (int64_t i = 0; i < in.element_count(); ++i) out.SetPred(i, std::isfinite(in.GetF64(i)));
  return out;
}

// XLA's stochastic rounding of a float to an integer type, driven by an
// unsigned random value of the float's width: the magnitude rounds up when
// random < fraction * 2^bits. inf and out-of-range values saturate, NaN is 0.
StatusOr<Literal> EvalStochasticConvert(const HloInstruction& inst, const Literal& x,
                                        const Literal& random) {
  ElementType t = x.element_type(), r = inst.shape().element_type();
  if (!IsFloat(t) || !IsInteger(r) || !IsUnsignedInteger(random.element_type()) ||
      BitWidth(random.element_type()) != BitWidth(t))
    return Error(inst.DebugName() + ": stochastic-convert needs a float operand, unsigned random "
                 "bits of the same width and an integer result");
  IntType rt = IntTypeOf(r);
  double max = rt.is_signed ? std::ldexp(1.0, rt.bits - 1) - 1 : std::ldexp(1.0, rt.bits) - 1;
  double min = rt.is_signed ? -std::ldexp(1.0, rt.bits - 1) : 0;
  Literal out(inst.shape());
  for (int64_t i = 0; i < x.element_count(); ++i) {
    double v = x.GetF64(i);
    if (std::isnan(v) || v >= max || v <= min) {
      ConvertElement(x, i, out, i);  // NaN -> 0, saturation
      continue;
    }
    double magnitude = std::fabs(v);
    double truncated = std::trunc(magnitude);
    double fraction = magnitude - truncated;  // exact
    uint64_t fixed = static_cast<uint64_t>(std::ldexp(fraction, BitWidth(t)));
    if (fraction != 0 && random.GetU64(i) < fixed) truncated += 1;
    out.SetS64(i, static_cast<int64_t>(std::signbit(v) ? -truncated : truncated));
  }
  return out;
}

// ---------------------------------------------------------------------------
// select, clamp, map.

StatusOr<Literal> EvalSelect(const HloInstruction& inst, const Operands& ops) {
  const Literal& pred = *ops[0];
  if (!pred.shape().IsArray() || !IsPred(pred.element_type()))
    return Error(inst.DebugName() + ": select's first operand must be pred");
  if (!pred.shape().IsScalar()) KILN_RETURN_IF_ERROR(CheckSameDims(inst, ops, 0));
  for (size_t k = 1; k < 3; ++k) {
    KILN_RETURN_IF_ERROR(CheckSameDims(inst, ops, k));
    KILN_RETURN_IF_ERROR(CheckElementType(inst, *ops[k], inst.shape().element_type()));
  }
  Literal out(inst.shape());
  bool scalar = pred.shape().IsScalar();
  for (int64_t i = 0; i < out.element_count(); ++i)
    out.CopyElementFrom(i, pred.GetPred(scalar ? 0 : i) ? *ops[1] : *ops[2], i);
  return out;
}

// clamp(lo, x, hi) = min(max(x, lo), hi) with XLA's NaN rule: a NaN among
// lo, x, hi (in that order) is the result. lo and hi may be scalars.
StatusOr<Literal> EvalClamp(const HloInstruction& inst, const Operands& ops) {
  ElementType t = inst.shape().element_type();
  KILN_RETURN_IF_ERROR(CheckSameDims(inst, ops, 1));
  for (size_t k = 0; k < 3; ++k) {
    if (k != 1 && !ops[k]->shape().IsScalar()) KILN_RETURN_IF_ERROR(CheckSameDims(inst, ops, k));
    KILN_RETURN_IF_ERROR(CheckElementType(inst, *ops[k], t));
  }
  if (IsComplex(t)) return TypeError(inst, t);
  const Literal &lo = *ops[0], &x = *ops[1], &hi = *ops[2];
  bool lo_scalar = lo.shape().IsScalar(), hi_scalar = hi.shape().IsScalar();
  IntType it{IsPred(t) ? 8 : BitWidth(t), IsSignedInteger(t)};
  auto less = [&](const Literal& a, int64_t i, const Literal& b, int64_t j) {
    if (IsFloat(t)) return a.GetF64(i) < b.GetF64(j);
    uint64_t u = a.GetU64(i), v = b.GetU64(j);
    return it.is_signed ? static_cast<int64_t>(u) < static_cast<int64_t>(v) : u < v;
  };
  Literal out(inst.shape());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    int64_t li = lo_scalar ? 0 : i, hi_i = hi_scalar ? 0 : i;
    const Literal* src = &x;
    int64_t si = i;
    if (IsFloat(t) && std::isnan(lo.GetF64(li))) {
      src = &lo, si = li;
    } else if (IsFloat(t) && std::isnan(x.GetF64(i))) {
      // x itself
    } else if (IsFloat(t) && std::isnan(hi.GetF64(hi_i))) {
      src = &hi, si = hi_i;
    } else {
      if (less(x, i, lo, li)) src = &lo, si = li;          // max(x, lo)
      if (!less(*src, si, hi, hi_i)) src = &hi, si = hi_i;  // min(hi, .) keeps hi on ties
    }
    out.CopyElementFrom(i, *src, si);
  }
  return out;
}

StatusOr<Literal> EvalMap(const HloInstruction& inst, const Operands& ops, EvalContext& ctx) {
  const HloComputation* fn = inst.to_apply();
  if (!fn) return Error(inst.DebugName() + ": map needs to_apply");
  if (ops.empty()) return Error(inst.DebugName() + ": map needs at least one operand");
  for (size_t k = 0; k < ops.size(); ++k) KILN_RETURN_IF_ERROR(CheckSameDims(inst, ops, k));
  Literal out(inst.shape());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    std::vector<Literal> args;
    for (const Literal* op : ops) {
      Literal scalar(Shape::Scalar(op->element_type()));
      scalar.CopyElementFrom(0, *op, i);
      args.push_back(std::move(scalar));
    }
    StatusOr<Literal> r = ctx.Call(*fn, std::move(args));
    if (!r.ok()) return r.status().WithContext("in " + inst.DebugName());
    if (!r->shape().IsScalar() || r->element_type() != out.element_type())
      return Error(inst.DebugName() + ": map computation returned " +
                   r->shape().ToString(false) + ", expected a " +
                   TypeName(out.element_type()) + " scalar");
    out.CopyElementFrom(i, *r, 0);
  }
  return out;
}

StatusOr<Literal> Dispatch(const HloInstruction& inst, const Operands& ops, EvalContext& ctx) {
  HloOpcode op = inst.opcode();
  switch (op) {
    case HloOpcode::kSelect:
      KILN_RETURN_IF_ERROR(CheckOperandCount(inst, ops, 3));
      return EvalSelect(inst, ops);
    case HloOpcode::kClamp:
      KILN_RETURN_IF_ERROR(CheckOperandCount(inst, ops, 3));
      return EvalClamp(inst, ops);
    case HloOpcode::kMap:
      return EvalMap(inst, ops, ctx);
    case HloOpcode::kBitcastConvert:
      KILN_RETURN_IF_ERROR(CheckOperandCount(inst, ops, 1));
      if (!ops[0]->shape().IsArray()) return Error(inst.DebugName() + ": operand must be an array");
      return EvalBitcastConvert(inst, *ops[0]);
    default:
      break;
  }
  bool binary = IsElementwiseBinary(op);
  if (!binary && !IsElementwiseUnary(op)) return UnsupportedOp(inst);
  KILN_RETURN_IF_ERROR(CheckOperandCount(inst, ops, binary ? 2 : 1));
  for (size_t k = 0; k < ops.size(); ++k) KILN_RETURN_IF_ERROR(CheckSameDims(inst, ops, k));
  const Literal& a = *ops[0];
  switch (op) {
    case HloOpcode::kConvert: return EvalConvert(inst, a);
    case HloOpcode::kReducePrecision: return EvalReducePrecision(inst, a);
    case HloOpcode::kIsFinite: return EvalIsFinite(inst, a);
    case HloOpcode::kReal:
    case HloOpcode::kImag: return EvalComplexPart(inst, a);
    case HloOpcode::kAbs:
      if (IsComplex(a.element_type())) return EvalComplexPart(inst, a);
      return EvalUnary(inst, a);
    case HloOpcode::kCopy: {
      KILN_RETURN_IF_ERROR(CheckElementType(inst, a, inst.shape().element_type()));
      Literal out(inst.shape());  // bit-exact, NaN payloads included
      std::copy(a.raw(), a.raw() + a.raw_size(), out.raw());
      return out;
    }
    case HloOpcode::kCompare: return EvalCompare(inst, a, *ops[1]);
    case HloOpcode::kComplex: return EvalMakeComplex(inst, a, *ops[1]);
    case HloOpcode::kStochasticConvert: return EvalStochasticConvert(inst, a, *ops[1]);
    default:
      return binary ? EvalBinary(inst, a, *ops[1]) : EvalUnary(inst, a);
  }
}

}  // namespace

StatusOr<Literal> EvalElementwiseOp(const HloInstruction& inst, const Operands& operands,
                                    EvalContext& ctx) {
  if (!inst.shape().IsArray())
    return Error(inst.DebugName() + ": " + OpName(inst) + " must produce an array, not " +
                 inst.shape().ToString(false));
  for (const Literal* op : operands)
    if (!op->shape().IsArray())
      return Error(inst.DebugName() + ": " + OpName(inst) + " operands must be arrays");
  return Dispatch(inst, operands, ctx);
}

}  // namespace kiln::hlo
