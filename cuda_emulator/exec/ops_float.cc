// Floating-point arithmetic: f32/f64 add, sub, mul, fma/mad, div, min/max,
// abs/neg, copysign, the special functions (rcp, sqrt, rsqrt, sin, cos,
// lg2, ex2, tanh) and testp, plus f16/bf16 and their packed x2 forms.
//
// Accuracy: .rn arithmetic is IEEE and bit-exact. Directed roundings run
// under RoundingScope (this file is compiled with -frounding-math). The
// .approx instructions are computed with the host's correctly rounded or
// faithfully rounded libm in double precision, which is within every error
// bound the PTX ISA states for them (e.g. ex2.approx.f32: 2 ulp; sin/cos:
// 2^-20.9 absolute in [-pi, pi]; lg2: 2^-22 absolute; rsqrt: 2^-22.9
// relative). f16/bf16 results are computed exactly in double (sums and
// products of two such values always fit) and rounded once.
#include <cmath>
#include <limits>

#include "cuda_emulator/exec/float_math.h"
#include "cuda_emulator/exec/warp_state.h"

namespace kiln::emu {
namespace {

using ptx::Instruction;
using ptx::Opcode;
using ptx::Type;

// ---- f32 / f64 -----------------------------------------------------------------

template <typename T>
T In(T v, bool ftz) {
  if constexpr (std::is_same_v<T, float>) {
    if (ftz) return FlushF32(v);
  }
  return v;
}

template <typename T>
T Out(T v, bool ftz, bool sat) {
  if constexpr (std::is_same_v<T, float>) {
    if (ftz) v = FlushF32(v);
  }
  if (sat) v = std::isnan(v) ? T(0) : std::min(std::max(v, T(0)), T(1));
  return v;
}

// PTX min/max: a NaN operand yields the other; -0 orders below +0. With
// .NaN, any NaN operand yields the canonical NaN.
template <typename T>
T Min(T a, T b, bool propagate_nan) {
  if (std::isnan(a) || std::isnan(b)) {
    if (propagate_nan || (std::isnan(a) && std::isnan(b))) return std::numeric_limits<T>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename T>
T Max(T a, T b, bool propagate_nan) {
  if (std::isnan(a) || std::isnan(b)) {
    if (propagate_nan || (std::isnan(a) && std::isnan(b))) return std::numeric_limits<T>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

enum class FOp { kAdd, kSub, kMul, kDiv, kMin, kMax, kFma, kAbs, kNeg, kRcp, kSqrt, kRsqrt,
                 kSin, kCos, kLg2, kEx2, kTanh, kCopysign };

template <typename T, FOp kOp>
T Apply(T a, T b, T c, const ptx::Modifiers& m) {
  switch (kOp) {
    case FOp::kAdd: return a + b;
    case FOp::kSub: return a - b;
    case FOp::kMul: return a * b;
    case FOp::kDiv: return a / b;
    case FOp::kMin: return Min(a, b, m.nan);
    case FOp::kMax: return Max(a, b, m.nan);
    case FOp::kFma: return std::fma(a, b, c);
    case FOp::kAbs: return std::fabs(a);
    case FOp::kNeg: return -a;
    case FOp::kRcp: return T(1) / a;
    case FOp::kSqrt: return std::sqrt(a);
    case FOp::kRsqrt: return T(1.0 / std::sqrt(double(a)));
    case FOp::kSin: return T(std::sin(double(a)));
    case FOp::kCos: return T(std::cos(double(a)));
    case FOp::kLg2: return T(std::log2(double(a)));
    case FOp::kEx2: return T(std::exp2(double(a)));
    case FOp::kTanh: return T(std::tanh(double(a)));
    case FOp::kCopysign: return std::copysign(b, a);  // copysign d, a, b: a's sign on b
  }
  return a;
}

constexpr int Arity(FOp op) {
  switch (op) {
    case FOp::kAdd: case FOp::kSub: case FOp::kMul: case FOp::kDiv: case FOp::kMin:
    case FOp::kMax: case FOp::kCopysign: return 2;
    case FOp::kFma: return 3;
    default: return 1;
  }
}

template <typename T, FOp kOp>
bool FloatOp(WarpState& w, const Instruction& in, uint32_t mask) {
  RoundingScope rounding(in.mod.rounding);
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  Src b = Arity(kOp) > 1 ? w.S(in.src[1]) : a;
  Src c = Arity(kOp) > 2 ? w.S(in.src[2]) : a;
  const ptx::Modifiers& m = in.mod;
  bool ftz = m.ftz, sat = m.sat;
  // abs/neg are sign operations: NaN payloads pass through untouched.
  if constexpr (kOp == FOp::kAbs || kOp == FOp::kNeg) {
    constexpr uint64_t kSign = sizeof(T) == 8 ? uint64_t{1} << 63 : uint64_t{1} << 31;
    ForEachLane(mask, [&](int l) {
      uint64_t bits = Bits<T>(In(As<T>(a[l]), ftz));
      d[l] = kOp == FOp::kAbs ? bits & ~kSign : bits ^ kSign;
    });
    return true;
  }
  ForEachLane(mask, [&](int l) {
    T r = Apply<T, kOp>(In(As<T>(a[l]), ftz), In(As<T>(b[l]), ftz), In(As<T>(c[l]), ftz), m);
    if constexpr (kOp == FOp::kMax) {
      if (m.relu && !(r > T(0))) r = std::isnan(r) ? r : T(0);
    }
    d[l] = Bits<T>(Out(r, ftz, sat));
  });
  return true;
}

template <typename T>
bool Testp(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  ptx::TestpMode mode = in.mod.testp;
  ForEachLane(mask, [&](int l) {
    T v = As<T>(a[l]);
    bool r = false;
    switch (mode) {
      case ptx::TestpMode::kFinite: r = std::isfinite(v); break;
      case ptx::TestpMode::kInfinite: r = std::isinf(v); break;
      case ptx::TestpMode::kNumber: r = !std::isnan(v); break;
      case ptx::TestpMode::kNotANumber: r = std::isnan(v); break;
      case ptx::TestpMode::kNormal: r = std::isnormal(v); break;
      case ptx::TestpMode::kSubnormal: r = std::fpclassify(v) == FP_SUBNORMAL; break;
      case ptx::TestpMode::kNone: break;
    }
    d[l] = r;
  });
  return true;
}

// ---- f16 / bf16 (scalar and x2) --------------------------------------------------

template <bool kBf16>
double Narrow(uint16_t bits) {
  return kBf16 ? double(BF16ToF32(bits)) : double(F16ToF32(bits));
}

template <bool kBf16>
uint16_t Round(double v, bool ftz, bool sat, bool relu) {
  if (sat) v = std::isnan(v) ? 0.0 : std::min(std::max(v, 0.0), 1.0);
  if (relu && !(v > 0) && !std::isnan(v)) v = 0.0;
  uint16_t r;
  if (kBf16) {
    // float(v) is exact for results of one operation on bf16 values.
    r = F32ToBF16(static_cast<float>(v));
    if (std::isnan(v)) r = kBF16CanonicalNan;
  } else {
    r = DoubleToF16(v, ptx::Rounding::kRn);
    if (std::isnan(v)) r = kF16CanonicalNan;
  }
  if (ftz && (r & 0x7fff) != 0 && ((r >> (kBf16 ? 7 : 10)) & (kBf16 ? 0xff : 0x1f)) == 0)
    r &= 0x8000;  // subnormal -> signed zero
  return r;
}

template <bool kBf16>
uint16_t FlushIn(uint16_t r, bool ftz) {
  if (ftz && (r & 0x7fff) != 0 && ((r >> (kBf16 ? 7 : 10)) & (kBf16 ? 0xff : 0x1f)) == 0)
    return r & 0x8000;
  return r;
}

template <bool kBf16, FOp kOp>
uint16_t HalfApply(uint16_t a, uint16_t b, uint16_t c, const ptx::Modifiers& m) {
  constexpr uint16_t kSign = 0x8000;
  a = FlushIn<kBf16>(a, m.ftz);
  b = FlushIn<kBf16>(b, m.ftz);
  c = FlushIn<kBf16>(c, m.ftz);
  if (kOp == FOp::kAbs) return a & ~kSign;
  if (kOp == FOp::kNeg) return a ^ kSign;
  double x = Narrow<kBf16>(a), y = Narrow<kBf16>(b), z = Narrow<kBf16>(c);
  double r;
  switch (kOp) {
    case FOp::kAdd: r = x + y; break;
    case FOp::kSub: r = x - y; break;
    case FOp::kMul: r = x * y; break;
    case FOp::kFma: r = std::fma(x, y, z); break;
    case FOp::kMin: r = Min(x, y, m.nan); break;
    case FOp::kMax: r = Max(x, y, m.nan); break;
    case FOp::kEx2: r = std::exp2(x); break;
    case FOp::kTanh: r = std::tanh(x); break;
    default: r = std::numeric_limits<double>::quiet_NaN(); break;
  }
  // min/max return one operand exactly (NaN aside): keep its encoding.
  if ((kOp == FOp::kMin || kOp == FOp::kMax) && !std::isnan(r) && !m.relu) {
    return std::signbit(r) == std::signbit(x) && r == x ? a : b;
  }
  return Round<kBf16>(r, m.ftz, m.sat, m.relu);
}

template <bool kBf16, bool kPacked, FOp kOp>
bool HalfOp(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  Src b = Arity(kOp) > 1 ? w.S(in.src[1]) : a;
  Src c = Arity(kOp) > 2 ? w.S(in.src[2]) : a;
  const ptx::Modifiers& m = in.mod;
  ForEachLane(mask, [&](int l) {
    uint64_t r = HalfApply<kBf16, kOp>(uint16_t(a[l]), uint16_t(b[l]), uint16_t(c[l]), m);
    if (kPacked) {
      r |= uint64_t(HalfApply<kBf16, kOp>(uint16_t(a[l] >> 16), uint16_t(b[l] >> 16),
                                          uint16_t(c[l] >> 16), m))
           << 16;
    }
    d[l] = r;
  });
  return true;
}

// ---- Selection -------------------------------------------------------------------

template <FOp kOp>
ptx::Handler ForFloatType(Type t) {
  switch (t) {
    case Type::kF32: return &FloatOp<float, kOp>;
    case Type::kF64: return &FloatOp<double, kOp>;
    default: break;
  }
  if constexpr (kOp == FOp::kAdd || kOp == FOp::kSub || kOp == FOp::kMul || kOp == FOp::kFma ||
                kOp == FOp::kMin || kOp == FOp::kMax || kOp == FOp::kAbs || kOp == FOp::kNeg ||
                kOp == FOp::kEx2 || kOp == FOp::kTanh) {
    switch (t) {
      case Type::kF16: return &HalfOp<false, false, kOp>;
      case Type::kF16x2: return &HalfOp<false, true, kOp>;
      case Type::kBF16: return &HalfOp<true, false, kOp>;
      case Type::kBF16x2: return &HalfOp<true, true, kOp>;
      default: break;
    }
  }
  return nullptr;
}

bool IsHalf(Type t) {
  return t == Type::kF16 || t == Type::kF16x2 || t == Type::kBF16 || t == Type::kBF16x2;
}

}  // namespace

ptx::Handler FloatHandler(const Instruction& in) {
  const Type t = in.type;
  const auto& m = in.mod;
  if (!ptx::IsFloat(t)) return nullptr;
  // Narrow types implement round-to-nearest only.
  bool directed = m.rounding == ptx::Rounding::kRz || m.rounding == ptx::Rounding::kRm ||
                  m.rounding == ptx::Rounding::kRp;
  if (IsHalf(t) && directed) return nullptr;
  if (m.rounding >= ptx::Rounding::kRni) return nullptr;
  if (t == Type::kF64 && m.ftz && !m.approx) return nullptr;
  switch (in.opcode) {
    case Opcode::kAdd: return ForFloatType<FOp::kAdd>(t);
    case Opcode::kSub: return ForFloatType<FOp::kSub>(t);
    case Opcode::kMul: return ForFloatType<FOp::kMul>(t);
    case Opcode::kFma:
    case Opcode::kMad: return ForFloatType<FOp::kFma>(t);
    case Opcode::kDiv: return IsHalf(t) ? nullptr : ForFloatType<FOp::kDiv>(t);
    case Opcode::kMin: return ForFloatType<FOp::kMin>(t);
    case Opcode::kMax: return ForFloatType<FOp::kMax>(t);
    case Opcode::kAbs: return ForFloatType<FOp::kAbs>(t);
    case Opcode::kNeg: return ForFloatType<FOp::kNeg>(t);
    case Opcode::kCopysign: return ForFloatType<FOp::kCopysign>(t);
    case Opcode::kRcp: return ForFloatType<FOp::kRcp>(t);
    case Opcode::kSqrt: return ForFloatType<FOp::kSqrt>(t);
    case Opcode::kRsqrt: return ForFloatType<FOp::kRsqrt>(t);
    case Opcode::kSin: return t == Type::kF32 ? ForFloatType<FOp::kSin>(t) : nullptr;
    case Opcode::kCos: return t == Type::kF32 ? ForFloatType<FOp::kCos>(t) : nullptr;
    case Opcode::kLg2: return t == Type::kF32 ? ForFloatType<FOp::kLg2>(t) : nullptr;
    case Opcode::kEx2: return t == Type::kF64 ? nullptr : ForFloatType<FOp::kEx2>(t);
    case Opcode::kTanh: return t == Type::kF64 ? nullptr : ForFloatType<FOp::kTanh>(t);
    case Opcode::kTestp:
      return t == Type::kF32 ? &Testp<float> : t == Type::kF64 ? &Testp<double> : nullptr;
    default: return nullptr;
  }
}

}  // namespace kiln::emu
