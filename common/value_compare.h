// Value comparison: checks an actual array value against an expected one,
// with tolerances suited to each element type.
//
// Why: tools and tests compare kiln's results with references computed
// elsewhere (JAX, the reference evaluator, hand-written values); exact
// comparison is right for integers but not for floats that went through a
// different sequence of roundings.
//
// Rules:
//   * element types and dimensions must be equal;
//   * pred and integers compare exactly;
//   * real floats: |actual - expected| <= atol + rtol * |expected|; NaN
//     matches NaN (any payload/sign), inf matches only the same inf, and a
//     finite value never matches inf or NaN;
//   * complex: the rule above on the real and imaginary parts separately,
//     with the component type's tolerances.
// Default tolerances (DefaultTolerance) are a little over one unit in the
// last place for narrow types and allow a few reassociated roundings for f32:
//   f64/c128 rtol 1e-9  atol 1e-12     f32/c64 rtol 1e-5  atol 1e-6
//   f16      rtol 1e-3  atol 1e-3      bf16    rtol 1e-2  atol 1e-2
//   f8/f4    rtol = atol = 2^-mantissa_bits (one ulp: e4m3 0.125, e5m2 0.25,
//            e3m4 0.0625, f4e2m1fn 0.5, e8m0fnu 1)
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/literal.h"
#include "common/status.h"

namespace kiln {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// The default tolerance of a float or complex type (zero for others).
Tolerance DefaultTolerance(ElementType type);

// Overrides for the defaults; unset fields keep the type's default.
struct CompareOptions {
  std::optional<double> atol;
  std::optional<double> rtol;
};

// OK if `actual` matches `expected` (arrays, or tuples compared leaf by
// leaf). Otherwise one line naming the first mismatch, prefixed by `label`:
//   "result[0]: element at index [1, 2] (2.5) does not match the expected (4.5)"
//   "result[1]: shape 2xf32 does not match the expected 3xf32"
Status CompareValues(const Literal& actual, const Literal& expected, std::string_view label,
                     const CompareOptions& options = {});

// Whether one real element matches under `tolerance`, by the rules above.
bool RealMatches(double actual, double expected, Tolerance tolerance);

}  // namespace kiln
