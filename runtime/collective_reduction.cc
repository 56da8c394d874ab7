// Reduction functions of the host collectives (see collective_reduction.h).
#include "runtime/collective_reduction.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/float_formats.h"

namespace kiln::runtime {
namespace {

using thunks::ReductionKind;

// Applies `op` to every element; loads and stores through memcpy so
// unaligned slices and aliasing outputs are fine.
template <typename T, typename Op>
void Apply(void* out, const void* a, const void* b, size_t n, Op op) {
  auto* o = static_cast<uint8_t*>(out);
  auto* x = static_cast<const uint8_t*>(a);
  auto* y = static_cast<const uint8_t*>(b);
  for (size_t i = 0; i < n; ++i) {
    T u, v;
    std::memcpy(&u, x + i * sizeof(T), sizeof(T));
    std::memcpy(&v, y + i * sizeof(T), sizeof(T));
    T r = op(u, v);
    std::memcpy(o + i * sizeof(T), &r, sizeof(T));
  }
}

template <typename T>
T NanMin(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return b < a ? b : a;
}
template <typename T>
T NanMax(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return b > a ? b : a;
}

// Integers: sums and products wrap (computed unsigned), and/or are bitwise.
template <typename T>
ReduceFunction IntegerReduction(ReductionKind kind) {
  using U = std::make_unsigned_t<T>;
  switch (kind) {
    case ReductionKind::kSum:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<T>(o, a, b, n, [](T x, T y) { return static_cast<T>(static_cast<U>(x) + static_cast<U>(y)); });
      };
    case ReductionKind::kProduct:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<T>(o, a, b, n, [](T x, T y) { return static_cast<T>(static_cast<U>(x) * static_cast<U>(y)); });
      };
    case ReductionKind::kMin:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<T>(o, a, b, n, [](T x, T y) { return y < x ? y : x; });
      };
    case ReductionKind::kMax:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<T>(o, a, b, n, [](T x, T y) { return y > x ? y : x; });
      };
    case ReductionKind::kAnd:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<T>(o, a, b, n, [](T x, T y) { return static_cast<T>(x & y); });
      };
    case ReductionKind::kOr:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<T>(o, a, b, n, [](T x, T y) { return static_cast<T>(x | y); });
      };
  }
  return nullptr;
}

// s2, s4, u2, u4: one element per byte, the signed ones sign-extended (as
// Literal keeps them). The 8-bit operation on those bytes, then each
// result wrapped to the type's width: a sum or product modulo 2^bits, and
// min, max, and, or unchanged by the wrap.
template <ElementType kType, ReductionKind kKind>
void SubByteApply(void* out, const void* a, const void* b, size_t n) {
  constexpr bool kSigned = kType == ElementType::kS2 || kType == ElementType::kS4;
  constexpr int kBits = kType == ElementType::kS2 || kType == ElementType::kU2 ? 2 : 4;
  IntegerReduction<std::conditional_t<kSigned, int8_t, uint8_t>>(kKind)(out, a, b, n);
  auto* o = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; ++i) {
    const unsigned low = o[i] & ((1u << kBits) - 1);
    const bool negative = kSigned && (low >> (kBits - 1)) != 0;
    o[i] = static_cast<uint8_t>(negative ? low | (0xFFu << kBits) : low);
  }
}

template <ElementType kType>
ReduceFunction SubByteIntegerReduction(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum: return SubByteApply<kType, ReductionKind::kSum>;
    case ReductionKind::kProduct: return SubByteApply<kType, ReductionKind::kProduct>;
    case ReductionKind::kMin: return SubByteApply<kType, ReductionKind::kMin>;
    case ReductionKind::kMax: return SubByteApply<kType, ReductionKind::kMax>;
    case ReductionKind::kAnd: return SubByteApply<kType, ReductionKind::kAnd>;
    case ReductionKind::kOr: return SubByteApply<kType, ReductionKind::kOr>;
  }
  return nullptr;
}

// pred: and/min are logical and, or/max/sum logical or, product and.
ReduceFunction PredReduction(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kAnd:
    case ReductionKind::kMin:
    case ReductionKind::kProduct:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<uint8_t>(o, a, b, n, [](uint8_t x, uint8_t y) -> uint8_t { return (x != 0) && (y != 0); });
      };
    case ReductionKind::kOr:
    case ReductionKind::kMax:
    case ReductionKind::kSum:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<uint8_t>(o, a, b, n, [](uint8_t x, uint8_t y) -> uint8_t { return (x != 0) || (y != 0); });
      };
  }
  return nullptr;
}

template <typename T>
ReduceFunction FloatReduction(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum:
      return [](void* o, const void* a, const void* b, size_t n) { Apply<T>(o, a, b, n, [](T x, T y) { return x + y; }); };
    case ReductionKind::kProduct:
      return [](void* o, const void* a, const void* b, size_t n) { Apply<T>(o, a, b, n, [](T x, T y) { return x * y; }); };
    case ReductionKind::kMin:
      return [](void* o, const void* a, const void* b, size_t n) { Apply<T>(o, a, b, n, NanMin<T>); };
    case ReductionKind::kMax:
      return [](void* o, const void* a, const void* b, size_t n) { Apply<T>(o, a, b, n, NanMax<T>); };
    default: return nullptr;
  }
}

struct Plus { double operator()(double a, double b) const { return a + b; } };
struct Times { double operator()(double a, double b) const { return a * b; } };
struct Min { double operator()(double a, double b) const { return NanMin(a, b); } };
struct Max { double operator()(double a, double b) const { return NanMax(a, b); } };

// f16 / bf16 (16-bit storage), the f8 types and f4e2m1fn (a byte): one step in
// double, rounded back to the type (ties to even, the type's overflow and
// NaN rules), as the evaluator folds them.
template <ElementType kType, typename Op>
void NarrowApply(void* out, const void* a, const void* b, size_t n) {
  using Bits = std::conditional_t<kType == ElementType::kF16 || kType == ElementType::kBF16, uint16_t, uint8_t>;
  Apply<Bits>(out, a, b, n, [](Bits x, Bits y) {
    return static_cast<Bits>(
        EncodeNarrowFloat(kType, Op{}(DecodeNarrowFloat(kType, x), DecodeNarrowFloat(kType, y))));
  });
}

template <ElementType kType>
ReduceFunction NarrowFloatReduction(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum: return NarrowApply<kType, Plus>;
    case ReductionKind::kProduct: return NarrowApply<kType, Times>;
    case ReductionKind::kMin: return NarrowApply<kType, Min>;
    case ReductionKind::kMax: return NarrowApply<kType, Max>;
    default: return nullptr;
  }
}

template <typename T>
ReduceFunction ComplexReduction(ReductionKind kind) {
  using C = std::complex<T>;
  switch (kind) {
    case ReductionKind::kSum:
      return [](void* o, const void* a, const void* b, size_t n) { Apply<C>(o, a, b, n, [](C x, C y) { return x + y; }); };
    case ReductionKind::kProduct:
      return [](void* o, const void* a, const void* b, size_t n) { Apply<C>(o, a, b, n, [](C x, C y) { return x * y; }); };
    default: return nullptr;
  }
}

ReduceFunction Find(ElementType type, ReductionKind kind) {
  switch (type) {
    case ElementType::kPred: return PredReduction(kind);
    case ElementType::kS8: return IntegerReduction<int8_t>(kind);
    case ElementType::kS16: return IntegerReduction<int16_t>(kind);
    case ElementType::kS32: return IntegerReduction<int32_t>(kind);
    case ElementType::kS64: return IntegerReduction<int64_t>(kind);
    case ElementType::kU8: return IntegerReduction<uint8_t>(kind);
    case ElementType::kU16: return IntegerReduction<uint16_t>(kind);
    case ElementType::kU32: return IntegerReduction<uint32_t>(kind);
    case ElementType::kU64: return IntegerReduction<uint64_t>(kind);
    case ElementType::kF16: return NarrowFloatReduction<ElementType::kF16>(kind);
    case ElementType::kBF16: return NarrowFloatReduction<ElementType::kBF16>(kind);
    case ElementType::kF8E5M2: return NarrowFloatReduction<ElementType::kF8E5M2>(kind);
    case ElementType::kF8E4M3: return NarrowFloatReduction<ElementType::kF8E4M3>(kind);
    case ElementType::kF8E4M3FN: return NarrowFloatReduction<ElementType::kF8E4M3FN>(kind);
    case ElementType::kF8E4M3B11FNUZ: return NarrowFloatReduction<ElementType::kF8E4M3B11FNUZ>(kind);
    case ElementType::kF8E5M2FNUZ: return NarrowFloatReduction<ElementType::kF8E5M2FNUZ>(kind);
    case ElementType::kF8E4M3FNUZ: return NarrowFloatReduction<ElementType::kF8E4M3FNUZ>(kind);
    case ElementType::kF8E3M4: return NarrowFloatReduction<ElementType::kF8E3M4>(kind);
    case ElementType::kF8E8M0FNU: return NarrowFloatReduction<ElementType::kF8E8M0FNU>(kind);
    case ElementType::kF4E2M1FN: return NarrowFloatReduction<ElementType::kF4E2M1FN>(kind);
    case ElementType::kS2: return SubByteIntegerReduction<ElementType::kS2>(kind);
    case ElementType::kS4: return SubByteIntegerReduction<ElementType::kS4>(kind);
    case ElementType::kU2: return SubByteIntegerReduction<ElementType::kU2>(kind);
    case ElementType::kU4: return SubByteIntegerReduction<ElementType::kU4>(kind);
    case ElementType::kF32: return FloatReduction<float>(kind);
    case ElementType::kF64: return FloatReduction<double>(kind);
    case ElementType::kC64: return ComplexReduction<float>(kind);
    case ElementType::kC128: return ComplexReduction<double>(kind);
    default: return nullptr;
  }
}

}  // namespace

StatusOr<ReduceFunction> CollectiveReduction(ElementType type, ReductionKind kind) {
  ReduceFunction fn = Find(type, kind);
  if (!fn)
    return Error(std::string(thunks::ReductionKindName(kind)) + " reduction of " +
                 std::string(ElementTypeName(type)) + " is not supported across devices");
  return fn;
}

}  // namespace kiln::runtime
