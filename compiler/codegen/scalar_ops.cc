// Per-element arithmetic of the kernel emitter with XLA's semantics; see
// scalar_ops.h. The reference for every rule here is the evaluator
// (compiler/evaluator/elementwise_math.cc, element_conversion.h), which the
// codegen tests compare against.
#include "compiler/codegen/scalar_ops.h"

#include <cstring>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace kiln::codegen::internal {
namespace {

using hlo::HloOpcode;
using mlir::Value;
using Pf = mlir::arith::CmpFPredicate;
using Pi = mlir::arith::CmpIPredicate;

Status Unsupported(const hlo::HloInstruction& inst, ElementType t) {
  return Error(inst.DebugName() + ": codegen does not support " +
               std::string(hlo::OpcodeName(inst.opcode())) + " on " +
               std::string(ElementTypeName(t)));
}

// Floats narrower than f32: kernels compute on them in f32.
bool IsNarrow(ElementType t) { return IsFloat(t) && BitWidth(t) < 32; }

}  // namespace

bool IsSupportedElementType(ElementType t) {
  switch (t) {
    case ElementType::kPred:
    case ElementType::kS2: case ElementType::kS4: case ElementType::kU2: case ElementType::kU4:
    case ElementType::kS8: case ElementType::kS16: case ElementType::kS32: case ElementType::kS64:
    case ElementType::kU8: case ElementType::kU16: case ElementType::kU32: case ElementType::kU64:
    case ElementType::kF16: case ElementType::kBF16: case ElementType::kF32: case ElementType::kF64:
    case ElementType::kC64: case ElementType::kC128:
    // f8 values are computed on in f32; their conversions are integer code
    // (narrow_float_lowering.h). f8e8m0fnu and f4e2m1fn are not supported.
    case ElementType::kF8E5M2: case ElementType::kF8E4M3: case ElementType::kF8E4M3FN:
    case ElementType::kF8E4M3B11FNUZ: case ElementType::kF8E5M2FNUZ: case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E3M4:
      return true;
    default:
      return false;
  }
}

mlir::Type ValueType(mlir::MLIRContext* ctx, ElementType t) {
  switch (t) {
    case ElementType::kF16: return mlir::Float16Type::get(ctx);
    case ElementType::kBF16: return mlir::BFloat16Type::get(ctx);
    case ElementType::kF32: return mlir::Float32Type::get(ctx);
    case ElementType::kF64: return mlir::Float64Type::get(ctx);
    case ElementType::kF8E5M2: return mlir::Float8E5M2Type::get(ctx);
    case ElementType::kF8E4M3: return mlir::Float8E4M3Type::get(ctx);
    case ElementType::kF8E4M3FN: return mlir::Float8E4M3FNType::get(ctx);
    case ElementType::kF8E4M3B11FNUZ: return mlir::Float8E4M3B11FNUZType::get(ctx);
    case ElementType::kF8E5M2FNUZ: return mlir::Float8E5M2FNUZType::get(ctx);
    case ElementType::kF8E4M3FNUZ: return mlir::Float8E4M3FNUZType::get(ctx);
    case ElementType::kF8E3M4: return mlir::Float8E3M4Type::get(ctx);
    case ElementType::kC64: return mlir::ComplexType::get(mlir::Float32Type::get(ctx));
    case ElementType::kC128: return mlir::ComplexType::get(mlir::Float64Type::get(ctx));
    case ElementType::kPred: return mlir::IntegerType::get(ctx, 1);
    default: return mlir::IntegerType::get(ctx, BitWidth(t));
  }
}

// Pred and the sub-byte integers occupy a byte each in kiln's buffers (pred
// 0/1, s2/s4 sign-extended, u2/u4 zero-extended; see common/literal.h).
mlir::Type StorageType(mlir::MLIRContext* ctx, ElementType t) {
  bool in_a_byte = t == ElementType::kPred || BitWidth(t) < 8;
  return in_a_byte ? mlir::IntegerType::get(ctx, 8) : ValueType(ctx, t);
}

// ---------------------------------------------------------------------------
// Constants and representation changes.

Value ScalarOps::FloatConst(mlir::Type type, double value) {
  auto ft = mlir::cast<mlir::FloatType>(type);
  llvm::APFloat f(value);
  bool lost = false;
  f.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return mlir::arith::ConstantFloatOp::create(b_, loc_, ft, f);
}

Value ScalarOps::IntConst(mlir::Type type, int64_t value) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return mlir::arith::ConstantIntOp::create(b_, loc_, type,
                                            llvm::APInt(bits, static_cast<uint64_t>(value),
                                                        /*isSigned=*/false, /*implicitTrunc=*/true));
}

Value ScalarOps::IndexConstant(int64_t value) {
  return mlir::arith::ConstantIndexOp::create(b_, loc_, value);
}

Value ScalarOps::Constant(const Literal& literal, int64_t index) {
  ElementType t = literal.element_type();
  mlir::Type type = ValueType(b_.getContext(), t);
  if (t == ElementType::kPred) return IntConst(type, literal.GetPred(index) ? 1 : 0);
  if (IsComplex(t)) {
    std::complex<double> c = literal.GetC128(index);
    return ComplexConstant(type, c.real(), c.imag());
  }
  int bytes = StorageBytes(t);
  uint64_t bits = 0;
  std::memcpy(&bits, literal.raw() + index * bytes, bytes);  // little-endian host
  llvm::APInt raw(bytes * 8, bits);
  if (auto ft = mlir::dyn_cast<mlir::FloatType>(type))
    return mlir::arith::ConstantFloatOp::create(b_, loc_, ft,
                                                llvm::APFloat(ft.getFloatSemantics(), raw));
  return mlir::arith::ConstantIntOp::create(b_, loc_, type, raw.trunc(type.getIntOrFloatBitWidth()));
}

Value ScalarOps::FromStorage(Value stored, ElementType t) {
  if (t == ElementType::kPred)
    return mlir::arith::CmpIOp::create(b_, loc_, Pi::ne, stored, IntConst(stored.getType(), 0));
  mlir::Type value_type = ValueType(b_.getContext(), t);
  if (stored.getType() == value_type) return stored;
  return mlir::arith::TruncIOp::create(b_, loc_, value_type, stored);  // s4 / u4 in a byte
}

Value ScalarOps::ToStorage(Value value, ElementType t) {
  mlir::Type storage = StorageType(b_.getContext(), t);
  if (value.getType() == storage) return value;
  if (IsSignedInteger(t)) return mlir::arith::ExtSIOp::create(b_, loc_, storage, value);
  return mlir::arith::ExtUIOp::create(b_, loc_, storage, value);  // pred, u2, u4
}

Value ScalarOps::Widen(Value v) {
  mlir::Type t = v.getType();
  if (mlir::isa<mlir::FloatType>(t) && t.getIntOrFloatBitWidth() < 32)
    return mlir::arith::ExtFOp::create(b_, loc_, b_.getF32Type(), v);
  return v;
}

Value ScalarOps::Narrow(Value v, ElementType t) {
  mlir::Type target = ValueType(b_.getContext(), t);
  if (v.getType() == target) return v;
  // XLA converts f64 to bf16 through f32 (two roundings; the JAX-authored
  // convert_f64_to_f32_bf16 case pins this); other narrow types round once.
  if (v.getType().isF64() && t == ElementType::kBF16)
    v = mlir::arith::TruncFOp::create(b_, loc_, b_.getF32Type(), v);
  else if (v.getType().isF64() && IsNarrow(t))
    v = F64ToF32RoundToOdd(v);
  if (v.getType() == target) return v;
  if (target.getIntOrFloatBitWidth() < v.getType().getIntOrFloatBitWidth())
    return mlir::arith::TruncFOp::create(b_, loc_, target, v);
  return mlir::arith::ExtFOp::create(b_, loc_, target, v);
}

Value ScalarOps::IsNan(Value v) { return mlir::arith::CmpFOp::create(b_, loc_, Pf::UNO, v, v); }

// Round-to-odd: truncate toward zero, then set the last bit if anything was
// lost. A later rounding to a format with at least two fewer significand bits
// then rounds exactly as a single rounding from f64 would. Overflow gives
// FLT_MAX (odd), which every narrower format rounds to +-inf.
Value ScalarOps::F64ToF32RoundToOdd(Value x) {
  mlir::Type f32 = b_.getF32Type(), i32 = b_.getI32Type();
  Value t = mlir::arith::TruncFOp::create(b_, loc_, f32, x);
  Value back = mlir::arith::ExtFOp::create(b_, loc_, b_.getF64Type(), t);
  Value inexact = mlir::arith::CmpFOp::create(b_, loc_, Pf::ONE, back, x);
  Value away = mlir::arith::CmpFOp::create(b_, loc_, Pf::OGT, mlir::math::AbsFOp::create(b_, loc_, back),
                                           mlir::math::AbsFOp::create(b_, loc_, x));
  Value bits = mlir::arith::BitcastOp::create(b_, loc_, i32, t);
  Value toward_zero = Select(away, mlir::arith::SubIOp::create(b_, loc_, bits, IntConst(i32, 1)), bits);
  Value odd = mlir::arith::OrIOp::create(b_, loc_, toward_zero, IntConst(i32, 1));
  return Select(inexact, mlir::arith::BitcastOp::create(b_, loc_, f32, odd), t);
}

Value ScalarOps::Select(Value pred, Value on_true, Value on_false) {
  return mlir::arith::SelectOp::create(b_, loc_, pred, on_true, on_false);
}

// ---------------------------------------------------------------------------
// Index arithmetic.

Value ScalarOps::IndexFromInteger(Value v, ElementType t) {
  mlir::Type i64 = b_.getI64Type();
  Value wide = v;
  if (BitWidth(t) < 64) {
    wide = IsSignedInteger(t) ? Value(mlir::arith::ExtSIOp::create(b_, loc_, i64, v))
                              : Value(mlir::arith::ExtUIOp::create(b_, loc_, i64, v));
  } else if (!IsSignedInteger(t)) {
    Value negative = mlir::arith::CmpIOp::create(b_, loc_, Pi::slt, v, IntConst(i64, 0));
    wide = Select(negative, IntConst(i64, INT64_MAX), v);
  }
  return mlir::arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), wide);
}

Value ScalarOps::ClampIndex(Value v, int64_t lo, int64_t hi) {
  Value low = mlir::arith::MaxSIOp::create(b_, loc_, v, IndexConstant(lo));
  return mlir::arith::MinSIOp::create(b_, loc_, low, IndexConstant(hi));
}

Value ScalarOps::IndexCompare(Pi pred, Value a, Value b) {
  return mlir::arith::CmpIOp::create(b_, loc_, pred, a, b);
}

Value ScalarOps::AllOf(const std::vector<Value>& preds) {
  if (preds.empty()) return IntConst(b_.getI1Type(), 1);
  Value all = preds[0];
  for (size_t i = 1; i < preds.size(); ++i) all = mlir::arith::AndIOp::create(b_, loc_, all, preds[i]);
  return all;
}

// ---------------------------------------------------------------------------
// Unary ops.

StatusOr<Value> ScalarOps::Unary(const hlo::HloInstruction& inst, Value x) {
  ElementType t = inst.operand(0)->shape().element_type();
  HloOpcode op = inst.opcode();
  if (op == HloOpcode::kCopy) return x;
  if (op == HloOpcode::kReducePrecision) return ReducePrecision(inst, x);
  if (IsComplex(t)) return ComplexUnary(inst, x);
  if (IsFloat(t) && (op == HloOpcode::kReal || op == HloOpcode::kImag))  // of a real value: x, 0
    return op == HloOpcode::kReal ? x : FloatConst(x.getType(), 0);
  if (IsFloat(t)) return FloatUnary(inst, x);
  if (IsInteger(t) || IsPred(t)) return IntUnary(inst, x, t);
  return Unsupported(inst, t);
}

// The bit manipulation happens in the type XLA's CPU backend computes in
// (f64, f32, f16; bf16 in f32), then the result rounds to the element type,
// exactly as common/float_formats.cc's ReducePrecision.
StatusOr<Value> ScalarOps::ReducePrecision(const hlo::HloInstruction& inst, Value x) {
  namespace arith = mlir::arith;
  ElementType t = inst.operand(0)->shape().element_type();
  const int64_t* exponent_attr = inst.GetAttribute<int64_t>("exponent_bits");
  const int64_t* mantissa_attr = inst.GetAttribute<int64_t>("mantissa_bits");
  if (!exponent_attr || !mantissa_attr || *exponent_attr < 1 || *mantissa_attr < 0)
    return Error(inst.DebugName() + ": reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
  int64_t exponent_bits = *exponent_attr, mantissa_bits = *mantissa_attr;
  int width = 0, src_exponent = 0, src_mantissa = 0;
  Value c;
  switch (t) {
    case ElementType::kF64: width = 64, src_exponent = 11, src_mantissa = 52, c = x; break;
    case ElementType::kF32: case ElementType::kBF16:
      width = 32, src_exponent = 8, src_mantissa = 23, c = Widen(x); break;
    case ElementType::kF16: width = 16, src_exponent = 5, src_mantissa = 10, c = x; break;
    default: return Unsupported(inst, t);
  }
  mlir::Type it = b_.getIntegerType(width), ft = c.getType();
  auto k = [&](uint64_t v) { return IntConst(it, static_cast<int64_t>(v)); };
  auto cmp = [&](Pi p, Value a, Value b) { return Value(arith::CmpIOp::create(b_, loc_, p, a, b)); };
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t exp_mask = ((uint64_t{1} << src_exponent) - 1) << src_mantissa;
  Value bits = arith::BitcastOp::create(b_, loc_, it, c);
  Value original = bits;
  Value is_nan = cmp(Pi::ugt, arith::AndIOp::create(b_, loc_, bits, k(~sign)), k(exp_mask));
  if (mantissa_bits < src_mantissa) {
    const int64_t shift = src_mantissa - mantissa_bits;
    const uint64_t last_kept = uint64_t{1} << shift;
    // Ties to even: 0111..1, plus one when the last kept bit is set.
    Value last_bit = arith::ShRUIOp::create(b_, loc_, arith::AndIOp::create(b_, loc_, bits, k(last_kept)),
                                            k(shift));
    Value bias = arith::AddIOp::create(b_, loc_, k((last_kept >> 1) - 1), last_bit);
    bits = arith::AndIOp::create(b_, loc_, arith::AddIOp::create(b_, loc_, bits, bias), k(~(last_kept - 1)));
  }
  if (exponent_bits < src_exponent) {
    const uint64_t src_bias = (uint64_t{1} << (src_exponent - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    Value exponent = arith::AndIOp::create(b_, loc_, bits, k(exp_mask));
    Value signed_zero = arith::AndIOp::create(b_, loc_, bits, k(sign));
    Value signed_inf = arith::OrIOp::create(b_, loc_, signed_zero, k(exp_mask));
    bits = Select(cmp(Pi::ugt, exponent, k((src_bias + reduced_bias) << src_mantissa)), signed_inf, bits);
    bits = Select(cmp(Pi::ule, exponent, k((src_bias - reduced_bias) << src_mantissa)), signed_zero, bits);
  }
  // A NaN stays itself, or becomes +inf when no mantissa bit is left.
  bits = Select(is_nan, mantissa_bits > 0 ? original : k(exp_mask), bits);
  return Narrow(arith::BitcastOp::create(b_, loc_, ft, bits), t);
}

StatusOr<Value> ScalarOps::BitcastConvert(const hlo::HloInstruction& inst, Value x) {
  ElementType from = inst.operand(0)->shape().element_type(), to = inst.shape().element_type();
  for (ElementType t : {from, to})
    if (!IsSupportedElementType(t) || IsPred(t)) return Unsupported(inst, t);
  mlir::Type target = ValueType(b_.getContext(), to);
  if (x.getType() == target) return x;
  return Value(mlir::arith::BitcastOp::create(b_, loc_, target, x));
}

StatusOr<Value> ScalarOps::FloatUnary(const hlo::HloInstruction& inst, Value x) {
  namespace math = mlir::math;
  namespace arith = mlir::arith;
  ElementType t = inst.operand(0)->shape().element_type();
  Value c = Widen(x);
  mlir::Type ct = c.getType();
  Value r;
  switch (inst.opcode()) {
    case HloOpcode::kNegate: r = arith::NegFOp::create(b_, loc_, c); break;
    case HloOpcode::kAbs: r = math::AbsFOp::create(b_, loc_, c); break;
    case HloOpcode::kSign: {
      // NaN stays NaN; otherwise +-1 or the zero itself (keeps -0).
      Value nonzero = arith::CmpFOp::create(b_, loc_, Pf::ONE, c, FloatConst(ct, 0));
      Value mag = Select(nonzero, FloatConst(ct, 1), FloatConst(ct, 0));
      r = Select(IsNan(c), c, math::CopySignOp::create(b_, loc_, mag, c));
      break;
    }
    case HloOpcode::kExp: r = math::ExpOp::create(b_, loc_, c); break;
    case HloOpcode::kExpm1: r = math::ExpM1Op::create(b_, loc_, c); break;
    case HloOpcode::kLog: r = math::LogOp::create(b_, loc_, c); break;
    case HloOpcode::kLog1p: r = math::Log1pOp::create(b_, loc_, c); break;
    case HloOpcode::kSqrt: r = math::SqrtOp::create(b_, loc_, c); break;
    // 1/sqrt(x) with two correctly rounded steps rather than an approximate
    // reciprocal square root.
    case HloOpcode::kRsqrt:
      r = arith::DivFOp::create(b_, loc_, FloatConst(ct, 1), math::SqrtOp::create(b_, loc_, c));
      break;
    case HloOpcode::kCbrt: r = math::CbrtOp::create(b_, loc_, c); break;
    case HloOpcode::kTanh: r = math::TanhOp::create(b_, loc_, c); break;
    case HloOpcode::kLogistic: {
      // With e = exp(-|x|): 1 / (1 + e) for x >= 0, e / (1 + e) below, so
      // exp never overflows and tiny results keep their (subnormal) value.
      Value e = math::ExpOp::create(b_, loc_, arith::NegFOp::create(b_, loc_, math::AbsFOp::create(b_, loc_, c)));
      Value denominator = arith::AddFOp::create(b_, loc_, FloatConst(ct, 1), e);
      Value negative = arith::CmpFOp::create(b_, loc_, Pf::OLT, c, FloatConst(ct, 0));
      Value numerator = arith::SelectOp::create(b_, loc_, negative, e, FloatConst(ct, 1));
      r = arith::DivFOp::create(b_, loc_, numerator, denominator);
      break;
    }
    case HloOpcode::kSin: r = math::SinOp::create(b_, loc_, c); break;
    case HloOpcode::kCos: r = math::CosOp::create(b_, loc_, c); break;
    case HloOpcode::kTan: r = math::TanOp::create(b_, loc_, c); break;
    case HloOpcode::kErf: r = math::ErfOp::create(b_, loc_, c); break;
    case HloOpcode::kFloor: r = math::FloorOp::create(b_, loc_, c); break;
    case HloOpcode::kCeil: r = math::CeilOp::create(b_, loc_, c); break;
    case HloOpcode::kRoundNearestAfz: r = math::RoundOp::create(b_, loc_, c); break;
    case HloOpcode::kRoundNearestEven: r = math::RoundEvenOp::create(b_, loc_, c); break;
    case HloOpcode::kIsFinite:  // |x| != inf, false for NaN (ordered compare)
      return Value(arith::CmpFOp::create(b_, loc_, Pf::ONE, math::AbsFOp::create(b_, loc_, c),
                                         FloatConst(ct, INFINITY)));
    default:
      return Unsupported(inst, t);
  }
  return Narrow(r, t);
}

StatusOr<Value> ScalarOps::IntUnary(const hlo::HloInstruction& inst, Value x, ElementType t) {
  namespace arith = mlir::arith;
  mlir::Type type = x.getType();
  bool pred = IsPred(t);
  switch (inst.opcode()) {
    case HloOpcode::kNot:
      return Value(arith::XOrIOp::create(b_, loc_, x, IntConst(type, -1)));
    default:
      break;
  }
  if (pred) return Unsupported(inst, t);
  Value zero = IntConst(type, 0);
  switch (inst.opcode()) {
    case HloOpcode::kNegate: return Value(arith::SubIOp::create(b_, loc_, zero, x));
    case HloOpcode::kAbs: {
      if (!IsSignedInteger(t)) return x;
      // abs(INT_MIN) wraps to INT_MIN, as in XLA.
      Value neg = arith::CmpIOp::create(b_, loc_, Pi::slt, x, zero);
      return Select(neg, arith::SubIOp::create(b_, loc_, zero, x), x);
    }
    case HloOpcode::kSign: {
      if (!IsSignedInteger(t))
        return Value(arith::ExtUIOp::create(b_, loc_, type,
                                            arith::CmpIOp::create(b_, loc_, Pi::ne, x, zero)));
      Value pos = arith::ExtUIOp::create(b_, loc_, type, arith::CmpIOp::create(b_, loc_, Pi::sgt, x, zero));
      Value neg = arith::ExtUIOp::create(b_, loc_, type, arith::CmpIOp::create(b_, loc_, Pi::slt, x, zero));
      return Value(arith::SubIOp::create(b_, loc_, pos, neg));
    }
    case HloOpcode::kPopulationCount: return Value(mlir::math::CtPopOp::create(b_, loc_, x));
    case HloOpcode::kClz: return Value(mlir::math::CountLeadingZerosOp::create(b_, loc_, x));
    default:
      return Unsupported(inst, t);
  }
}

// ---------------------------------------------------------------------------
// Binary ops.

// stochastic-convert(x, random): x rounded toward zero, plus one in
// magnitude when random (unsigned, x's width) is below x's fraction scaled
// to 2^width; NaN and values at or past the result type's range convert as
// convert does (0, saturation). As the evaluator's EvalStochasticConvert.
StatusOr<Value> ScalarOps::StochasticConvert(const hlo::HloInstruction& inst, Value x, Value random) {
  namespace arith = mlir::arith;
  ElementType from = inst.operand(0)->shape().element_type(), to = inst.shape().element_type();
  ElementType bits_type = inst.operand(1)->shape().element_type();
  if (!IsFloat(from) || !IsInteger(to) || !IsUnsignedInteger(bits_type) || BitWidth(bits_type) != BitWidth(from) ||
      !IsSupportedElementType(from) || !IsSupportedElementType(to))
    return Error(inst.DebugName() + ": stochastic-convert needs a float operand, unsigned random bits of the "
                 "same width and an integer result");
  Value v = Widen(x);
  mlir::Type ft = v.getType(), i64 = b_.getI64Type();
  int width = BitWidth(from), result_bits = BitWidth(to);
  bool is_signed = IsSignedInteger(to);
  double max = is_signed ? std::ldexp(1.0, result_bits - 1) - 1 : std::ldexp(1.0, result_bits) - 1;
  double min = is_signed ? -std::ldexp(1.0, result_bits - 1) : 0;
  KILN_ASSIGN_OR_RETURN(Value plain, Convert(inst, x, from, to));
  Value magnitude = mlir::math::AbsFOp::create(b_, loc_, v);
  Value truncated = mlir::math::TruncOp::create(b_, loc_, magnitude);
  Value fraction = arith::SubFOp::create(b_, loc_, magnitude, truncated);  // exact
  // fraction * 2^width < 2^width <= 2^64: an unsigned 64-bit integer.
  Value scaled = arith::MulFOp::create(b_, loc_, fraction, FloatConst(ft, std::ldexp(1.0, width)));
  Value fixed = arith::FPToUIOp::create(b_, loc_, i64, scaled);
  Value r64 = width < 64 ? Value(arith::ExtUIOp::create(b_, loc_, i64, random)) : random;
  Value round_up = arith::AndIOp::create(
      b_, loc_, arith::CmpFOp::create(b_, loc_, Pf::ONE, fraction, FloatConst(ft, 0)),
      arith::CmpIOp::create(b_, loc_, Pi::ult, r64, fixed));
  Value rounded = Select(round_up, arith::AddFOp::create(b_, loc_, truncated, FloatConst(ft, 1)), truncated);
  Value signed_value = mlir::math::CopySignOp::create(b_, loc_, rounded, v);
  Value stochastic = FloatToInt(signed_value, to);
  Value special = arith::OrIOp::create(
      b_, loc_, IsNan(v),
      arith::OrIOp::create(b_, loc_, arith::CmpFOp::create(b_, loc_, Pf::OGE, v, FloatConst(ft, max)),
                           arith::CmpFOp::create(b_, loc_, Pf::OLE, v, FloatConst(ft, min))));
  return Select(special, plain, stochastic);
}

StatusOr<Value> ScalarOps::Binary(const hlo::HloInstruction& inst, Value a, Value b) {
  if (inst.opcode() == HloOpcode::kStochasticConvert) return StochasticConvert(inst, a, b);
  if (inst.opcode() == HloOpcode::kComplex) return MakeComplex(inst, a, b);
  ElementType t = inst.shape().element_type();
  if (inst.operand(0)->shape().element_type() != t || inst.operand(1)->shape().element_type() != t)
    return Error(inst.DebugName() + ": operand element types differ from the result's");
  if (IsComplex(t)) return ComplexBinary(inst, a, b);
  if (IsFloat(t)) return FloatBinary(inst, a, b);
  if (IsInteger(t) || IsPred(t)) return IntBinary(inst, a, b, t);
  return Unsupported(inst, t);
}

// XLA's maximum/minimum: a NaN operand (lhs first) is the result; otherwise
// ties (including -0 vs +0) give lhs.
Value ScalarOps::FloatMax(Value a, Value b, bool is_max) {
  Value take_b = is_max ? mlir::arith::CmpFOp::create(b_, loc_, Pf::OLT, a, b)
                        : mlir::arith::CmpFOp::create(b_, loc_, Pf::OLT, b, a);
  Value r = Select(take_b, b, a);
  r = Select(IsNan(b), b, r);
  return Select(IsNan(a), a, r);
}

StatusOr<Value> ScalarOps::FloatBinary(const hlo::HloInstruction& inst, Value a, Value b) {
  namespace arith = mlir::arith;
  namespace math = mlir::math;
  ElementType t = inst.shape().element_type();
  Value x = Widen(a), y = Widen(b);
  Value r;
  switch (inst.opcode()) {
    case HloOpcode::kAdd: r = arith::AddFOp::create(b_, loc_, x, y); break;
    case HloOpcode::kSubtract: r = arith::SubFOp::create(b_, loc_, x, y); break;
    case HloOpcode::kMultiply: r = arith::MulFOp::create(b_, loc_, x, y); break;
    case HloOpcode::kDivide: r = arith::DivFOp::create(b_, loc_, x, y); break;
    case HloOpcode::kRemainder: r = arith::RemFOp::create(b_, loc_, x, y); break;  // fmod
    case HloOpcode::kMaximum: r = FloatMax(x, y, true); break;
    case HloOpcode::kMinimum: r = FloatMax(x, y, false); break;
    // C99 pow already gives pow(1, y) = pow(x, 0) = 1 for NaN operands.
    case HloOpcode::kPower: r = math::PowFOp::create(b_, loc_, x, y); break;
    case HloOpcode::kAtan2: r = math::Atan2Op::create(b_, loc_, x, y); break;
    default: return Unsupported(inst, t);
  }
  return Narrow(r, t);
}

// XLA: x / 0 = -1 (all bits set, also for unsigned), INT_MIN / -1 = INT_MIN;
// x % 0 = x, INT_MIN % -1 = 0. The divisor is replaced by 1 in those cases so
// the hardware division never traps.
Value ScalarOps::IntDivide(Value a, Value b, bool is_signed, bool remainder) {
  namespace arith = mlir::arith;
  mlir::Type type = a.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Value one = IntConst(type, 1);
  Value by_zero = arith::CmpIOp::create(b_, loc_, Pi::eq, b, IntConst(type, 0));
  Value bad = by_zero;
  if (is_signed) {
    Value minus_one = arith::CmpIOp::create(b_, loc_, Pi::eq, b, IntConst(type, -1));
    // For the remainder every x % -1 is 0, which x % 1 also gives; for the
    // quotient only INT_MIN / -1 overflows, and INT_MIN / 1 is its answer.
    Value overflow =
        remainder ? minus_one
                  : Value(arith::AndIOp::create(
                        b_, loc_, minus_one,
                        arith::CmpIOp::create(b_, loc_, Pi::eq, a,
                                              IntConst(type, static_cast<int64_t>(uint64_t{1} << (bits - 1))))));
    bad = arith::OrIOp::create(b_, loc_, by_zero, overflow);
  }
  Value safe_b = Select(bad, one, b);
  Value r;
  if (remainder) {
    r = is_signed ? Value(arith::RemSIOp::create(b_, loc_, a, safe_b))
                  : Value(arith::RemUIOp::create(b_, loc_, a, safe_b));
    return Select(by_zero, a, r);
  }
  r = is_signed ? Value(arith::DivSIOp::create(b_, loc_, a, safe_b))
                : Value(arith::DivUIOp::create(b_, loc_, a, safe_b));
  return Select(by_zero, IntConst(type, -1), r);
}

// Shift amounts are read as unsigned; amounts >= the bit width shift every
// bit out (arithmetic right shifts then leave the sign fill).
Value ScalarOps::Shift(HloOpcode op, Value a, Value b) {
  namespace arith = mlir::arith;
  mlir::Type type = a.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Value zero = IntConst(type, 0);
  Value out_of_range = arith::CmpIOp::create(b_, loc_, Pi::uge, b, IntConst(type, bits));
  Value amount = Select(out_of_range, zero, b);
  switch (op) {
    case HloOpcode::kShiftLeft:
      return Select(out_of_range, zero, arith::ShLIOp::create(b_, loc_, a, amount));
    case HloOpcode::kShiftRightLogical:
      return Select(out_of_range, zero, arith::ShRUIOp::create(b_, loc_, a, amount));
    default:
      return Select(out_of_range, arith::ShRSIOp::create(b_, loc_, a, IntConst(type, bits - 1)),
                    arith::ShRSIOp::create(b_, loc_, a, amount));
  }
}

// XLA's integer power: exponentiation by squaring over every bit of the
// exponent, wrapping on overflow; x^0 = 1^y = 1; a negative exponent of a
// signed type gives 0, except 1 for base 1 and +-1 for base -1 (the
// exponent's parity).
Value ScalarOps::IntPower(Value a, Value b, bool is_signed) {
  namespace arith = mlir::arith;
  mlir::Type type = a.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Value zero = IntConst(type, 0), one = IntConst(type, 1);
  Value result = one, base = a, exponent = b;
  for (unsigned i = 0; i < bits; ++i) {
    Value odd = arith::CmpIOp::create(b_, loc_, Pi::ne, arith::AndIOp::create(b_, loc_, exponent, one), zero);
    result = Select(odd, arith::MulIOp::create(b_, loc_, result, base), result);
    base = arith::MulIOp::create(b_, loc_, base, base);
    exponent = arith::ShRUIOp::create(b_, loc_, exponent, one);
  }
  if (!is_signed) return result;
  Value odd_b = arith::CmpIOp::create(b_, loc_, Pi::ne, arith::AndIOp::create(b_, loc_, b, one), zero);
  Value minus_one = IntConst(type, -1);
  Value negative_power =
      Select(arith::CmpIOp::create(b_, loc_, Pi::eq, a, one), one,
             Select(arith::CmpIOp::create(b_, loc_, Pi::eq, a, minus_one), Select(odd_b, minus_one, one), zero));
  return Select(arith::CmpIOp::create(b_, loc_, Pi::slt, b, zero), negative_power, result);
}

StatusOr<Value> ScalarOps::IntBinary(const hlo::HloInstruction& inst, Value a, Value b,
                                     ElementType t) {
  namespace arith = mlir::arith;
  bool is_signed = IsSignedInteger(t);
  HloOpcode op = inst.opcode();
  switch (op) {
    case HloOpcode::kAnd: return Value(arith::AndIOp::create(b_, loc_, a, b));
    case HloOpcode::kOr: return Value(arith::OrIOp::create(b_, loc_, a, b));
    case HloOpcode::kXor: return Value(arith::XOrIOp::create(b_, loc_, a, b));
    default: break;
  }
  if (IsPred(t)) {  // pred max/min are or/and
    if (op == HloOpcode::kMaximum) return Value(arith::OrIOp::create(b_, loc_, a, b));
    if (op == HloOpcode::kMinimum) return Value(arith::AndIOp::create(b_, loc_, a, b));
    return Unsupported(inst, t);
  }
  switch (op) {
    case HloOpcode::kAdd: return Value(arith::AddIOp::create(b_, loc_, a, b));
    case HloOpcode::kSubtract: return Value(arith::SubIOp::create(b_, loc_, a, b));
    case HloOpcode::kMultiply: return Value(arith::MulIOp::create(b_, loc_, a, b));
    case HloOpcode::kDivide: return IntDivide(a, b, is_signed, /*remainder=*/false);
    case HloOpcode::kRemainder: return IntDivide(a, b, is_signed, /*remainder=*/true);
    case HloOpcode::kMaximum:
      return is_signed ? Value(arith::MaxSIOp::create(b_, loc_, a, b))
                       : Value(arith::MaxUIOp::create(b_, loc_, a, b));
    case HloOpcode::kMinimum:
      return is_signed ? Value(arith::MinSIOp::create(b_, loc_, a, b))
                       : Value(arith::MinUIOp::create(b_, loc_, a, b));
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kShiftRightArithmetic:
      return Shift(op, a, b);
    case HloOpcode::kPower: return IntPower(a, b, is_signed);
    default:
      return Unsupported(inst, t);
  }
}

// ---------------------------------------------------------------------------
// compare, select, clamp.

StatusOr<Value> ScalarOps::Compare(const hlo::HloInstruction& inst, Value a, Value b) {
  namespace arith = mlir::arith;
  using hlo::ComparisonDirection;
  using hlo::ComparisonType;
  std::optional<ComparisonDirection> dir = inst.comparison_direction();
  if (!dir) return Error(inst.DebugName() + ": compare needs direction=EQ|NE|LT|LE|GT|GE");
  ElementType t = inst.operand(0)->shape().element_type();
  if (inst.operand(1)->shape().element_type() != t)
    return Error(inst.DebugName() + ": compare operands have different element types");
  ComparisonType type = inst.comparison_type();
  if (type == ComparisonType::kDefault)
    type = IsFloat(t) ? ComparisonType::kFloat
           : IsSignedInteger(t) ? ComparisonType::kSigned : ComparisonType::kUnsigned;
  if (type == ComparisonType::kPartialOrder) type = ComparisonType::kFloat;
  bool int_type = type == ComparisonType::kSigned || type == ComparisonType::kUnsigned;
  if (IsFloat(t) == int_type)
    return Error(inst.DebugName() + ": comparison type does not apply to element type " +
                 std::string(ElementTypeName(t)));

  if (type == ComparisonType::kFloat) {
    // NE is the negation of EQ (true for NaN): the unordered predicate.
    static constexpr Pf kPreds[] = {Pf::OEQ, Pf::UNE, Pf::OGE, Pf::OGT, Pf::OLE, Pf::OLT};
    return Value(arith::CmpFOp::create(b_, loc_, kPreds[static_cast<int>(*dir)], Widen(a), Widen(b)));
  }
  bool is_signed = type == ComparisonType::kSigned;
  if (type == ComparisonType::kTotalOrder) {
    // Key: the bits as a signed integer, with the magnitude bits of negative
    // values flipped: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
    unsigned bits = a.getType().getIntOrFloatBitWidth();
    mlir::Type it = b_.getIntegerType(bits);
    auto key = [&](Value v) -> Value {
      Value x = arith::BitcastOp::create(b_, loc_, it, v);
      Value sign = arith::ShRSIOp::create(b_, loc_, x, IntConst(it, bits - 1));
      Value flip = arith::ShRUIOp::create(b_, loc_, sign, IntConst(it, 1));
      return arith::XOrIOp::create(b_, loc_, x, flip);
    };
    a = key(a), b = key(b);
    is_signed = true;
  }
  static constexpr Pi kSigned[] = {Pi::eq, Pi::ne, Pi::sge, Pi::sgt, Pi::sle, Pi::slt};
  static constexpr Pi kUnsigned[] = {Pi::eq, Pi::ne, Pi::uge, Pi::ugt, Pi::ule, Pi::ult};
  int d = static_cast<int>(*dir);
  return Value(arith::CmpIOp::create(b_, loc_, is_signed ? kSigned[d] : kUnsigned[d], a, b));
}

// clamp(lo, x, hi) = min(max(x, lo), hi) with the evaluator's NaN rule: the
// first NaN among lo, x, hi is the result.
Value ScalarOps::Clamp(ElementType t, Value lo, Value x, Value hi) {
  namespace arith = mlir::arith;
  if (IsFloat(t)) {
    Value l = Widen(lo), v = Widen(x), h = Widen(hi);
    Value y = Select(arith::CmpFOp::create(b_, loc_, Pf::OLT, v, l), lo, x);
    Value r = Select(arith::CmpFOp::create(b_, loc_, Pf::OLT, Widen(y), h), y, hi);
    r = Select(IsNan(h), hi, r);
    r = Select(IsNan(v), x, r);
    return Select(IsNan(l), lo, r);
  }
  Pi lt = IsSignedInteger(t) ? Pi::slt : Pi::ult;
  Value y = Select(arith::CmpIOp::create(b_, loc_, lt, x, lo), lo, x);
  return Select(arith::CmpIOp::create(b_, loc_, lt, y, hi), y, hi);
}

// ---------------------------------------------------------------------------
// convert.

// XLA: truncation toward zero, NaN -> 0, saturation at the type's range.
// The value handed to fptosi/fptoui is always in range (LLVM makes
// out-of-range conversions poison).
Value ScalarOps::FloatToInt(Value v, ElementType to) {
  namespace arith = mlir::arith;
  mlir::Type ft = v.getType();
  mlir::Type it = ValueType(b_.getContext(), to);
  int bits = BitWidth(to);
  bool is_signed = IsSignedInteger(to);
  // Bounds are powers of two, exact in f32 and f64.
  double hi = std::ldexp(1.0, is_signed ? bits - 1 : bits);
  double lo = is_signed ? -hi : -1.0;
  Value too_big = arith::CmpFOp::create(b_, loc_, Pf::OGE, v, FloatConst(ft, hi));
  Value in_range = arith::AndIOp::create(
      b_, loc_,
      arith::CmpFOp::create(b_, loc_, is_signed ? Pf::OGE : Pf::OGT, v, FloatConst(ft, lo)),
      arith::CmpFOp::create(b_, loc_, Pf::OLT, v, FloatConst(ft, hi)));
  Value safe = Select(in_range, v, FloatConst(ft, 0));
  Value r = is_signed ? Value(arith::FPToSIOp::create(b_, loc_, it, safe))
                      : Value(arith::FPToUIOp::create(b_, loc_, it, safe));
  int64_t max = is_signed ? static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1) : -1;
  r = Select(too_big, IntConst(it, max), r);
  if (is_signed) {
    Value too_small = arith::CmpFOp::create(b_, loc_, Pf::OLT, v, FloatConst(ft, lo));
    r = Select(too_small, IntConst(it, static_cast<int64_t>(uint64_t{1} << (bits - 1))), r);
  }
  return r;
}

StatusOr<Value> ScalarOps::Convert(const hlo::HloInstruction& inst, Value v, ElementType from,
                                   ElementType to) {
  namespace arith = mlir::arith;
  if (!IsSupportedElementType(from) || !IsSupportedElementType(to))
    return Unsupported(inst, IsSupportedElementType(from) ? to : from);
  if (from == to) return v;
  if (IsComplex(to)) return ConvertToComplex(inst, v, from, to);
  if (IsComplex(from))  // XLA's shape inference refuses complex -> real
    return Error(inst.DebugName() + ": convert from a complex type to a real one is not allowed (use real)");
  mlir::Type target = ValueType(b_.getContext(), to);
  if (IsPred(to)) {  // x != 0; NaN -> true (unordered compare)
    if (IsFloat(from))
      return Value(arith::CmpFOp::create(b_, loc_, Pf::UNE, Widen(v), FloatConst(Widen(v).getType(), 0)));
    return Value(arith::CmpIOp::create(b_, loc_, Pi::ne, v, IntConst(v.getType(), 0)));
  }
  if (IsFloat(from) && IsFloat(to)) return Narrow(Widen(v), to);
  if (IsFloat(from)) return FloatToInt(Widen(v), to);
  // From here on `from` is pred or an integer; pred converts as unsigned 0/1.
  bool src_signed = IsSignedInteger(from);
  if (IsInteger(to)) {
    unsigned src_bits = v.getType().getIntOrFloatBitWidth(), dst_bits = BitWidth(to);
    if (dst_bits < src_bits) return Value(arith::TruncIOp::create(b_, loc_, target, v));
    if (dst_bits == src_bits) return v;
    return src_signed ? Value(arith::ExtSIOp::create(b_, loc_, target, v))
                      : Value(arith::ExtUIOp::create(b_, loc_, target, v));
  }
  // Integer -> float. f32/f64 targets round once. f16/bf16 targets go
  // through f64 (exact for integers of up to 53 bits) and round-to-odd f32,
  // so they also round once; 64-bit integers beyond 2^53 are rounded twice.
  mlir::Type via = IsNarrow(to) ? b_.getF64Type() : target;
  Value f = src_signed ? Value(arith::SIToFPOp::create(b_, loc_, via, v))
                       : Value(arith::UIToFPOp::create(b_, loc_, via, v));
  return Narrow(f, to);
}

std::vector<Value> ScalarOps::Delinearize(Value linear, const std::vector<int64_t>& dims) {
  std::vector<Value> index(dims.size());
  for (size_t d = dims.size(); d-- > 1;) {
    Value size = IndexConstant(dims[d]);
    index[d] = mlir::arith::RemUIOp::create(b_, loc_, linear, size);
    linear = mlir::arith::DivUIOp::create(b_, loc_, linear, size);
  }
  if (!dims.empty()) index[0] = linear;
  return index;
}

}  // namespace kiln::codegen::internal
