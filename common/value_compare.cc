#include "common/value_compare.h"

#include <cmath>

#include "common/float_formats.h"
#include "common/value_syntax.h"

namespace kiln {
namespace {

std::string IndexString(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(index[i]);
  }
  return s + "]";
}

bool ElementMatches(const Literal& a, const Literal& e, int64_t i, Tolerance tol) {
  ElementType t = e.element_type();
  if (IsPred(t)) return a.GetPred(i) == e.GetPred(i);
  if (IsInteger(t)) return a.GetU64(i) == e.GetU64(i);
  if (IsComplex(t)) {
    std::complex<double> ca = a.GetC128(i), ce = e.GetC128(i);
    return RealMatches(ca.real(), ce.real(), tol) && RealMatches(ca.imag(), ce.imag(), tol);
  }
  return RealMatches(a.GetF64(i), e.GetF64(i), tol);
}

Status CompareArrays(const Literal& actual, const Literal& expected, const std::string& label,
                     const CompareOptions& options) {
  const Shape& as = actual.shape();
  const Shape& es = expected.shape();
  if (!as.IsArray() || !es.IsArray() || as.element_type() != es.element_type() ||
      as.dims() != es.dims()) {
    auto name = [](const Shape& s) { return s.IsArray() ? FormatValueShape(s) : s.ToString(false); };
    return Error(label + ": shape " + name(as) + " does not match the expected " + name(es));
  }
  Tolerance tol = DefaultTolerance(es.element_type());
  if (options.atol) tol.atol = *options.atol;
  if (options.rtol) tol.rtol = *options.rtol;
  int64_t count = expected.element_count();
  for (int64_t i = 0; i < count; ++i) {
    if (ElementMatches(actual, expected, i, tol)) continue;
    // Recover the multi-index of linear position i (row-major).
    std::vector<int64_t> index(es.rank());
    int64_t rest = i;
    for (int64_t d = es.rank() - 1; d >= 0; --d) {
      index[d] = es.dim(d) ? rest % es.dim(d) : 0;
      rest = es.dim(d) ? rest / es.dim(d) : 0;
    }
    return Error(label + ": element at index " + IndexString(index) + " (" +
                 FormatValueElement(actual, i) + ") does not match the expected (" +
                 FormatValueElement(expected, i) + ")");
  }
  return Status::Ok();
}

}  // namespace

Tolerance DefaultTolerance(ElementType type) {
  if (IsComplex(type)) type = ComplexComponentType(type);
  switch (type) {
    case ElementType::kF64: return {1e-12, 1e-9};
    case ElementType::kF32: return {1e-6, 1e-5};
    case ElementType::kF16: return {1e-3, 1e-3};
    case ElementType::kBF16: return {1e-2, 1e-2};
    default: break;
  }
  if (const FloatFormat* format = FindFloatFormat(type)) {
    double ulp = std::ldexp(1.0, -format->mantissa_bits);
    return {ulp, ulp};
  }
  return {0, 0};
}

bool RealMatches(double actual, double expected, Tolerance tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return actual == expected;
  return std::fabs(actual - expected) <= tolerance.atol + tolerance.rtol * std::fabs(expected);
}

Status CompareValues(const Literal& actual, const Literal& expected, std::string_view label,
                     const CompareOptions& options) {
  std::string name(label);
  if (expected.shape().IsTuple() || actual.shape().IsTuple()) {
    if (!expected.shape().IsTuple() || !actual.shape().IsTuple() ||
        actual.elements().size() != expected.elements().size())
      return Error(name + ": shape " + actual.shape().ToString(false) +
                   " does not match the expected " + expected.shape().ToString(false));
    for (size_t i = 0; i < expected.elements().size(); ++i)
      KILN_RETURN_IF_ERROR(CompareValues(actual.element(i), expected.element(i),
                                         name + "{" + std::to_string(i) + "}", options));
    return Status::Ok();
  }
  return CompareArrays(actual, expected, name, options);
}

}  // namespace kiln
