// Element conversions with XLA's semantics (see element_conversion.h).
#include "compiler/evaluator/element_conversion.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "common/float_formats.h"

namespace kiln::hlo {
namespace {

uint64_t LowBits(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

// |value| of an integer as a double rounded to odd at 53 bits: exact below
// 2^53, otherwise truncated with the lost bits folded into the last bit.
// Rounding that double once more to any format of at most 51 significand
// bits gives the correctly rounded result, so int64 -> f32/bf16/f16/f8 round
// exactly once, as a direct conversion would.
double MagnitudeRoundedToOdd(uint64_t magnitude) {
  int width = std::bit_width(magnitude);
  if (width <= 53) return static_cast<double>(magnitude);
  int shift = width - 53;
  uint64_t kept = magnitude >> shift;
  if ((magnitude & LowBits(shift)) != 0) kept |= 1;
  return std::ldexp(static_cast<double>(kept), shift);
}

// An integer value (sign and magnitude) as a double that the store into a
// `real_type` element rounds correctly.
double IntegerToDouble(bool negative, uint64_t magnitude, ElementType real_type) {
  double m = real_type == ElementType::kF64 ? static_cast<double>(magnitude)
                                            : MagnitudeRoundedToOdd(magnitude);
  return negative ? -m : m;
}

// XLA's float -> integer: NaN -> 0, saturation at the type's range,
// truncation toward zero. Returns the result's bits (canonical, any width).
uint64_t FloatToIntegerBits(double v, ElementType to) {
  if (std::isnan(v)) return 0;
  int bits = BitWidth(to);
  if (IsSignedInteger(to)) {
    double limit = std::ldexp(1.0, bits - 1);  // 2^(bits-1), one past max
    if (v >= limit) return LowBits(bits - 1);                // INT_MAX
    if (v <= -limit) return ~uint64_t{0} << (bits - 1);      // INT_MIN
    return static_cast<uint64_t>(static_cast<int64_t>(std::trunc(v)));
  }
  double limit = std::ldexp(1.0, bits);  // 2^bits, one past max
  if (v >= limit) return LowBits(bits);
  if (v <= 0) return 0;
  return static_cast<uint64_t>(std::trunc(v));
}

void StoreReal(double v, Literal& dst, int64_t j) {
  ElementType d = dst.element_type();
  if (IsPred(d)) dst.SetPred(j, v != 0);  // NaN != 0, so NaN -> true
  else if (IsInteger(d)) dst.SetU64(j, FloatToIntegerBits(v, d));
  else if (IsComplex(d)) dst.SetC128(j, {v, 0.0});
  else dst.SetF64(j, v);
}

void StoreInteger(bool negative, uint64_t magnitude, Literal& dst, int64_t j) {
  ElementType d = dst.element_type();
  if (IsPred(d)) {
    dst.SetPred(j, magnitude != 0);
  } else if (IsInteger(d)) {
    dst.SetU64(j, negative ? uint64_t{0} - magnitude : magnitude);  // wraps
  } else if (IsComplex(d)) {
    dst.SetC128(j, {IntegerToDouble(negative, magnitude, ComplexComponentType(d)), 0.0});
  } else {
    dst.SetF64(j, IntegerToDouble(negative, magnitude, d));
  }
}

// Writes `width` bits of `value` at bit offset `pos` of a little-endian
// bit stream.
void PutBits(std::vector<uint8_t>& stream, int64_t pos, int width, uint64_t value) {
  for (int b = 0; b < width; ++b, ++pos)
    if ((value >> b) & 1) stream[pos / 8] |= static_cast<uint8_t>(1u << (pos % 8));
}

uint64_t GetBits(const std::vector<uint8_t>& stream, int64_t pos, int width) {
  uint64_t value = 0;
  for (int b = 0; b < width; ++b, ++pos)
    if ((stream[pos / 8] >> (pos % 8)) & 1) value |= uint64_t{1} << b;
  return value;
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

void ConvertElement(const Literal& src, int64_t i, Literal& dst, int64_t j) {
  ElementType s = src.element_type();
  if (IsComplex(s) && IsComplex(dst.element_type())) {
    dst.SetC128(j, src.GetC128(i));
  } else if (IsComplex(s)) {
    StoreReal(src.GetC128(i).real(), dst, j);
  } else if (IsFloat(s)) {
    double v = src.GetF64(i);
    // XLA converts f64 (and c128) to bf16 through f32: two roundings, which
    // differ from one rounding near ties (1 + 2^-8 + 2^-40 -> 1.0 in XLA).
    if ((s == ElementType::kF64) && dst.element_type() == ElementType::kBF16)
      v = static_cast<float>(v);
    StoreReal(v, dst, j);
  } else if (IsSignedInteger(s)) {
    int64_t v = src.GetS64(i);
    uint64_t bits = static_cast<uint64_t>(v);
    StoreInteger(v < 0, v < 0 ? uint64_t{0} - bits : bits, dst, j);
  } else {  // pred or unsigned
    StoreInteger(false, src.GetU64(i), dst, j);
  }
}

Literal ConvertLiteral(const Literal& src, ElementType to) {
  Shape shape = src.shape();
  shape.set_element_type(to);
  Literal out(shape);
  for (int64_t i = 0; i < src.element_count(); ++i) ConvertElement(src, i, out, i);
  return out;
}

uint64_t RawBits(const Literal& lit, int64_t i) {
  ElementType t = lit.element_type();
  if (IsComplex(t)) return 0;
  int bytes = StorageBytes(t);
  uint64_t v = 0;
  std::memcpy(&v, lit.raw() + i * bytes, std::min(bytes, 8));  // little-endian host
  return v & LowBits(BitWidth(t));
}

int64_t TotalOrderKey(ElementType type, uint64_t bits) {
  const FloatFormat* format = FindFloatFormat(type);
  int width = format ? format->bits : BitWidth(type);
  if (format && !format->is_signed) return static_cast<int64_t>(bits);
  uint64_t magnitude = bits & LowBits(width - 1);
  bool negative = (bits >> (width - 1)) & 1;
  // Negative values order by decreasing magnitude below every non-negative
  // one: -0 -> -1, -min_subnormal -> -2, ..., and -NaN lowest of all.
  return negative ? -static_cast<int64_t>(magnitude) - 1 : static_cast<int64_t>(magnitude);
}

Status BitcastConvertInto(const Literal& src, Literal& dst) {
  int src_width = BitWidth(src.element_type());
  int dst_width = BitWidth(dst.element_type());
  std::vector<int64_t> expected = src.shape().dims();
  if (src_width > dst_width && src_width % dst_width == 0) {
    expected.push_back(src_width / dst_width);
  } else if (src_width < dst_width && dst_width % src_width == 0) {
    if (expected.empty() || expected.back() != dst_width / src_width)
      return Error("bitcast-convert from " + std::string(ElementTypeName(src.element_type())) +
                   DimsString(src.shape().dims()) + " to " +
                   std::string(ElementTypeName(dst.element_type())) +
                   " needs a minor dimension of size " + std::to_string(dst_width / src_width));
    expected.pop_back();
  } else if (src_width != dst_width) {
    return Error("bitcast-convert between bit widths " + std::to_string(src_width) + " and " +
                 std::to_string(dst_width) + " is not defined");
  }
  if (expected != dst.shape().dims())
    return Error("bitcast-convert of " + DimsString(src.shape().dims()) + " " +
                 std::string(ElementTypeName(src.element_type())) + " gives dimensions " +
                 DimsString(expected) + ", not " + DimsString(dst.shape().dims()));

  // Whole-byte types: the storage bytes already are the little-endian bit
  // stream; sub-byte types are packed into / unpacked from one.
  int64_t total_bits = src.element_count() * src_width;
  std::vector<uint8_t> stream;
  if (src_width % 8 == 0) {
    stream.assign(src.raw(), src.raw() + src.raw_size());
  } else {
    stream.assign(static_cast<size_t>((total_bits + 7) / 8), 0);
    for (int64_t i = 0; i < src.element_count(); ++i)
      PutBits(stream, i * src_width, src_width, RawBits(src, i));
  }
  ElementType d = dst.element_type();
  if (dst_width % 8 == 0) {
    std::memcpy(dst.raw(), stream.data(), dst.raw_size());
    if (IsPred(d))  // keep pred storage canonical (0/1)
      for (int64_t j = 0; j < dst.element_count(); ++j) dst.raw()[j] = dst.raw()[j] != 0;
  } else {
    for (int64_t j = 0; j < dst.element_count(); ++j) {
      uint64_t bits = GetBits(stream, j * dst_width, dst_width);
      if (IsInteger(d)) dst.SetU64(j, bits);  // sign-extends signed sub-byte types
      else dst.raw()[j] = static_cast<uint8_t>(bits);  // f4e2m1fn: raw encoding
    }
  }
  return Status::Ok();
}

}  // namespace kiln::hlo
