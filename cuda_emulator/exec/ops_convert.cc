// Data movement, conversion and comparison: mov (scalars, special
// registers, symbol addresses, vector pack/unpack), cvt between every
// integer and float type with PTX's rounding and saturation rules, cvta,
// prmt, setp/set, selp and slct.
//
// cvt rules (PTX ISA, "cvt"): float -> integer saturates to the integer's
// range and maps NaN to 0; integer -> integer truncates or extends (with
// .sat, clamps); float -> narrower float rounds with the instruction's mode
// (.rn by default) and overflows to infinity; NaN becomes the canonical NaN
// of the destination. This file is compiled with -frounding-math.
#include <cmath>
#include <limits>

#include "cuda_emulator/exec/float_math.h"
#include "cuda_emulator/exec/warp_state.h"

namespace kiln::emu {
namespace {

using ptx::Instruction;
using ptx::Opcode;
using ptx::Rounding;
using ptx::Type;

uint64_t Mask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

// ---- mov -------------------------------------------------------------------------

bool Mov(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  uint64_t m = in.type == Type::kPred ? 1 : Mask(ptx::TypeBits(in.type));
  ForEachLane(mask, [&](int l) { d[l] = a[l] & m; });
  return true;
}

// mov.b64 d, {a, b}: element 0 is the least significant.
bool MovPack(WarpState& w, const Instruction& in, uint32_t mask) {
  const ptx::Operand& v = in.src[0];
  int n = v.vector_size, width = ptx::TypeBits(in.type) / n;
  uint64_t* d = w.Reg(in.dst[0].reg);
  ForEachLane(mask, [&](int l) {
    uint64_t r = 0;
    for (int i = 0; i < n; ++i) {
      uint64_t x = (v.vector_imm_mask >> i) & 1 ? v.vector_imm[i] : w.Reg(v.vector[i])[l];
      r |= (x & Mask(width)) << (i * width);
    }
    d[l] = r;
  });
  return true;
}

bool MovUnpack(WarpState& w, const Instruction& in, uint32_t mask) {
  const ptx::Operand& v = in.dst[0];
  int n = v.vector_size, width = ptx::TypeBits(in.type) / n;
  Src a = w.S(in.src[0]);
  ForEachLane(mask, [&](int l) {
    uint64_t x = a[l];
    for (int i = 0; i < n; ++i) {
      if (v.vector[i] != ~0u) w.Reg(v.vector[i])[l] = (x >> (i * width)) & Mask(width);
    }
  });
  return true;
}

// ---- cvt -------------------------------------------------------------------------

// A value of any PTX scalar type, widened for conversion.
double ToDouble(uint64_t bits, Type t) {
  switch (t) {
    case Type::kF16: return F16ToF32(uint16_t(bits));
    case Type::kBF16: return BF16ToF32(uint16_t(bits));
    case Type::kF32: return As<float>(bits);
    case Type::kF64: return As<double>(bits);
    case Type::kS8: return As<int8_t>(bits);
    case Type::kS16: return As<int16_t>(bits);
    case Type::kS32: return As<int32_t>(bits);
    case Type::kS64: return static_cast<double>(As<int64_t>(bits));
    default: return static_cast<double>(bits & Mask(ptx::TypeBits(t)));
  }
}

int64_t SignedValue(uint64_t bits, Type t) {
  switch (ptx::TypeBits(t)) {
    case 8: return As<int8_t>(bits);
    case 16: return As<int16_t>(bits);
    case 32: return As<int32_t>(bits);
    default: return As<int64_t>(bits);
  }
}

// Integer -> integer, with optional saturation to the destination range.
uint64_t IntToInt(uint64_t bits, Type from, Type to, bool sat) {
  int to_bits = ptx::TypeBits(to);
  bool from_signed = ptx::IsSigned(from), to_signed = ptx::IsSigned(to);
  if (!sat) {
    uint64_t v = from_signed ? static_cast<uint64_t>(SignedValue(bits, from))
                             : bits & Mask(ptx::TypeBits(from));
    v &= Mask(to_bits);
    if (to_signed && to_bits < 64 && (v >> (to_bits - 1)) & 1) v |= ~Mask(to_bits);  // keep sign
    return v;
  }
  // Saturate: compare in 128-bit to cover u64 vs s64.
  __int128 v = from_signed ? __int128(SignedValue(bits, from))
                           : __int128(bits & Mask(ptx::TypeBits(from)));
  __int128 lo = to_signed ? -(__int128(1) << (to_bits - 1)) : 0;
  __int128 hi = to_signed ? (__int128(1) << (to_bits - 1)) - 1 : (__int128(1) << to_bits) - 1;
  v = std::min(std::max(v, lo), hi);
  return static_cast<uint64_t>(static_cast<int64_t>(v)) & (to_signed ? ~uint64_t{0} : Mask(to_bits));
}

double RoundToInteger(double v, Rounding r) {
  switch (r) {
    case Rounding::kRzi: return std::trunc(v);
    case Rounding::kRmi: return std::floor(v);
    case Rounding::kRpi: return std::ceil(v);
    default: return std::nearbyint(v);  // rni: ties to even
  }
}

// Float -> integer: round with the mode, saturate, NaN -> 0.
uint64_t FloatToInt(double v, Type to, Rounding r) {
  if (std::isnan(v)) return 0;
  v = RoundToInteger(v, r);
  int bits = ptx::TypeBits(to);
  if (ptx::IsSigned(to)) {
    double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1);
    int64_t i = v <= lo ? static_cast<int64_t>(lo) - (bits == 64 ? 0 : 0)
                : v >= hi ? (bits == 64 ? INT64_MAX : static_cast<int64_t>(hi) - 1)
                          : static_cast<int64_t>(v);
    if (bits == 64 && v <= lo) i = INT64_MIN;
    return static_cast<uint64_t>(i);
  }
  double hi = std::ldexp(1.0, bits);
  uint64_t u = v <= 0 ? 0 : v >= hi ? Mask(bits) : static_cast<uint64_t>(v);
  return u;
}

// Integer -> float with rounding (exact for every integer a double holds;
// 64-bit integers convert directly under the rounding mode).
uint64_t IntToFloat(uint64_t bits, Type from, Type to, Rounding r) {
  RoundingScope scope(r);
  bool s = ptx::IsSigned(from);
  int64_t sv = s ? SignedValue(bits, from) : 0;
  uint64_t uv = bits & Mask(ptx::TypeBits(from));
  switch (to) {
    case Type::kF32: return Bits<float>(s ? static_cast<float>(sv) : static_cast<float>(uv));
    case Type::kF64: return Bits<double>(s ? static_cast<double>(sv) : static_cast<double>(uv));
    default: break;
  }
  double d = s ? static_cast<double>(sv) : static_cast<double>(uv);
  return to == Type::kF16 ? DoubleToF16(d, r == Rounding::kNone ? Rounding::kRn : r)
                          : DoubleToBF16(d, r == Rounding::kNone ? Rounding::kRn : r);
}

uint64_t FloatToFloat(uint64_t bits, Type from, Type to, const ptx::Modifiers& m) {
  Rounding r = m.rounding;
  double v = ToDouble(bits, from);
  if (m.ftz && from == Type::kF32) v = FlushF32(static_cast<float>(v));
  bool nan = std::isnan(v);
  if (r >= Rounding::kRni) v = RoundToInteger(v, r), r = Rounding::kRn;
  if (m.sat && !nan) v = std::min(std::max(v, 0.0), 1.0);
  if (m.sat && nan) v = 0.0, nan = false;
  if (m.relu && !nan && !(v > 0)) v = 0.0;
  switch (to) {
    case Type::kF64: return nan ? Bits<double>(std::numeric_limits<double>::quiet_NaN()) : Bits<double>(v);
    case Type::kF32: {
      if (nan) return kF32CanonicalNan;
      float f = (from == Type::kF64) ? DoubleToF32(v, r == Rounding::kNone ? Rounding::kRn : r)
                                     : static_cast<float>(v);
      if (m.ftz) f = FlushF32(f);
      return Bits<float>(f);
    }
    case Type::kF16:
      if (nan) return kF16CanonicalNan;
      if (from == Type::kF32 && (r == Rounding::kRn || r == Rounding::kNone))
        return F32ToF16(static_cast<float>(v));
      return DoubleToF16(v, r == Rounding::kNone ? Rounding::kRn : r);
    case Type::kBF16:
      if (nan) return kBF16CanonicalNan;
      if (from == Type::kF32 && (r == Rounding::kRn || r == Rounding::kNone))
        return F32ToBF16(static_cast<float>(v));
      return DoubleToBF16(v, r == Rounding::kNone ? Rounding::kRn : r);
    default: return 0;
  }
}

uint64_t Convert(uint64_t bits, Type from, Type to, const ptx::Modifiers& m) {
  bool ff = ptx::IsFloat(from), tf = ptx::IsFloat(to);
  if (ff && tf) return FloatToFloat(bits, from, to, m);
  if (ff) {
    double v = ToDouble(bits, from);
    if (m.ftz && from == Type::kF32) v = FlushF32(static_cast<float>(v));
    return FloatToInt(v, to, m.rounding == Rounding::kNone ? Rounding::kRzi : m.rounding);
  }
  if (tf) {
    uint64_t f = IntToFloat(bits, from, to, m.rounding == Rounding::kNone ? Rounding::kRn : m.rounding);
    if (m.sat && to == Type::kF32) {
      float x = std::min(std::max(As<float>(f), 0.0f), 1.0f);
      f = Bits<float>(x);
    }
    return f;
  }
  return IntToInt(bits, from, to, m.sat);
}

bool Cvt(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  Type to = in.type, from = in.type2;
  const ptx::Modifiers& m = in.mod;
  if (to == Type::kF32 && from == Type::kBF16 && !m.ftz && !m.sat) {  // the common widening
    ForEachLane(mask, [&](int l) { d[l] = uint64_t(uint16_t(a[l])) << 16; });
    return true;
  }
  ForEachLane(mask, [&](int l) { d[l] = Convert(a[l], from, to, m); });
  return true;
}

// cvt.rn.f16x2.f32 d, a, b: a converts into the upper half, b the lower.
bool CvtPacked(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  Type half = in.type == Type::kF16x2 ? Type::kF16 : Type::kBF16;
  ForEachLane(mask, [&](int l) {
    uint64_t hi = Convert(a[l], in.type2, half, in.mod), lo = Convert(b[l], in.type2, half, in.mod);
    d[l] = (hi << 16) | lo;
  });
  return true;
}

// ---- cvta ------------------------------------------------------------------------

bool Cvta(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  ptx::Space space = in.mod.space;
  bool to_generic = in.mod.full;
  uint64_t window = space == ptx::Space::kShared ? kSharedWindow
                    : space == ptx::Space::kLocal ? kLocalWindow
                                                  : 0;
  uint64_t m = Mask(ptx::TypeBits(in.type));
  ForEachLane(mask, [&](int l) {
    uint64_t v = a[l];
    if (window) v = to_generic ? (v & kWindowMask) | window : v & kWindowMask;
    d[l] = v & m;
  });
  return true;
}

// ---- prmt (default mode) -----------------------------------------------------------

bool Prmt(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]);
  ForEachLane(mask, [&](int l) {
    uint64_t bytes = (uint64_t(uint32_t(b[l])) << 32) | uint32_t(a[l]);
    uint32_t sel = uint32_t(c[l]), r = 0;
    for (int i = 0; i < 4; ++i) {
      uint32_t s = (sel >> (4 * i)) & 0xf;
      uint32_t byte = (bytes >> (8 * (s & 7))) & 0xff;
      if (s & 8) byte = (byte & 0x80) ? 0xff : 0;
      r |= byte << (8 * i);
    }
    d[l] = r;
  });
  return true;
}

// ---- setp / set / selp / slct ------------------------------------------------------

template <typename T>
bool Compare(ptx::CmpOp op, T a, T b) {
  using C = ptx::CmpOp;
  if constexpr (std::is_floating_point_v<T>) {
    bool unordered = std::isnan(a) || std::isnan(b);
    switch (op) {
      case C::kEq: return !unordered && a == b;
      case C::kNe: return !unordered && a != b;
      case C::kLt: return !unordered && a < b;
      case C::kLe: return !unordered && a <= b;
      case C::kGt: return !unordered && a > b;
      case C::kGe: return !unordered && a >= b;
      case C::kEqu: return unordered || a == b;
      case C::kNeu: return unordered || a != b;
      case C::kLtu: return unordered || a < b;
      case C::kLeu: return unordered || a <= b;
      case C::kGtu: return unordered || a > b;
      case C::kGeu: return unordered || a >= b;
      case C::kNum: return !unordered;
      case C::kNan: return unordered;
      default: return false;
    }
  } else {
    switch (op) {
      case C::kEq: return a == b;
      case C::kNe: return a != b;
      case C::kLt: case C::kLo: return a < b;
      case C::kLe: case C::kLs: return a <= b;
      case C::kGt: case C::kHi: return a > b;
      case C::kGe: case C::kHs: return a >= b;
      default: return false;
    }
  }
}

bool Combine(ptx::BoolOp op, bool x, bool c) {
  switch (op) {
    case ptx::BoolOp::kAnd: return x && c;
    case ptx::BoolOp::kOr: return x || c;
    case ptx::BoolOp::kXor: return x != c;
    default: return x;
  }
}

// The compared value of operand bits: T is the C++ comparison type; narrow
// floats compare as float.
template <typename T>
T Operand(uint64_t bits, Type t, bool ftz) {
  if constexpr (std::is_same_v<T, float>) {
    float v = t == Type::kF16 ? F16ToF32(uint16_t(bits))
              : t == Type::kBF16 ? BF16ToF32(uint16_t(bits))
                                 : As<float>(bits);
    return ftz ? FlushF32(v) : v;
  } else {
    return As<T>(bits);
  }
}

template <typename T>
bool Setp(WarpState& w, const Instruction& in, uint32_t mask) {
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  bool has_c = in.num_src > 2;
  Src c = has_c ? w.S(in.src[2]) : a;
  bool c_negated = has_c && in.src[2].negated;
  uint64_t* p = w.Reg(in.dst[0].reg);
  uint64_t* q = in.num_dst > 1 ? w.Reg(in.dst[1].reg) : nullptr;
  Type t = in.type;
  ptx::CmpOp op = in.mod.cmp;
  ptx::BoolOp bop = in.mod.bool_op;
  bool ftz = in.mod.ftz;
  ForEachLane(mask, [&](int l) {
    bool x = Compare<T>(op, Operand<T>(a[l], t, ftz), Operand<T>(b[l], t, ftz));
    bool cv = has_c ? ((c[l] & 1) != 0) != c_negated : false;
    p[l] = has_c ? Combine(bop, x, cv) : x;
    if (q) q[l] = has_c ? Combine(bop, !x, cv) : !x;
  });
  return true;
}

// setp on f16x2/bf16x2: p from the low halves, q from the high halves.
bool SetpPacked(WarpState& w, const Instruction& in, uint32_t mask) {
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  uint64_t* p = w.Reg(in.dst[0].reg);
  uint64_t* q = in.num_dst > 1 ? w.Reg(in.dst[1].reg) : nullptr;
  Type half = in.type == Type::kF16x2 ? Type::kF16 : Type::kBF16;
  bool has_c = in.num_src > 2;
  Src c = has_c ? w.S(in.src[2]) : a;
  bool c_negated = has_c && in.src[2].negated;
  ForEachLane(mask, [&](int l) {
    bool cv = has_c ? ((c[l] & 1) != 0) != c_negated : false;
    bool lo = Compare<float>(in.mod.cmp, Operand<float>(a[l], half, in.mod.ftz),
                             Operand<float>(b[l], half, in.mod.ftz));
    bool hi = Compare<float>(in.mod.cmp, Operand<float>(a[l] >> 16, half, in.mod.ftz),
                             Operand<float>(b[l] >> 16, half, in.mod.ftz));
    p[l] = has_c ? Combine(in.mod.bool_op, lo, cv) : lo;
    if (q) q[l] = has_c ? Combine(in.mod.bool_op, hi, cv) : hi;
  });
  return true;
}

template <typename T>
bool Set(WarpState& w, const Instruction& in, uint32_t mask) {
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  uint64_t* d = w.Reg(in.dst[0].reg);
  bool float_result = in.type == Type::kF32;
  ForEachLane(mask, [&](int l) {
    bool x = Compare<T>(in.mod.cmp, Operand<T>(a[l], in.type2, in.mod.ftz),
                        Operand<T>(b[l], in.type2, in.mod.ftz));
    d[l] = float_result ? (x ? Bits<float>(1.0f) : 0) : (x ? 0xffffffffu : 0);
  });
  return true;
}

bool Selp(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]);
  bool negated = in.src[2].negated;
  ForEachLane(mask, [&](int l) { d[l] = (((c[l] & 1) != 0) != negated) ? a[l] : b[l]; });
  return true;
}

bool Slct(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]);
  bool is_float = in.type2 == Type::kF32;
  ForEachLane(mask, [&](int l) {
    bool take_a = is_float ? !(Operand<float>(c[l], Type::kF32, in.mod.ftz) < 0.0f)
                           : As<int32_t>(c[l]) >= 0;
    d[l] = take_a ? a[l] : b[l];
  });
  return true;
}

template <template <typename> class H>
ptx::Handler ByCompareType(Type t) {
  switch (t) {
    case Type::kB16: case Type::kU16: return &H<uint16_t>::Run;
    case Type::kS16: return &H<int16_t>::Run;
    case Type::kB32: case Type::kU32: return &H<uint32_t>::Run;
    case Type::kS32: return &H<int32_t>::Run;
    case Type::kB64: case Type::kU64: return &H<uint64_t>::Run;
    case Type::kS64: return &H<int64_t>::Run;
    case Type::kF16: case Type::kBF16: case Type::kF32: return &H<float>::Run;
    case Type::kF64: return &H<double>::Run;
    default: return nullptr;
  }
}
template <typename T> struct SetpH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Setp<T>(w, i, m); } };
template <typename T> struct SetH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Set<T>(w, i, m); } };

}  // namespace

ptx::Handler ConvertHandler(const Instruction& in) {
  using K = ptx::Operand::Kind;
  switch (in.opcode) {
    case Opcode::kMov:
      if (in.src[0].kind == K::kVector) return &MovPack;
      if (in.dst[0].kind == K::kVector) return &MovUnpack;
      return &Mov;
    case Opcode::kCvt: {
      if (in.type2 == Type::kNone) return nullptr;
      if (in.type == Type::kF16x2 || in.type == Type::kBF16x2) {
        return in.num_src == 2 && in.type2 == Type::kF32 ? &CvtPacked : nullptr;
      }
      if (in.type2 == Type::kF16x2 || in.type2 == Type::kBF16x2 || in.type == Type::kPred ||
          in.type2 == Type::kPred || in.type == Type::kB128) {
        return nullptr;
      }
      bool float_to_int = ptx::IsFloat(in.type2) && !ptx::IsFloat(in.type);
      if (float_to_int && in.mod.rounding != ptx::Rounding::kNone &&
          in.mod.rounding < ptx::Rounding::kRni) {
        return nullptr;  // float -> int needs an integer rounding
      }
      return &Cvt;
    }
    case Opcode::kCvta: return &Cvta;
    case Opcode::kPrmt: return in.mod.prmt_mode == 0 ? &Prmt : nullptr;
    case Opcode::kSetp:
      if (in.type == Type::kF16x2 || in.type == Type::kBF16x2) return &SetpPacked;
      return ByCompareType<SetpH>(in.type);
    case Opcode::kSet: return ByCompareType<SetH>(in.type2);
    case Opcode::kSelp: return &Selp;
    case Opcode::kSlct: return &Slct;
    default: return nullptr;
  }
}

}  // namespace kiln::emu
