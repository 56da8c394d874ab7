// Scalar arithmetic tables for the evaluator's elementwise ops; semantics
// follow XLA's HloEvaluator (operation_semantics.md where it is explicit).
#include "compiler/evaluator/elementwise_math.h"

#include <bit>
#include <cmath>
#include <limits>

namespace kiln::hlo::elementwise {

uint64_t Canonical(uint64_t v, IntType t) {
  if (t.bits >= 64) return v;
  uint64_t mask = (uint64_t{1} << t.bits) - 1;
  v &= mask;
  if (!t.is_signed) return v;
  uint64_t sign = uint64_t{1} << (t.bits - 1);
  return (v ^ sign) - sign;  // sign-extends without signed overflow
}

namespace {

using C = std::complex<double>;

uint64_t Mask(IntType t) { return t.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << t.bits) - 1; }
int64_t AsSigned(uint64_t v, IntType t) {
  return static_cast<int64_t>(Canonical(v, IntType{t.bits, true}));
}
int64_t SignedMin(IntType t) { return AsSigned(uint64_t{1} << (t.bits - 1), t); }

// ---- pred ----
bool PredNot(bool a) { return !a; }
bool PredCopy(bool a) { return a; }
bool PredAnd(bool a, bool b) { return a && b; }
bool PredOr(bool a, bool b) { return a || b; }
bool PredXor(bool a, bool b) { return a != b; }
// XLA's evaluator computes bool power as lhs || !rhs (x^0 = 1, 1^x = 1).
bool PredPow(bool a, bool b) { return a || !b; }

// ---- integers (canonical 64-bit bits; the store truncates) ----
uint64_t IntCopy(uint64_t a, IntType) { return a; }
uint64_t IntNegate(uint64_t a, IntType) { return uint64_t{0} - a; }
uint64_t IntNot(uint64_t a, IntType) { return ~a; }
uint64_t IntAbs(uint64_t a, IntType t) {
  // abs(INT_MIN) wraps back to INT_MIN, as in XLA.
  return t.is_signed && static_cast<int64_t>(a) < 0 ? uint64_t{0} - a : a;
}
uint64_t IntSign(uint64_t a, IntType t) {
  if (t.is_signed) {
    int64_t v = static_cast<int64_t>(a);
    return static_cast<uint64_t>(static_cast<int64_t>(v > 0) - static_cast<int64_t>(v < 0));
  }
  return a != 0 ? 1 : 0;
}
uint64_t IntPopcnt(uint64_t a, IntType t) { return std::popcount(a & Mask(t)); }
uint64_t IntClz(uint64_t a, IntType t) {
  return static_cast<uint64_t>(t.bits - std::bit_width(a & Mask(t)));
}

uint64_t IntAdd(uint64_t a, uint64_t b, IntType) { return a + b; }
uint64_t IntSub(uint64_t a, uint64_t b, IntType) { return a - b; }
uint64_t IntMul(uint64_t a, uint64_t b, IntType) { return a * b; }
uint64_t IntAnd(uint64_t a, uint64_t b, IntType) { return a & b; }
uint64_t IntOr(uint64_t a, uint64_t b, IntType) { return a | b; }
uint64_t IntXor(uint64_t a, uint64_t b, IntType) { return a ^ b; }

// XLA: x / 0 is -1 for signed and all ones for unsigned types (both are all
// bits set); INT_MIN / -1 is INT_MIN.
uint64_t IntDiv(uint64_t a, uint64_t b, IntType t) {
  if (b == 0) return ~uint64_t{0};
  if (!t.is_signed) return a / b;
  int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  if (y == -1 && x == SignedMin(t)) return a;
  return static_cast<uint64_t>(x / y);
}

// XLA: x % 0 is x; INT_MIN % -1 is 0; the sign follows the dividend.
uint64_t IntRem(uint64_t a, uint64_t b, IntType t) {
  if (b == 0) return a;
  if (!t.is_signed) return a % b;
  int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  if (y == -1) return 0;
  return static_cast<uint64_t>(x % y);
}

bool IntLess(uint64_t a, uint64_t b, IntType t) {
  return t.is_signed ? static_cast<int64_t>(a) < static_cast<int64_t>(b) : a < b;
}
uint64_t IntMax(uint64_t a, uint64_t b, IntType t) { return IntLess(a, b, t) ? b : a; }
uint64_t IntMin(uint64_t a, uint64_t b, IntType t) { return IntLess(b, a, t) ? b : a; }

// XLA: 1^x = 1 and x^0 = 1; a negative exponent gives 0 except for bases
// 1 and -1, where the exact result +-1 (by the exponent's parity) is
// representable (jaxlib 0.10.2's XLA CPU, checked by the JAX-authored
// integer_power case); otherwise exponentiation by squaring with wrap-around.
uint64_t IntPow(uint64_t a, uint64_t b, IntType t) {
  if (a == 1 || b == 0) return 1;
  if (t.is_signed && static_cast<int64_t>(b) < 0) {
    if (static_cast<int64_t>(a) == -1) return (b & 1) ? a : 1;
    return 0;
  }
  uint64_t result = 1, base = a;
  for (uint64_t e = b; e != 0; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return result;
}

// Shift amounts are read as unsigned; an amount >= the bit width (which
// includes every negative amount) shifts everything out.
bool ShiftOutOfRange(uint64_t amount, IntType t) {
  return (amount & Mask(t)) >= static_cast<uint64_t>(t.bits);
}
uint64_t IntShl(uint64_t a, uint64_t b, IntType t) {
  return ShiftOutOfRange(b, t) ? 0 : a << (b & Mask(t));
}
uint64_t IntShrLogical(uint64_t a, uint64_t b, IntType t) {
  return ShiftOutOfRange(b, t) ? 0 : (a & Mask(t)) >> (b & Mask(t));
}
// Arithmetic shifts treat the bits as signed even for unsigned types.
uint64_t IntShrArithmetic(uint64_t a, uint64_t b, IntType t) {
  int64_t v = AsSigned(a, t);
  if (ShiftOutOfRange(b, t)) return v < 0 ? ~uint64_t{0} : 0;
  return static_cast<uint64_t>(v >> (b & Mask(t)));
}

// ---- real floats (double; the store rounds to the result type) ----
double RealCopy(double a) { return a; }
double RealNegate(double a) { return -a; }
double RealAbs(double a) { return std::fabs(a); }
double RealSign(double a) {
  if (std::isnan(a)) return a;
  return std::copysign(a != 0 ? 1.0 : 0.0, a);  // keeps -0
}
double RealExp(double a) { return std::exp(a); }
double RealExpm1(double a) { return std::expm1(a); }
double RealLog(double a) { return std::log(a); }
double RealLog1p(double a) { return std::log1p(a); }
double RealSqrt(double a) { return std::sqrt(a); }
double RealRsqrt(double a) { return 1.0 / std::sqrt(a); }
double RealCbrt(double a) { return std::cbrt(a); }
double RealTanh(double a) { return std::tanh(a); }
double RealLogistic(double a) { return 1.0 / (1.0 + std::exp(-a)); }
double RealSin(double a) { return std::sin(a); }
double RealCos(double a) { return std::cos(a); }
double RealTan(double a) { return std::tan(a); }
double RealErf(double a) { return std::erf(a); }
double RealFloor(double a) { return std::floor(a); }
double RealCeil(double a) { return std::ceil(a); }
double RealRoundAfz(double a) { return std::round(a); }  // halves away from zero
// Ties to even, without depending on the floating-point environment: an
// exact half rounds to twice the nearest integer of a/2 (exact in binary),
// which is the even neighbour; everything else rounds to nearest. Signed
// zeros are kept (-0.5 -> -0).
double RealRoundEven(double a) {
  if (std::fabs(a - std::trunc(a)) == 0.5) return 2.0 * std::round(a / 2.0);
  return std::round(a);
}

double RealAdd(double a, double b) { return a + b; }
double RealSub(double a, double b) { return a - b; }
double RealMul(double a, double b) { return a * b; }
double RealDiv(double a, double b) { return a / b; }
double RealRem(double a, double b) { return std::fmod(a, b); }
double RealAtan2(double a, double b) { return std::atan2(a, b); }
double RealPow(double a, double b) {
  if (a == 1 || b == 0) return 1;
  return std::pow(a, b);
}

// ---- complex ----
C ComplexCopy(C a) { return a; }
C ComplexNegate(C a) { return -a; }
C ComplexExp(C a) { return std::exp(a); }
// exp(x+iy) - 1 without cancellation for small |z|:
// re = expm1(x) cos(y) - 2 sin^2(y/2), im = exp(x) sin(y).
C ComplexExpm1(C a) {
  double x = a.real(), y = a.imag();
  double s = std::sin(y / 2);
  return {std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y)};
}
C ComplexLog(C a) { return std::log(a); }
// log(1+z): re = log|1+z| = log1p(x(2+x) + y^2) / 2, im = atan2(y, 1+x).
C ComplexLog1p(C a) {
  double x = a.real(), y = a.imag();
  return {0.5 * std::log1p(x * (2 + x) + y * y), std::atan2(y, 1 + x)};
}
C ComplexSqrt(C a) { return std::sqrt(a); }
C ComplexRsqrt(C a) { return 1.0 / std::sqrt(a); }
C ComplexTanh(C a) { return std::tanh(a); }
C ComplexLogistic(C a) { return 1.0 / (1.0 + std::exp(-a)); }
C ComplexSin(C a) { return std::sin(a); }
C ComplexCos(C a) { return std::cos(a); }
C ComplexTan(C a) { return std::tan(a); }
C ComplexSign(C a) {
  double m = std::abs(a);
  return m == 0 ? C(0, 0) : a / m;
}

C ComplexAdd(C a, C b) { return a + b; }
C ComplexSub(C a, C b) { return a - b; }
C ComplexMul(C a, C b) { return a * b; }
C ComplexDiv(C a, C b) { return a / b; }
// XLA's evaluator: atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)).
C ComplexAtan2(C y, C x) {
  const C i(0, 1);
  return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
}
// XLA's evaluator: 1^z = z^0 = 1; inf^(a+0i) is inf for a > 0 and 0 for a < 0.
C ComplexPow(C a, C b) {
  if (a == C(1, 0) || b == C(0, 0)) return C(1, 0);
  bool a_pos_inf = a.imag() == 0 && a.real() > 0 && std::isinf(a.real());
  if (a_pos_inf && b.imag() == 0 && b.real() > 0) return a;
  if (a_pos_inf && b.imag() == 0 && b.real() < 0) return C(0, 0);
  return std::pow(a, b);
}

}  // namespace

double RealMax(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a < b ? b : a;
}
double RealMin(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return b < a ? b : a;
}

PredUnaryFn FindPredUnary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kNot: return PredNot;
    case HloOpcode::kCopy: return PredCopy;
    default: return nullptr;
  }
}

IntUnaryFn FindIntUnary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kCopy: return IntCopy;
    case HloOpcode::kNegate: return IntNegate;
    case HloOpcode::kNot: return IntNot;
    case HloOpcode::kAbs: return IntAbs;
    case HloOpcode::kSign: return IntSign;
    case HloOpcode::kPopulationCount: return IntPopcnt;
    case HloOpcode::kClz: return IntClz;
    default: return nullptr;
  }
}

RealUnaryFn FindRealUnary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kCopy: return RealCopy;
    case HloOpcode::kNegate: return RealNegate;
    case HloOpcode::kAbs: return RealAbs;
    case HloOpcode::kSign: return RealSign;
    case HloOpcode::kExp: return RealExp;
    case HloOpcode::kExpm1: return RealExpm1;
    case HloOpcode::kLog: return RealLog;
    case HloOpcode::kLog1p: return RealLog1p;
    case HloOpcode::kSqrt: return RealSqrt;
    case HloOpcode::kRsqrt: return RealRsqrt;
    case HloOpcode::kCbrt: return RealCbrt;
    case HloOpcode::kTanh: return RealTanh;
    case HloOpcode::kLogistic: return RealLogistic;
    case HloOpcode::kSin: return RealSin;
    case HloOpcode::kCos: return RealCos;
    case HloOpcode::kTan: return RealTan;
    case HloOpcode::kErf: return RealErf;
    case HloOpcode::kFloor: return RealFloor;
    case HloOpcode::kCeil: return RealCeil;
    case HloOpcode::kRoundNearestAfz: return RealRoundAfz;
    case HloOpcode::kRoundNearestEven: return RealRoundEven;
    default: return nullptr;
  }
}

ComplexUnaryFn FindComplexUnary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kCopy: return ComplexCopy;
    case HloOpcode::kNegate: return ComplexNegate;
    case HloOpcode::kSign: return ComplexSign;
    case HloOpcode::kExp: return ComplexExp;
    case HloOpcode::kExpm1: return ComplexExpm1;
    case HloOpcode::kLog: return ComplexLog;
    case HloOpcode::kLog1p: return ComplexLog1p;
    case HloOpcode::kSqrt: return ComplexSqrt;
    case HloOpcode::kRsqrt: return ComplexRsqrt;
    case HloOpcode::kTanh: return ComplexTanh;
    case HloOpcode::kLogistic: return ComplexLogistic;
    case HloOpcode::kSin: return ComplexSin;
    case HloOpcode::kCos: return ComplexCos;
    case HloOpcode::kTan: return ComplexTan;
    default: return nullptr;
  }
}

PredBinaryFn FindPredBinary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAnd: case HloOpcode::kMinimum: return PredAnd;
    case HloOpcode::kOr: case HloOpcode::kMaximum: return PredOr;
    case HloOpcode::kXor: return PredXor;
    case HloOpcode::kPower: return PredPow;
    default: return nullptr;
  }
}

IntBinaryFn FindIntBinary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd: return IntAdd;
    case HloOpcode::kSubtract: return IntSub;
    case HloOpcode::kMultiply: return IntMul;
    case HloOpcode::kDivide: return IntDiv;
    case HloOpcode::kRemainder: return IntRem;
    case HloOpcode::kMaximum: return IntMax;
    case HloOpcode::kMinimum: return IntMin;
    case HloOpcode::kPower: return IntPow;
    case HloOpcode::kAnd: return IntAnd;
    case HloOpcode::kOr: return IntOr;
    case HloOpcode::kXor: return IntXor;
    case HloOpcode::kShiftLeft: return IntShl;
    case HloOpcode::kShiftRightLogical: return IntShrLogical;
    case HloOpcode::kShiftRightArithmetic: return IntShrArithmetic;
    default: return nullptr;
  }
}

RealBinaryFn FindRealBinary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd: return RealAdd;
    case HloOpcode::kSubtract: return RealSub;
    case HloOpcode::kMultiply: return RealMul;
    case HloOpcode::kDivide: return RealDiv;
    case HloOpcode::kRemainder: return RealRem;
    case HloOpcode::kMaximum: return RealMax;
    case HloOpcode::kMinimum: return RealMin;
    case HloOpcode::kPower: return RealPow;
    case HloOpcode::kAtan2: return RealAtan2;
    default: return nullptr;
  }
}

ComplexBinaryFn FindComplexBinary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd: return ComplexAdd;
    case HloOpcode::kSubtract: return ComplexSub;
    case HloOpcode::kMultiply: return ComplexMul;
    case HloOpcode::kDivide: return ComplexDiv;
    case HloOpcode::kPower: return ComplexPow;
    case HloOpcode::kAtan2: return ComplexAtan2;
    default: return nullptr;
  }
}

}  // namespace kiln::hlo::elementwise
