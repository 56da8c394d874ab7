// Operand reading and result storing shared by dot, convolution and fft.
#include "compiler/evaluator/contraction_util.h"

#include <cmath>
#include <limits>

#include "common/float_formats.h"

namespace kiln::hlo {

AccumKind AccumKindFor(ElementType result_type) {
  if (IsComplex(result_type)) return AccumKind::kComplex;
  if (IsFloat(result_type)) return AccumKind::kReal;
  return AccumKind::kInteger;  // integers and pred
}

namespace {

// A real value converted to an integer type as XLA converts: truncation
// toward zero, saturating at the type's range, NaN -> 0.
uint64_t RealToIntegerBits(double v, ElementType type) {
  if (std::isnan(v)) return 0;
  if (IsPred(type)) return v != 0 ? 1 : 0;
  const int bits = BitWidth(type);
  v = std::trunc(v);
  if (IsUnsignedInteger(type)) {
    double max = std::ldexp(1.0, bits) - 1;
    if (v <= 0) return 0;
    if (v >= max) return bits == 64 ? std::numeric_limits<uint64_t>::max()
                                    : (uint64_t{1} << bits) - 1;
    return static_cast<uint64_t>(v);
  }
  double min = -std::ldexp(1.0, bits - 1);
  if (v <= min) return static_cast<uint64_t>(bits == 64 ? std::numeric_limits<int64_t>::min()
                                                        : -(int64_t{1} << (bits - 1)));
  if (v >= -min) return static_cast<uint64_t>(bits == 64 ? std::numeric_limits<int64_t>::max()
                                                         : (int64_t{1} << (bits - 1)) - 1);
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}

// The value of element i as a double, exact for every integer up to 2^53 and
// for every float type (unsigned integers are read unsigned).
double RealValue(const Literal& lit, int64_t i) {
  ElementType t = lit.element_type();
  if (IsUnsignedInteger(t)) return static_cast<double>(lit.GetU64(i));
  return lit.GetF64(i);
}

}  // namespace

std::vector<double> ReadAsReal(const Literal& lit, ElementType result_type) {
  const int64_t n = lit.element_count();
  std::vector<double> out(n);
  const ElementType t = lit.element_type();
  const bool exact = t == result_type || result_type == ElementType::kF64;
  for (int64_t i = 0; i < n; ++i) {
    double v = RealValue(lit, i);
    out[i] = exact ? v : RoundToFloatType(result_type, v);
  }
  return out;
}

std::vector<uint64_t> ReadAsInteger(const Literal& lit, ElementType result_type) {
  const int64_t n = lit.element_count();
  std::vector<uint64_t> out(n);
  const ElementType t = lit.element_type();
  for (int64_t i = 0; i < n; ++i) {
    if (IsFloat(t) || IsComplex(t))
      out[i] = RealToIntegerBits(lit.GetF64(i), result_type);
    else if (IsPred(result_type))
      out[i] = lit.GetU64(i) != 0 ? 1 : 0;
    else
      out[i] = lit.GetU64(i);  // two's complement bits; wrapping happens on store
  }
  return out;
}

std::vector<std::complex<double>> ReadAsComplex(const Literal& lit, ElementType result_type) {
  const int64_t n = lit.element_count();
  std::vector<std::complex<double>> out(n);
  const ElementType component = ComplexComponentType(result_type);
  for (int64_t i = 0; i < n; ++i) {
    std::complex<double> v = IsComplex(lit.element_type())
                                 ? lit.GetC128(i)
                                 : std::complex<double>(RealValue(lit, i), 0.0);
    out[i] = {RoundToFloatType(component, v.real()), RoundToFloatType(component, v.imag())};
  }
  return out;
}

Literal StoreReal(const Shape& shape, const std::vector<double>& values) {
  Literal result(shape);
  for (size_t i = 0; i < values.size(); ++i) result.SetF64(static_cast<int64_t>(i), values[i]);
  return result;
}

Literal StoreInteger(const Shape& shape, const std::vector<uint64_t>& values) {
  Literal result(shape);
  const bool pred = IsPred(shape.element_type());
  for (size_t i = 0; i < values.size(); ++i) {
    if (pred) result.SetPred(static_cast<int64_t>(i), values[i] != 0);
    else result.SetU64(static_cast<int64_t>(i), values[i]);  // wraps modulo 2^bits
  }
  return result;
}

Literal StoreComplex(const Shape& shape, const std::vector<std::complex<double>>& values) {
  Literal result(shape);
  for (size_t i = 0; i < values.size(); ++i) result.SetC128(static_cast<int64_t>(i), values[i]);
  return result;
}

}  // namespace kiln::hlo
