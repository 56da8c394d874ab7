// Float formats: one table of format parameters, one encoder, one decoder.
// See float_formats.h for the semantics and their sources.
#include "common/float_formats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace kiln {
namespace {

using ET = ElementType;
using FS = FloatSpecials;

// Parameters from ml_dtypes (float8.h, mxfloat.h) and XLA's primitive_util.
constexpr FloatFormat kFormats[] = {
    // type                 bits exp mant bias  signed zero  specials
    {ET::kF16,             16,  5, 10,   15, true,  true,  FS::kIeee},
    {ET::kBF16,            16,  8,  7,  127, true,  true,  FS::kIeee},
    {ET::kF32,             32,  8, 23,  127, true,  true,  FS::kIeee},
    {ET::kF64,             64, 11, 52, 1023, true,  true,  FS::kIeee},
    {ET::kF8E5M2,           8,  5,  2,   15, true,  true,  FS::kIeee},
    {ET::kF8E4M3,           8,  4,  3,    7, true,  true,  FS::kIeee},
    {ET::kF8E3M4,           8,  3,  4,    3, true,  true,  FS::kIeee},
    {ET::kF8E4M3FN,         8,  4,  3,    7, true,  true,  FS::kAllOnesNan},
    {ET::kF8E4M3B11FNUZ,    8,  4,  3,   11, true,  true,  FS::kNegZeroNan},
    {ET::kF8E4M3FNUZ,       8,  4,  3,    8, true,  true,  FS::kNegZeroNan},
    {ET::kF8E5M2FNUZ,       8,  5,  2,   16, true,  true,  FS::kNegZeroNan},
    {ET::kF8E8M0FNU,        8,  8,  0,  127, false, false, FS::kAllOnesNan},
    {ET::kF4E2M1FN,         4,  2,  1,    1, true,  true,  FS::kNone},
};

uint64_t LowMask(int n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

struct Layout {
  uint64_t sign;      // sign bit (0 for unsigned formats)
  uint64_t mant;      // trailing-significand mask
  uint64_t exp_max;   // all-ones biased exponent
  uint64_t all_ones;  // magnitude with every non-sign bit set
  uint64_t max_mag;   // magnitude of the largest finite value
};

Layout LayoutOf(const FloatFormat& f) {
  Layout l;
  l.sign = f.is_signed ? uint64_t{1} << (f.bits - 1) : 0;
  l.mant = LowMask(f.mantissa_bits);
  l.exp_max = LowMask(f.exponent_bits);
  l.all_ones = (l.exp_max << f.mantissa_bits) | l.mant;
  switch (f.specials) {
    case FS::kIeee: l.max_mag = ((l.exp_max - 1) << f.mantissa_bits) | l.mant; break;
    case FS::kAllOnesNan: l.max_mag = l.all_ones - 1; break;
    case FS::kNegZeroNan:
    case FS::kNone: l.max_mag = l.all_ones; break;
  }
  return l;
}

double QuietNan(bool negative) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  return negative ? -nan : nan;
}

double Decode(const FloatFormat& f, uint64_t bits) {
  const Layout l = LayoutOf(f);
  bits &= LowMask(f.bits);
  const bool negative = (bits & l.sign) != 0;
  const uint64_t mag = bits & ~l.sign;
  const uint64_t exp = mag >> f.mantissa_bits;
  const uint64_t frac = mag & l.mant;
  switch (f.specials) {
    case FS::kIeee:
      if (exp == l.exp_max) {
        if (frac != 0) return QuietNan(negative);
        double inf = std::numeric_limits<double>::infinity();
        return negative ? -inf : inf;
      }
      break;
    case FS::kAllOnesNan:
      if (mag == l.all_ones) return QuietNan(negative);
      break;
    case FS::kNegZeroNan:
      if (negative && mag == 0) return QuietNan(false);
      break;
    case FS::kNone:
      break;
  }
  double value;
  if (exp == 0 && f.has_zero) {  // zero or subnormal: no implicit bit
    value = std::ldexp(static_cast<double>(frac), 1 - f.bias - f.mantissa_bits);
  } else {
    value = std::ldexp(static_cast<double>(frac | (l.mant + 1)),
                       static_cast<int>(exp) - f.bias - f.mantissa_bits);
  }
  return negative ? -value : value;
}

// Encoding of NaN produced from a NaN input (or from an invalid input of an
// unsigned format).
uint64_t NanBits(const FloatFormat& f, const Layout& l, bool negative) {
  switch (f.specials) {
    case FS::kIeee:  // quiet NaN: exponent all ones, top mantissa bit set
      return (negative ? l.sign : 0) | (l.exp_max << f.mantissa_bits) |
             (uint64_t{1} << (f.mantissa_bits - 1));
    case FS::kAllOnesNan: return (negative ? l.sign : 0) | l.all_ones;
    case FS::kNegZeroNan: return l.sign;
    case FS::kNone: return l.sign;  // f4e2m1fn: -0 pattern, as XLA emits
  }
  return 0;
}

// Encoding of an overflowing or infinite input: what ml_dtypes'
// numeric_limits<T>::infinity() is for each style, with the sign applied.
uint64_t OverflowBits(const FloatFormat& f, const Layout& l, bool negative) {
  switch (f.specials) {
    case FS::kIeee: return (negative ? l.sign : 0) | (l.exp_max << f.mantissa_bits);
    case FS::kAllOnesNan:
    case FS::kNegZeroNan: return NanBits(f, l, negative);
    case FS::kNone: return (negative ? l.sign : 0) | l.max_mag;  // saturate
  }
  return 0;
}

// x rounded to an integer, ties to even. x is non-negative and below 2^54.
double RoundHalfEven(double x) {
  double floor = std::floor(x);
  double diff = x - floor;  // exact
  if (diff > 0.5 || (diff == 0.5 && std::fmod(floor, 2.0) != 0.0)) floor += 1.0;
  return floor;
}

uint64_t Encode(const FloatFormat& f, double value) {
  const Layout l = LayoutOf(f);
  const bool negative = std::signbit(value);
  if (std::isnan(value)) return NanBits(f, l, negative);
  // Unsigned formats: negative values are NaN; formats without zero: zero is.
  if ((!f.is_signed && negative) || (!f.has_zero && value == 0.0))
    return NanBits(f, l, negative);
  if (std::isinf(value)) return OverflowBits(f, l, negative);

  // Signs are applied last; fnuz formats have no -0.
  auto with_sign = [&](uint64_t mag) -> uint64_t {
    if (!negative) return mag;
    if (mag == 0 && f.specials == FS::kNegZeroNan) return 0;
    return l.sign | mag;
  };
  if (value == 0.0) return with_sign(0);

  const double a = std::fabs(value);
  int e2;
  std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1)
  const int emin = 1 - f.bias;
  // Exponent of the binade that fixes the quantum: below emin every value
  // shares the subnormal quantum 2^(emin - mantissa_bits).
  int exponent = std::max(e2 - 1, emin);
  // Significand in units of the quantum; scaling by a power of two is exact.
  double q = RoundHalfEven(std::ldexp(a, f.mantissa_bits - exponent));
  const double implicit = std::ldexp(1.0, f.mantissa_bits);
  if (q >= 2 * implicit) {  // rounding carried into the next binade
    q = implicit;
    ++exponent;
  }
  const uint64_t qi = static_cast<uint64_t>(q);
  if (q < implicit) return with_sign(qi);  // subnormal (or 0 / e8m0's 0x00)

  const int64_t biased = int64_t{exponent} + f.bias;
  if (biased > static_cast<int64_t>(l.exp_max)) return OverflowBits(f, l, negative);
  const uint64_t mag = (static_cast<uint64_t>(biased) << f.mantissa_bits) | (qi & l.mant);
  if (mag > l.max_mag) return OverflowBits(f, l, negative);
  return with_sign(mag);
}

// XLA reduce-precision on the raw bits of an IEEE format `src`.
uint64_t ReducePrecisionBits(const FloatFormat& src, uint64_t x, int exponent_bits,
                             int mantissa_bits) {
  const Layout l = LayoutOf(src);
  const uint64_t width_mask = LowMask(src.bits);
  const uint64_t exp_mask = l.exp_max << src.mantissa_bits;
  const uint64_t original = x;
  const bool is_nan = (x & ~l.sign) > exp_mask;

  if (mantissa_bits < src.mantissa_bits) {
    const int shift = src.mantissa_bits - mantissa_bits;
    const uint64_t last_kept = uint64_t{1} << shift;
    // Ties to even: 0111..1, plus one when the last kept bit is set.
    const uint64_t bias = (last_kept >> 1) - 1 + ((x & last_kept) >> shift);
    x = ((x + bias) & ~(last_kept - 1)) & width_mask;
  }
  if (exponent_bits < src.exponent_bits) {
    const uint64_t src_bias = static_cast<uint64_t>(src.bias);
    const uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    const uint64_t max_exponent = src_bias + reduced_bias;
    const uint64_t min_exponent = src_bias - reduced_bias;
    const uint64_t exponent = x & exp_mask;
    if (exponent > (max_exponent << src.mantissa_bits)) x = (x & l.sign) | exp_mask;
    if (exponent <= (min_exponent << src.mantissa_bits)) x = x & l.sign;
  }
  if (is_nan) return mantissa_bits > 0 ? original : exp_mask;  // NaN or +inf
  return x;
}

double ReducePrecisionIn(const FloatFormat& src, double value, int exponent_bits,
                         int mantissa_bits) {
  if (exponent_bits < 1) exponent_bits = 1;
  if (mantissa_bits < 0) mantissa_bits = 0;
  // NaN: the input NaN itself (payload kept as far as a double carries it).
  if (std::isnan(value))
    return mantissa_bits > 0 ? value : std::numeric_limits<double>::infinity();
  uint64_t bits = src.bits == 64 ? std::bit_cast<uint64_t>(value) : Encode(src, value);
  uint64_t out = ReducePrecisionBits(src, bits, exponent_bits, mantissa_bits);
  return src.bits == 64 ? std::bit_cast<double>(out) : Decode(src, out);
}

}  // namespace

const FloatFormat* FindFloatFormat(ElementType type) {
  for (const FloatFormat& f : kFormats)
    if (f.type == type) return &f;
  return nullptr;
}

bool IsNarrowFloat(ElementType type) {
  const FloatFormat* f = FindFloatFormat(type);
  return f != nullptr && f->bits <= 16;
}

double DecodeNarrowFloat(ElementType type, uint32_t bits) {
  const FloatFormat* f = FindFloatFormat(type);
  if (f == nullptr || f->bits > 32) return std::numeric_limits<double>::quiet_NaN();
  return Decode(*f, bits);
}

uint32_t EncodeNarrowFloat(ElementType type, double value) {
  const FloatFormat* f = FindFloatFormat(type);
  if (f == nullptr || f->bits > 32) return 0;
  return static_cast<uint32_t>(Encode(*f, value));
}

double RoundToFloatType(ElementType type, double value) {
  if (type == ET::kF64) return value;
  if (type == ET::kF32) return static_cast<double>(static_cast<float>(value));
  const FloatFormat* f = FindFloatFormat(type);
  if (f == nullptr) return value;
  return Decode(*f, Encode(*f, value));
}

double MaxFinite(ElementType type) {
  const FloatFormat* f = FindFloatFormat(type);
  return f ? Decode(*f, LayoutOf(*f).max_mag) : 0.0;
}

double MinNormal(ElementType type) {
  const FloatFormat* f = FindFloatFormat(type);
  if (f == nullptr) return 0.0;
  return Decode(*f, f->has_zero ? uint64_t{1} << f->mantissa_bits : 0);
}

double MinPositive(ElementType type) {
  const FloatFormat* f = FindFloatFormat(type);
  if (f == nullptr) return 0.0;
  return Decode(*f, f->has_zero ? 1 : 0);  // e8m0fnu: 0x00 is 2^-127
}

double ReducePrecision(double value, int exponent_bits, int mantissa_bits) {
  return ReducePrecisionIn(*FindFloatFormat(ET::kF64), value, exponent_bits,
                           mantissa_bits);
}

double ReducePrecision(ElementType type, double value, int exponent_bits,
                       int mantissa_bits) {
  const FloatFormat* f = FindFloatFormat(type);
  if (f == nullptr) return value;
  // The type XLA's CPU backend computes in (see the header).
  ET compute = ET::kF16;
  if (type == ET::kF64 || type == ET::kF32 || type == ET::kF16) compute = type;
  else if (type == ET::kBF16 || type == ET::kF8E8M0FNU) compute = ET::kF32;
  double r = ReducePrecisionIn(*FindFloatFormat(compute), value, exponent_bits,
                               mantissa_bits);
  return RoundToFloatType(type, r);
}

}  // namespace kiln
