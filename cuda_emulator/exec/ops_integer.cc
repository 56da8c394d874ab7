// Integer, bit and predicate-logic instructions: add/sub/mul/mad (lo, hi,
// wide, carry chains, .sat), div/rem, min/max, abs/neg, shifts, funnel
// shifts, and/or/xor/not/cnot/lop3, popc/clz/brev/bfe/bfi/bfind/bmsk.
//
// Values wrap modulo 2^n as the hardware does; every operation that is
// undefined behaviour in C++ (signed overflow, shifts past the width,
// division by zero or INT_MIN / -1) is computed on unsigned values or
// special-cased, so a kernel can never crash the emulator. PTX leaves the
// result of integer division by zero unspecified; the emulator returns the
// hardware's all-ones quotient and the dividend as remainder.
#include <limits>
#include <type_traits>

#include "cuda_emulator/exec/warp_state.h"

namespace kiln::emu {
namespace {

using ptx::Instruction;
using ptx::Opcode;
using ptx::Type;

template <typename T>
using U = std::make_unsigned_t<T>;

// ---- Generic shapes ----------------------------------------------------------

template <typename T, typename Op>
bool Unary(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  ForEachLane(mask, [&](int l) { d[l] = Bits<T>(Op::template F<T>(As<T>(a[l]))); });
  return true;
}

template <typename T, typename Op>
bool Binary(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  ForEachLane(mask, [&](int l) { d[l] = Bits<T>(Op::template F<T>(As<T>(a[l]), As<T>(b[l]))); });
  return true;
}

template <typename T, typename Op>
bool Ternary(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]);
  ForEachLane(mask, [&](int l) {
    d[l] = Bits<T>(Op::template F<T>(As<T>(a[l]), As<T>(b[l]), As<T>(c[l])));
  });
  return true;
}

// ---- Operations --------------------------------------------------------------

struct AddOp { template <typename T> static T F(T a, T b) { return T(U<T>(a) + U<T>(b)); } };
struct SubOp { template <typename T> static T F(T a, T b) { return T(U<T>(a) - U<T>(b)); } };
struct MulLoOp { template <typename T> static T F(T a, T b) { return T(U<T>(a) * U<T>(b)); } };
struct MulHiOp {
  template <typename T>
  static T F(T a, T b) {
    if constexpr (sizeof(T) == 8) {
      using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
      return T(static_cast<unsigned __int128>(W(a) * W(b)) >> 64);
    } else {
      using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      return T(static_cast<uint64_t>(W(a) * W(b)) >> (8 * sizeof(T)));
    }
  }
};
struct MinOp { template <typename T> static T F(T a, T b) { return a < b ? a : b; } };
struct MaxOp { template <typename T> static T F(T a, T b) { return a > b ? a : b; } };
struct AndOp { template <typename T> static T F(T a, T b) { return a & b; } };
struct OrOp { template <typename T> static T F(T a, T b) { return a | b; } };
struct XorOp { template <typename T> static T F(T a, T b) { return a ^ b; } };
struct NotOp { template <typename T> static T F(T a) { return T(~a); } };
struct CnotOp { template <typename T> static T F(T a) { return T(a == 0 ? 1 : 0); } };
struct NegOp { template <typename T> static T F(T a) { return T(U<T>(0) - U<T>(a)); } };
struct AbsOp {
  template <typename T>
  static T F(T a) { return a < 0 ? T(U<T>(0) - U<T>(a)) : a; }
};
struct DivOp {
  template <typename T>
  static T F(T a, T b) {
    if (b == 0) return T(~U<T>(0));
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return a;
    }
    return T(a / b);
  }
};
struct RemOp {
  template <typename T>
  static T F(T a, T b) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
    }
    return T(a % b);
  }
};
struct ShlOp {
  template <typename T>
  static T F(T a, uint32_t n) { return n >= 8 * sizeof(T) ? T(0) : T(U<T>(a) << n); }
};
struct ShrOp {
  template <typename T>
  static T F(T a, uint32_t n) {
    if (n >= 8 * sizeof(T)) return std::is_signed_v<T> && a < 0 ? T(-1) : T(0);
    return T(a >> n);
  }
};
struct PopcOp { template <typename T> static uint32_t F(T a) { return std::popcount(U<T>(a)); } };
struct ClzOp { template <typename T> static uint32_t F(T a) { return std::countl_zero(U<T>(a)); } };
struct BrevOp {
  template <typename T>
  static T F(T a) {
    U<T> v = U<T>(a), r = 0;
    for (size_t i = 0; i < 8 * sizeof(T); ++i) r |= U<T>((v >> i) & 1) << (8 * sizeof(T) - 1 - i);
    return T(r);
  }
};

// Shifts take a u32 amount whatever the shifted type.
template <typename T, typename Op>
bool Shift(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  ForEachLane(mask, [&](int l) {
    d[l] = Bits<T>(Op::template F<T>(As<T>(a[l]), static_cast<uint32_t>(b[l])));
  });
  return true;
}

// popc/clz: b32/b64 in, u32 out.
template <typename T, typename Op>
bool Count(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  ForEachLane(mask, [&](int l) { d[l] = Op::template F<T>(As<T>(a[l])); });
  return true;
}

template <typename T>
bool AddSat(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  bool sub = in.opcode == Opcode::kSub;
  ForEachLane(mask, [&](int l) {
    int64_t x = As<int32_t>(a[l]), y = As<int32_t>(b[l]);
    int64_t r = sub ? x - y : x + y;
    r = std::min<int64_t>(std::max<int64_t>(r, INT32_MIN), INT32_MAX);
    d[l] = Bits<int32_t>(static_cast<int32_t>(r));
  });
  return true;
}

// mul.wide / mad.wide: 16->32 or 32->64 bit products.
template <typename T, bool kMad>
bool MulWide(WarpState& w, const Instruction& in, uint32_t mask) {
  using W = std::conditional_t<sizeof(T) == 2, std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>,
                               std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  Src c = kMad ? w.S(in.src[2]) : a;
  ForEachLane(mask, [&](int l) {
    U<W> p = U<W>(W(As<T>(a[l])) * W(As<T>(b[l])));
    if constexpr (kMad) p += U<W>(As<W>(c[l]));
    d[l] = Bits<W>(W(p));
  });
  return true;
}

template <typename T, typename MulOp>
bool Mad(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]);
  bool carry_in = in.mod.carry_in, carry_out = in.mod.carry_out;
  ForEachLane(mask, [&](int l) {
    U<T> p = U<T>(MulOp::template F<T>(As<T>(a[l]), As<T>(b[l])));
    U<T> cv = U<T>(As<T>(c[l]));
    U<T> cin = carry_in ? U<T>((w.carry >> l) & 1) : 0;
    U<T> r = p + cv + cin;
    if (carry_out) {
      bool cf = r < p || (cin && r == p);
      w.carry = (w.carry & ~(1u << l)) | (uint32_t(cf) << l);
    }
    d[l] = Bits<T>(T(r));
  });
  return true;
}

// add.cc / addc / sub.cc / subc: carry (borrow) chains on 32/64-bit values.
template <typename T>
bool AddCarry(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  bool sub = in.opcode == Opcode::kSub || in.opcode == Opcode::kSubc;
  bool carry_in = in.mod.carry_in, carry_out = in.mod.carry_out;
  ForEachLane(mask, [&](int l) {
    U<T> x = U<T>(As<T>(a[l])), y = U<T>(As<T>(b[l]));
    U<T> cin = carry_in ? U<T>((w.carry >> l) & 1) : 0;
    U<T> r;
    bool cf;
    if (!sub) {
      r = x + y + cin;
      cf = r < x || (cin && r == x);
    } else {  // the borrow is CF; x - y - borrow
      r = x - y - cin;
      cf = x < y || (cin && x == y);
    }
    if (carry_out) w.carry = (w.carry & ~(1u << l)) | (uint32_t(cf) << l);
    d[l] = Bits<T>(T(r));
  });
  return true;
}

template <typename T>
bool Bfe(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]);
  constexpr uint32_t kMsb = 8 * sizeof(T) - 1;
  ForEachLane(mask, [&](int l) {
    U<T> v = U<T>(As<T>(a[l]));
    uint32_t pos = b[l] & 0xff, len = c[l] & 0xff;
    U<T> sbit = 0;
    if (std::is_signed_v<T> && len != 0) {
      uint32_t top = std::min(pos + len - 1, kMsb);
      sbit = (v >> top) & 1;
    }
    U<T> r = 0;
    for (uint32_t i = 0; i <= kMsb; ++i) {
      U<T> bit = (i < len && pos + i <= kMsb) ? U<T>((v >> (pos + i)) & 1) : sbit;
      r |= bit << i;
    }
    d[l] = Bits<T>(T(r));
  });
  return true;
}

template <typename T>
bool Bfi(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]), e = w.S(in.src[3]);
  constexpr uint32_t kBits = 8 * sizeof(T);
  ForEachLane(mask, [&](int l) {
    U<T> f = U<T>(As<T>(b[l]));
    U<T> v = U<T>(As<T>(a[l]));
    uint32_t pos = c[l] & 0xff, len = e[l] & 0xff;
    for (uint32_t i = 0; i < len && pos + i < kBits; ++i) {
      U<T> bit = U<T>(1) << (pos + i);
      f = (f & ~bit) | (((v >> i) & 1) << (pos + i));
    }
    d[l] = Bits<T>(T(f));
  });
  return true;
}

template <typename T>
bool Bfind(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  bool shift_amount = in.mod.approx;  // '.shiftamt' is decoded into approx
  ForEachLane(mask, [&](int l) {
    U<T> v = U<T>(As<T>(a[l]));
    if (std::is_signed_v<T> && (v >> (8 * sizeof(T) - 1))) v = ~v;
    uint32_t r = v == 0 ? 0xffffffffu : static_cast<uint32_t>(8 * sizeof(T) - 1 - std::countl_zero(v));
    if (shift_amount && r != 0xffffffffu) r = static_cast<uint32_t>(8 * sizeof(T) - 1) - r;
    d[l] = r;
  });
  return true;
}

// bmsk.{wrap,clamp}.b32 d, a, b: b one bits from bit a up. .wrap takes a
// and b modulo 32; .clamp limits both to 32 (bits past 31 are dropped).
bool Bmsk(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  const bool wrap = in.mod.shift_wrap;
  ForEachLane(mask, [&](int l) {
    uint32_t pos = uint32_t(a[l]), len = uint32_t(b[l]);
    if (wrap) {
      pos &= 31;
      len &= 31;
    } else {
      pos = std::min(pos, 32u);
      len = std::min(len, 32u);
    }
    const uint64_t ones = len >= 32 ? 0xffffffffull : (uint64_t{1} << len) - 1;
    d[l] = uint32_t(pos >= 32 ? 0 : ones << pos);
  });
  return true;
}

bool Lop3(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]), lut = w.S(in.src[3]);
  ForEachLane(mask, [&](int l) {
    uint32_t x = uint32_t(a[l]), y = uint32_t(b[l]), z = uint32_t(c[l]), table = uint32_t(lut[l]);
    uint32_t r = 0;
    for (int i = 0; i < 8; ++i) {
      if (!((table >> i) & 1)) continue;
      r |= ((i & 4) ? x : ~x) & ((i & 2) ? y : ~y) & ((i & 1) ? z : ~z);
    }
    d[l] = r;
  });
  return true;
}

bool Shf(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]), c = w.S(in.src[2]);
  bool left = in.mod.shift_left, wrap = in.mod.shift_wrap;
  ForEachLane(mask, [&](int l) {
    uint64_t v = (uint64_t(uint32_t(b[l])) << 32) | uint32_t(a[l]);
    uint32_t n = uint32_t(c[l]);
    n = wrap ? (n & 31) : std::min(n, 32u);
    d[l] = left ? uint32_t((v << n) >> 32) : uint32_t(v >> n);
  });
  return true;
}

// Predicate logic: and/or/xor/not on .pred keep one bit.
template <typename Op>
bool PredicateBinary(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]), b = w.S(in.src[1]);
  bool na = in.src[0].negated, nb = in.src[1].negated;
  ForEachLane(mask, [&](int l) {
    d[l] = Op::template F<uint64_t>((a[l] & 1) ^ na, (b[l] & 1) ^ nb) & 1;
  });
  return true;
}
bool PredicateNot(WarpState& w, const Instruction& in, uint32_t mask) {
  uint64_t* d = w.Reg(in.dst[0].reg);
  Src a = w.S(in.src[0]);
  ForEachLane(mask, [&](int l) { d[l] = ~a[l] & 1; });
  return true;
}

// ---- Selection ---------------------------------------------------------------

// Instantiates Shape<T, Args...> for the integer type `t`.
template <template <typename, typename...> class Shape, typename... Args>
ptx::Handler ForInt(Type t, bool allow_8 = false) {
  switch (t) {
    case Type::kB16: case Type::kU16: return &Shape<uint16_t, Args...>::Run;
    case Type::kS16: return &Shape<int16_t, Args...>::Run;
    case Type::kB32: case Type::kU32: return &Shape<uint32_t, Args...>::Run;
    case Type::kS32: return &Shape<int32_t, Args...>::Run;
    case Type::kB64: case Type::kU64: return &Shape<uint64_t, Args...>::Run;
    case Type::kS64: return &Shape<int64_t, Args...>::Run;
    default: return nullptr;
  }
}

// Adapters so that templates of different arity fit ForInt.
template <typename T, typename Op> struct UnaryH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Unary<T, Op>(w, i, m); } };
template <typename T, typename Op> struct BinaryH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Binary<T, Op>(w, i, m); } };
template <typename T, typename Op> struct ShiftH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Shift<T, Op>(w, i, m); } };
template <typename T, typename Op> struct CountH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Count<T, Op>(w, i, m); } };
template <typename T, typename Op> struct MadH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Mad<T, Op>(w, i, m); } };
template <typename T> struct AddCarryH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return AddCarry<T>(w, i, m); } };
template <typename T> struct BfeH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Bfe<T>(w, i, m); } };
template <typename T> struct BfiH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Bfi<T>(w, i, m); } };
template <typename T> struct BfindH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return Bfind<T>(w, i, m); } };
template <typename T, typename Mad> struct WideH { static bool Run(WarpState& w, const Instruction& i, uint32_t m) { return MulWide<T, Mad::value>(w, i, m); } };

ptx::Handler WideFor(Type t, bool mad) {
  auto pick = [&](auto tag) -> ptx::Handler {
    using B = decltype(tag);
    switch (t) {
      case Type::kU16: return &WideH<uint16_t, B>::Run;
      case Type::kS16: return &WideH<int16_t, B>::Run;
      case Type::kU32: return &WideH<uint32_t, B>::Run;
      case Type::kS32: return &WideH<int32_t, B>::Run;
      default: return nullptr;
    }
  };
  return mad ? pick(std::true_type()) : pick(std::false_type());
}

bool IsBitType(Type t) {
  return t == Type::kB16 || t == Type::kB32 || t == Type::kB64;
}

}  // namespace

ptx::Handler IntegerHandler(const Instruction& in) {
  const Type t = in.type;
  const auto& m = in.mod;
  if (ptx::IsFloat(t)) return nullptr;
  if (t == Type::kPred) {
    switch (in.opcode) {
      case Opcode::kAnd: return &PredicateBinary<AndOp>;
      case Opcode::kOr: return &PredicateBinary<OrOp>;
      case Opcode::kXor: return &PredicateBinary<XorOp>;
      case Opcode::kNot: return &PredicateNot;
      default: return nullptr;
    }
  }
  switch (in.opcode) {
    case Opcode::kAdd:
    case Opcode::kSub:
      if (m.sat) return t == Type::kS32 ? &AddSat<int32_t> : nullptr;
      if (m.carry_out) return ForInt<AddCarryH>(t);
      return in.opcode == Opcode::kAdd ? ForInt<BinaryH, AddOp>(t) : ForInt<BinaryH, SubOp>(t);
    case Opcode::kAddc:
    case Opcode::kSubc:
      return ForInt<AddCarryH>(t);
    case Opcode::kMul:
      if (m.mul == ptx::MulMode::kWide) return WideFor(t, false);
      if (m.mul == ptx::MulMode::kHi) return ForInt<BinaryH, MulHiOp>(t);
      return ForInt<BinaryH, MulLoOp>(t);
    case Opcode::kMad:
    case Opcode::kMadc:
      if (m.sat) return nullptr;
      if (m.mul == ptx::MulMode::kWide) return m.carry_in || m.carry_out ? nullptr : WideFor(t, true);
      if (m.mul == ptx::MulMode::kHi) return ForInt<MadH, MulHiOp>(t);
      return ForInt<MadH, MulLoOp>(t);
    case Opcode::kDiv: return ForInt<BinaryH, DivOp>(t);
    case Opcode::kRem: return ForInt<BinaryH, RemOp>(t);
    case Opcode::kMin: return m.relu ? nullptr : ForInt<BinaryH, MinOp>(t);
    case Opcode::kMax: return m.relu ? nullptr : ForInt<BinaryH, MaxOp>(t);
    case Opcode::kAbs: return ptx::IsSigned(t) ? ForInt<UnaryH, AbsOp>(t) : nullptr;
    case Opcode::kNeg: return ptx::IsSigned(t) ? ForInt<UnaryH, NegOp>(t) : nullptr;
    case Opcode::kAnd: return IsBitType(t) ? ForInt<BinaryH, AndOp>(t) : nullptr;
    case Opcode::kOr: return IsBitType(t) ? ForInt<BinaryH, OrOp>(t) : nullptr;
    case Opcode::kXor: return IsBitType(t) ? ForInt<BinaryH, XorOp>(t) : nullptr;
    case Opcode::kNot: return IsBitType(t) ? ForInt<UnaryH, NotOp>(t) : nullptr;
    case Opcode::kCnot: return IsBitType(t) ? ForInt<UnaryH, CnotOp>(t) : nullptr;
    case Opcode::kShl: return IsBitType(t) ? ForInt<ShiftH, ShlOp>(t) : nullptr;
    case Opcode::kShr: return ForInt<ShiftH, ShrOp>(t);
    case Opcode::kPopc:
      return t == Type::kB32 ? &CountH<uint32_t, PopcOp>::Run
             : t == Type::kB64 ? &CountH<uint64_t, PopcOp>::Run : nullptr;
    case Opcode::kClz:
      return t == Type::kB32 ? &CountH<uint32_t, ClzOp>::Run
             : t == Type::kB64 ? &CountH<uint64_t, ClzOp>::Run : nullptr;
    case Opcode::kBrev: return IsBitType(t) ? ForInt<UnaryH, BrevOp>(t) : nullptr;
    case Opcode::kBfe:
      switch (t) {
        case Type::kU32: return &BfeH<uint32_t>::Run;
        case Type::kS32: return &BfeH<int32_t>::Run;
        case Type::kU64: return &BfeH<uint64_t>::Run;
        case Type::kS64: return &BfeH<int64_t>::Run;
        default: return nullptr;
      }
    case Opcode::kBfi:
      return t == Type::kB32 ? &BfiH<uint32_t>::Run : t == Type::kB64 ? &BfiH<uint64_t>::Run : nullptr;
    case Opcode::kBfind:
      switch (t) {
        case Type::kU32: return &BfindH<uint32_t>::Run;
        case Type::kS32: return &BfindH<int32_t>::Run;
        case Type::kU64: return &BfindH<uint64_t>::Run;
        case Type::kS64: return &BfindH<int64_t>::Run;
        default: return nullptr;
      }
    case Opcode::kBmsk: return t == Type::kB32 ? &Bmsk : nullptr;
    case Opcode::kLop3: return t == Type::kB32 && in.num_dst == 1 ? &Lop3 : nullptr;
    case Opcode::kShf: return t == Type::kB32 ? &Shf : nullptr;
    default: return nullptr;
  }
}

}  // namespace kiln::emu
