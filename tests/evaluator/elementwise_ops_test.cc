// Tests of the evaluator's elementwise op group against hand-computed values
// and XLA's documented semantics (operation_semantics.md and HloEvaluator):
// integer division/remainder/shift edge cases, NaN propagation, total-order
// comparison, saturating float->int conversion, single rounding of narrow
// float arithmetic and conversions, bitcast-convert bit layouts, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "compiler/evaluator/element_conversion.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "tests/support/evaluator_test_util.h"

namespace kiln::hlo {
namespace {

using test_support::EvaluateEntryBody;
using test_support::MustEvaluateEntryBody;
using test_support::MustEvaluateHlo;

constexpr int64_t kS32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kS32Max = std::numeric_limits<int32_t>::max();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::vector<int64_t> S(const Literal& l) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetS64(i));
  return v;
}
std::vector<uint64_t> U(const Literal& l) {
  std::vector<uint64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetU64(i));
  return v;
}
std::vector<double> F(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetF64(i));
  return v;
}
std::vector<bool> P(const Literal& l) {
  std::vector<bool> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetPred(i));
  return v;
}
std::vector<uint64_t> Bits(const Literal& l) {
  std::vector<uint64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(RawBits(l, i));
  return v;
}

// "a = T constant(A)\n b = T constant(B)\n ROOT r = R op(a, b)attrs"
std::string Binary(const std::string& type, const std::string& op, const std::string& a,
                   const std::string& b, const std::string& result = "",
                   const std::string& attrs = "") {
  return "  a = " + type + " constant(" + a + ")\n  b = " + type + " constant(" + b +
         ")\n  ROOT r = " + (result.empty() ? type : result) + " " + op + "(a, b)" + attrs + "\n";
}
std::string Unary(const std::string& type, const std::string& op, const std::string& a,
                  const std::string& result = "", const std::string& attrs = "") {
  return "  a = " + type + " constant(" + a + ")\n  ROOT r = " + (result.empty() ? type : result) +
         " " + op + "(a)" + attrs + "\n";
}

// ---------------------------------------------------------------------------
// Integer arithmetic.

TEST(ElementwiseInt, DivideTruncatesAndHandlesZeroAndOverflow) {
  // Truncation toward zero; x/0 = -1 (all bits set); INT_MIN/-1 = INT_MIN.
  Literal r = MustEvaluateEntryBody(Binary("s32[7]", "divide", "{7, -7, 7, -7, 5, -2147483648, -2147483648}",
                         "{2, 2, -2, -2, 0, -1, 1}"));
  EXPECT_EQ(S(r), (std::vector<int64_t>{3, -3, -3, 3, -1, kS32Min, kS32Min}));
  // Unsigned x/0 is the all-ones maximum.
  EXPECT_EQ(U(MustEvaluateEntryBody(Binary("u8[2]", "divide", "{200, 7}", "{0, 2}"))),
            (std::vector<uint64_t>{255, 3}));
  // 64-bit: INT64_MIN / -1 must not trap.
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s64[1]", "divide", "{-9223372036854775808}", "{-1}"))),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
}

TEST(ElementwiseInt, RemainderFollowsDividendSign) {
  // x % 0 = x; INT_MIN % -1 = 0.
  Literal r = MustEvaluateEntryBody(Binary("s32[6]", "remainder", "{7, -7, 7, -7, 5, -2147483648}",
                         "{3, 3, -3, -3, 0, -1}"));
  EXPECT_EQ(S(r), (std::vector<int64_t>{1, -1, 1, -1, 5, 0}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Binary("u32[2]", "remainder", "{5, 17}", "{0, 5}"))),
            (std::vector<uint64_t>{5, 2}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s64[1]", "remainder", "{-9223372036854775808}", "{-1}"))),
            (std::vector<int64_t>{0}));
  // Floats: C fmod, sign of the dividend.
  EXPECT_EQ(F(MustEvaluateEntryBody(Binary("f32[2]", "remainder", "{5.5, -5.5}", "{2, 2}"))),
            (std::vector<double>{1.5, -1.5}));
}

TEST(ElementwiseInt, ArithmeticWrapsAtTheTypeWidth) {
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s8[2]", "add", "{127, -128}", "{1, -1}"))),
            (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Binary("u8[2]", "add", "{250, 0}", "{10, 0}"))), (std::vector<uint64_t>{4, 0}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Binary("u8[1]", "subtract", "{0}", "{1}"))), (std::vector<uint64_t>{255}));
  // 16*16 = 256 = 0 mod 2^8; -128 * -1 = 128 = -128 mod 2^8.
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s8[2]", "multiply", "{16, -128}", "{16, -1}"))),
            (std::vector<int64_t>{0, -128}));
  // Sub-byte types wrap at their own width: s4 7+1 = -8, u4 15+1 = 0, s2 1+1 = -2.
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s4[2]", "add", "{7, -8}", "{1, -1}"))), (std::vector<int64_t>{-8, 7}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Binary("u4[1]", "add", "{15}", "{1}"))), (std::vector<uint64_t>{0}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s2[1]", "add", "{1}", "{1}"))), (std::vector<int64_t>{-2}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Binary("u64[1]", "add", "{18446744073709551615}", "{1}"))),
            (std::vector<uint64_t>{0}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s32[2]", "negate", "{-2147483648, 5}"))),
            (std::vector<int64_t>{kS32Min, -5}));
}

TEST(ElementwiseInt, ShiftsByWidthOrMore) {
  // Amounts >= 32 (and negative ones, read as unsigned) shift everything out.
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s32[4]", "shift-left", "{1, 1, 1, 1}", "{0, 31, 32, -1}"))),
            (std::vector<int64_t>{1, kS32Min, 0, 0}));
  // -1 >>> 28 = 0xF; -8 >>> 32 = 0; 16 >>> 2 = 4.
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s32[3]", "shift-right-logical", "{-1, -8, 16}", "{28, 32, 2}"))),
            (std::vector<int64_t>{15, 0, 4}));
  // Arithmetic: sign fill, -1 or 0 once the amount reaches the width.
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s32[5]", "shift-right-arithmetic", "{-8, -8, 8, -1, 7}",
                         "{1, 32, 40, 100, -3}"))),
            (std::vector<int64_t>{-4, -1, 0, -1, 0}));
  // Arithmetic shift of an unsigned type fills with its top bit: 0x80 >> 1 =
  // 0xC0; 0x80 >> 8 = 0xFF; 0x40 >> 9 = 0.
  EXPECT_EQ(U(MustEvaluateEntryBody(Binary("u8[3]", "shift-right-arithmetic", "{128, 128, 64}", "{1, 8, 9}"))),
            (std::vector<uint64_t>{0xC0, 0xFF, 0}));
  // Sub-byte: s4 1 << 3 = 0b1000 = -8; 1 << 4 = 0.
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s4[2]", "shift-left", "{1, 1}", "{3, 4}"))),
            (std::vector<int64_t>{-8, 0}));
}

TEST(ElementwiseInt, PowerMatchesXla) {
  // x^0 = 1, 1^x = 1; negative exponents give 0 except for bases 1 and -1
  // ((-1)^-1 = -1, as XLA CPU computes it); 2^31 wraps to INT_MIN in s32;
  // 3^40 mod 2^32 = 689956897 (Python: pow(3, 40, 2**32)).
  Literal r = MustEvaluateEntryBody(Binary("s32[9]", "power", "{2, 2, 1, -1, 0, 3, -2, 2, 3}",
                         "{10, -1, -5, -1, 0, 3, 3, 31, 40}"));
  EXPECT_EQ(S(r), (std::vector<int64_t>{1024, 0, 1, -1, 1, 27, -8, kS32Min, 689956897}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Binary("u8[2]", "power", "{2, 3}", "{8, 5}"))),
            (std::vector<uint64_t>{0, 243}));
}

TEST(ElementwiseInt, BitwiseAndCounting) {
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s32[1]", "and", "{12}", "{10}"))), (std::vector<int64_t>{8}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s32[1]", "or", "{12}", "{10}"))), (std::vector<int64_t>{14}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s32[1]", "xor", "{12}", "{10}"))), (std::vector<int64_t>{6}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s8[3]", "not", "{0, -1, 5}"))), (std::vector<int64_t>{-1, 0, -6}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("u8[1]", "not", "{0}"))), (std::vector<uint64_t>{255}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Unary("pred[2]", "not", "{true, false}"))), (std::vector<bool>{false, true}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("pred[4]", "xor", "{true, true, false, false}",
                         "{true, false, true, false}"))),
            (std::vector<bool>{false, true, true, false}));
  // popcnt counts the element's own bits: s32 -1 has 32, s8 -1 has 8, s4 -1 has 4.
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s32[3]", "popcnt", "{-1, 0, 7}"))), (std::vector<int64_t>{32, 0, 3}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s8[1]", "popcnt", "{-1}"))), (std::vector<int64_t>{8}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s4[1]", "popcnt", "{-1}"))), (std::vector<int64_t>{4}));
  // clz: 0 -> width; 1 -> width-1; negative -> 0; 0x10000 -> 15.
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s32[4]", "count-leading-zeros", "{0, 1, -1, 65536}"))),
            (std::vector<int64_t>{32, 31, 0, 15}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("u8[1]", "count-leading-zeros", "{1}"))), (std::vector<uint64_t>{7}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s4[1]", "count-leading-zeros", "{1}"))), (std::vector<int64_t>{3}));
}

TEST(ElementwiseInt, AbsSignMaxMin) {
  // abs(INT_MIN) wraps to INT_MIN.
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s8[3]", "abs", "{-128, -5, 5}"))), (std::vector<int64_t>{-128, 5, 5}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s32[3]", "sign", "{-5, 0, 7}"))), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("u8[2]", "sign", "{0, 9}"))), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Binary("s32[2]", "maximum", "{-3, 4}", "{2, -9}"))),
            (std::vector<int64_t>{2, 4}));
  // Unsigned comparison: 200 > 100 in u8 (it would be -56 as s8).
  EXPECT_EQ(U(MustEvaluateEntryBody(Binary("u8[1]", "minimum", "{200}", "{100}"))), (std::vector<uint64_t>{100}));
}

// ---------------------------------------------------------------------------
// Real floats.

TEST(ElementwiseFloat, MaxMinPropagateNaNAndKeepLhsOnZeroTies) {
  std::string nan_args = "{nan, 1, -0, 0, 1}";
  std::string rhs = "{1, nan, 0, -0, 2}";
  std::vector<double> mx = F(MustEvaluateEntryBody(Binary("f32[5]", "maximum", nan_args, rhs)));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  // XLA returns lhs unless lhs < rhs: max(-0, +0) = -0, max(+0, -0) = +0.
  EXPECT_TRUE(mx[2] == 0 && std::signbit(mx[2]));
  EXPECT_TRUE(mx[3] == 0 && !std::signbit(mx[3]));
  EXPECT_EQ(mx[4], 2);
  std::vector<double> mn = F(MustEvaluateEntryBody(Binary("f32[5]", "minimum", nan_args, rhs)));
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_TRUE(mn[2] == 0 && std::signbit(mn[2]));
  EXPECT_TRUE(mn[3] == 0 && !std::signbit(mn[3]));
  EXPECT_EQ(mn[4], 1);
}

TEST(ElementwiseFloat, Bf16ArithmeticRoundsOnceToNearestEven) {
  // bf16 has 8 significand bits: 1 + 2^-8 is exactly halfway between 1 and
  // 1 + 2^-7 and rounds to the even 1; 1 + 3*2^-9 lies above the midpoint and
  // rounds up to 1 + 2^-7 = 1.0078125.
  EXPECT_EQ(F(MustEvaluateEntryBody(Binary("bf16[2]", "add", "{1, 1}", "{0.00390625, 0.005859375}"))),
            (std::vector<double>{1.0, 1.0078125}));
  // 3 * 2^-9 is representable: the result of a subtract rounds the same way.
  EXPECT_EQ(F(MustEvaluateEntryBody(Binary("bf16[1]", "subtract", "{1.0078125}", "{0.001953125}"))),
            (std::vector<double>{1.0078125}));  // 1+2^-7-2^-9 = 1+3*2^-9 -> rounds up
}

TEST(ElementwiseFloat, F16OverflowsToInfinity) {
  // f16 max is 65504; 60000 + 10000 and 65504 * 2 overflow.
  std::vector<double> r = F(MustEvaluateEntryBody(Binary("f16[2]", "add", "{60000, -60000}", "{10000, -10000}")));
  EXPECT_EQ(r, (std::vector<double>{kInf, -kInf}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Binary("f16[1]", "multiply", "{65504}", "{2}"))), (std::vector<double>{kInf}));
  // 65504 + 8 = 65512 is below the rounding midpoint 65520: stays 65504.
  EXPECT_EQ(F(MustEvaluateEntryBody(Binary("f16[1]", "add", "{65504}", "{8}"))), (std::vector<double>{65504}));
}

TEST(ElementwiseFloat, F8Arithmetic) {
  // f8e5m2 has 2 mantissa bits (1, 1.25, 1.5, 1.75): 1 + 0.125 is a tie and
  // rounds to even (1); 1 + 0.375 = 1.375 ties to 1.5.
  EXPECT_EQ(F(MustEvaluateEntryBody(Binary("f8e5m2[2]", "add", "{1, 1}", "{0.125, 0.375}"))),
            (std::vector<double>{1.0, 1.5}));
  // f8e4m3fn has no infinity: 448 * 2 overflows to NaN.
  EXPECT_TRUE(std::isnan(F(MustEvaluateEntryBody(Binary("f8e4m3fn[1]", "multiply", "{448}", "{2}")))[0]));
}

TEST(ElementwiseFloat, PowerAndAtan2) {
  std::vector<double> r =
      F(MustEvaluateEntryBody(Binary("f32[5]", "power", "{1, nan, 2, -8, 4}", "{nan, 0, 0.5, 0.5, -0.5}")));
  EXPECT_EQ(r[0], 1);  // 1^NaN = 1
  EXPECT_EQ(r[1], 1);  // NaN^0 = 1
  EXPECT_EQ(r[2], 1.4142135381698608);  // f32 nearest sqrt(2)
  EXPECT_TRUE(std::isnan(r[3]));        // negative base, fractional exponent
  EXPECT_EQ(r[4], 0.5);
  std::vector<double> a = F(MustEvaluateEntryBody(Binary("f32[3]", "atan2", "{1, 0, -0}", "{1, -1, -1}")));
  EXPECT_EQ(a[0], 0.7853981852531433);   // f32(pi/4)
  EXPECT_EQ(a[1], 3.1415927410125732);   // f32(pi)
  EXPECT_EQ(a[2], -3.1415927410125732);  // -0 picks the lower branch
}

TEST(ElementwiseFloat, UnaryMath) {
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[2]", "exponential", "{0, 1}"))),
            (std::vector<double>{1.0, 2.7182817459106445}));  // f32(e)
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[2]", "log", "{1, 0}"))), (std::vector<double>{0.0, -kInf}));
  EXPECT_TRUE(std::isnan(F(MustEvaluateEntryBody(Unary("f32[1]", "log", "{-1}")))[0]));
  // expm1 / log1p keep accuracy near zero: expm1(x) ~ x + x^2/2.
  std::vector<double> e = F(MustEvaluateEntryBody(Unary("f64[1]", "exponential-minus-one", "{1e-10}")));
  EXPECT_NEAR(e[0], 1e-10 + 5e-21, 1e-25);
  std::vector<double> l = F(MustEvaluateEntryBody(Unary("f64[1]", "log-plus-one", "{1e-10}")));
  EXPECT_NEAR(l[0], 1e-10 - 5e-21, 1e-25);
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[2]", "sqrt", "{2, 9}"))),
            (std::vector<double>{1.4142135381698608, 3.0}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[2]", "rsqrt", "{4, 0}"))), (std::vector<double>{0.5, kInf}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[2]", "cbrt", "{-27, 8}"))), (std::vector<double>{-3.0, 2.0}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[2]", "tanh", "{0, 20}"))), (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[3]", "logistic", "{0, 200, -200}"))),
            (std::vector<double>{0.5, 1.0, 0.0}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[1]", "sine", "{0}"))), (std::vector<double>{0.0}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[1]", "cosine", "{0}"))), (std::vector<double>{1.0}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[1]", "tan", "{0}"))), (std::vector<double>{0.0}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[3]", "erf", "{0, 10, -10}"))), (std::vector<double>{0.0, 1.0, -1.0}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[2]", "negate", "{1.5, -0}"))), (std::vector<double>{-1.5, 0.0}));
}

TEST(ElementwiseFloat, Rounding) {
  std::string x = "{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7}";
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[8]", "floor", x))),
            (std::vector<double>{-3, -2, -1, 0, 1, 2, 2, -3}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[8]", "ceil", x))),
            (std::vector<double>{-2, -1, -0.0, 1, 2, 3, 3, -2}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[8]", "round-nearest-afz", x))),
            (std::vector<double>{-3, -2, -1, 1, 2, 3, 3, -3}));
  std::vector<double> even = F(MustEvaluateEntryBody(Unary("f32[8]", "round-nearest-even", x)));
  EXPECT_EQ(even, (std::vector<double>{-2, -2, -0.0, 0, 2, 2, 3, -3}));
  EXPECT_TRUE(std::signbit(even[2]));  // -0.5 rounds to -0
}

TEST(ElementwiseFloat, SignAbsIsFinite) {
  std::vector<double> s = F(MustEvaluateEntryBody(Unary("f32[5]", "sign", "{-2, -0, 0, 3, nan}")));
  EXPECT_EQ(s[0], -1);
  EXPECT_TRUE(s[1] == 0 && std::signbit(s[1]));  // sign(-0) = -0
  EXPECT_TRUE(s[2] == 0 && !std::signbit(s[2]));
  EXPECT_EQ(s[3], 1);
  EXPECT_TRUE(std::isnan(s[4]));
  std::vector<double> a = F(MustEvaluateEntryBody(Unary("f32[2]", "abs", "{-0, -3.5}")));
  EXPECT_TRUE(a[0] == 0 && !std::signbit(a[0]));
  EXPECT_EQ(a[1], 3.5);
  EXPECT_EQ(P(MustEvaluateEntryBody(Unary("f32[5]", "is-finite", "{inf, -inf, nan, 1, 0}", "pred[5]"))),
            (std::vector<bool>{false, false, false, true, true}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Unary("f16[2]", "is-finite", "{65504, inf}", "pred[2]"))),
            (std::vector<bool>{true, false}));
}

TEST(ElementwiseFloat, ReducePrecision) {
  // To f16's format (5 exponent, 10 mantissa bits): 1 + 2^-11 ties to 1;
  // 1 + 3*2^-12 rounds up to 1 + 2^-10; 70000 exceeds f16 and becomes inf;
  // 1e-5 is below f16's smallest normal (2^-14) and is flushed to 0.
  std::vector<double> r =
      F(MustEvaluateEntryBody(Unary("f32[5]", "reduce-precision", "{1.00048828125, 1.000732421875, 70000, 1e-5, nan}",
                  "", ", exponent_bits=5, mantissa_bits=10")));
  EXPECT_EQ(r[0], 1.0);
  EXPECT_EQ(r[1], 1.0009765625);
  EXPECT_EQ(r[2], kInf);
  EXPECT_EQ(r[3], 0.0);
  EXPECT_TRUE(std::isnan(r[4]));
  // To bf16's format: 1 + 2^-8 ties to 1.
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[1]", "reduce-precision", "{1.00390625}", "",
                        ", exponent_bits=8, mantissa_bits=7"))),
            (std::vector<double>{1.0}));
}

// ---------------------------------------------------------------------------
// Select and clamp.

TEST(ElementwiseSelect, ArrayAndScalarPredicate) {
  std::string body =
      "  p = pred[3] constant({true, false, true})\n"
      "  a = s32[3] constant({1, 2, 3})\n"
      "  b = s32[3] constant({10, 20, 30})\n"
      "  ROOT r = s32[3] select(p, a, b)\n";
  EXPECT_EQ(S(MustEvaluateEntryBody(body)), (std::vector<int64_t>{1, 20, 3}));
  std::string scalar =
      "  p = pred[] constant(false)\n"
      "  a = f32[2] constant({1, 2})\n"
      "  b = f32[2] constant({3, 4})\n"
      "  ROOT r = f32[2] select(p, a, b)\n";
  EXPECT_EQ(F(MustEvaluateEntryBody(scalar)), (std::vector<double>{3, 4}));
}

TEST(ElementwiseClamp, ScalarBoundsAndNaN) {
  std::string body =
      "  lo = f32[] constant(0)\n"
      "  x = f32[4] constant({-1, 0.5, 2, nan})\n"
      "  hi = f32[] constant(1)\n"
      "  ROOT r = f32[4] clamp(lo, x, hi)\n";
  std::vector<double> r = F(MustEvaluateEntryBody(body));
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[1], 0.5);
  EXPECT_EQ(r[2], 1);
  EXPECT_TRUE(std::isnan(r[3]));  // NaN operand propagates
  std::string nan_bound =
      "  lo = f32[] constant(nan)\n"
      "  x = f32[1] constant({5})\n"
      "  hi = f32[] constant(1)\n"
      "  ROOT r = f32[1] clamp(lo, x, hi)\n";
  EXPECT_TRUE(std::isnan(F(MustEvaluateEntryBody(nan_bound))[0]));
  std::string ints =
      "  lo = s32[3] constant({-2, -2, 0})\n"
      "  x = s32[3] constant({-5, 0, 5})\n"
      "  hi = s32[3] constant({3, 3, 4})\n"
      "  ROOT r = s32[3] clamp(lo, x, hi)\n";
  EXPECT_EQ(S(MustEvaluateEntryBody(ints)), (std::vector<int64_t>{-2, 0, 4}));
}

// ---------------------------------------------------------------------------
// Comparison.

TEST(ElementwiseCompare, FloatIsIeee) {
  std::string a = "{nan, nan, 1, 1, -0}", b = "{nan, 1, nan, 2, 0}";
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("f32[5]", "compare", a, b, "pred[5]", ", direction=EQ"))),
            (std::vector<bool>{false, false, false, false, true}));  // -0 == +0
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("f32[5]", "compare", a, b, "pred[5]", ", direction=NE"))),
            (std::vector<bool>{true, true, true, true, false}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("f32[5]", "compare", a, b, "pred[5]", ", direction=LT"))),
            (std::vector<bool>{false, false, false, true, false}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("f32[5]", "compare", a, b, "pred[5]", ", direction=GE, type=FLOAT"))),
            (std::vector<bool>{false, false, false, false, true}));
}

TEST(ElementwiseCompare, TotalOrder) {
  // -NaN < -inf < -1 < -0 < +0 < 1 < inf < +NaN; NaN == NaN bitwise.
  std::string a = "{-nan, -inf, -0, 0, nan, nan, -0, 1}";
  std::string b = "{-inf, -1, 0, -0, inf, nan, -0, -nan}";
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("f32[8]", "compare", a, b, "pred[8]", ", direction=LT, type=TOTALORDER"))),
            (std::vector<bool>{true, true, true, false, false, false, false, false}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("f32[8]", "compare", a, b, "pred[8]", ", direction=EQ, type=TOTALORDER"))),
            (std::vector<bool>{false, false, false, false, false, true, true, false}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("bf16[2]", "compare", "{-0, 1}", "{0, nan}", "pred[2]",
                         ", direction=LT, type=TOTALORDER"))),
            (std::vector<bool>{true, true}));
}

TEST(ElementwiseCompare, IntegersAndComplex) {
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("s32[2]", "compare", "{-1, 5}", "{1, 5}", "pred[2]", ", direction=LT"))),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("u32[1]", "compare", "{4294967295}", "{1}", "pred[1]",
                         ", direction=GT, type=UNSIGNED"))),
            (std::vector<bool>{true}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Binary("c64[2]", "compare", "{(1, 2), (1, 2)}", "{(1, 2), (1, -2)}", "pred[2]",
                         ", direction=EQ"))),
            (std::vector<bool>{true, false}));
  StatusOr<Literal> lt = EvaluateEntryBody(Binary("c64[1]", "compare", "{(1, 2)}", "{(1, 3)}", "pred[1]",
                                       ", direction=LT"));
  EXPECT_FALSE(lt.ok());
}

// ---------------------------------------------------------------------------
// Conversions.

TEST(ElementwiseConvert, FloatToIntegerSaturates) {
  // NaN -> 0; out of range saturates; truncation toward zero.
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("f32[7]", "convert", "{nan, 1e10, -1e10, 2.9, -2.9, inf, -inf}",
                        "s32[7]"))),
            (std::vector<int64_t>{0, kS32Max, kS32Min, 2, -2, kS32Max, kS32Min}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("f32[4]", "convert", "{-1, 300, 255.9, 0.5}", "u8[4]"))),
            (std::vector<uint64_t>{0, 255, 255, 0}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("f64[2]", "convert", "{1e300, -1e300}", "s64[2]"))),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("f32[2]", "convert", "{100, -100}", "s4[2]"))),
            (std::vector<int64_t>{7, -8}));
}

TEST(ElementwiseConvert, IntegerToIntegerWrapsAndPred) {
  // 300 mod 256 = 44; -129 mod 256 = 127; u8 200 as s8 = -56.
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s32[2]", "convert", "{300, -129}", "s8[2]"))),
            (std::vector<int64_t>{44, 127}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("u8[1]", "convert", "{200}", "s8[1]"))), (std::vector<int64_t>{-56}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("s8[1]", "convert", "{-1}", "u32[1]"))),
            (std::vector<uint64_t>{4294967295u}));
  EXPECT_EQ(P(MustEvaluateEntryBody(Unary("f32[4]", "convert", "{0, -0, 0.5, nan}", "pred[4]"))),
            (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("pred[2]", "convert", "{true, false}", "f32[2]"))),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("s32[2]", "convert", "{0, 7}", "pred[2]"))), (std::vector<int64_t>{0, 1}));
}

TEST(ElementwiseConvert, IntegerToFloatRoundsOnce) {
  // 2^24 + 1 is a tie between 2^24 and 2^24 + 2 in f32: even -> 2^24.
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("s32[1]", "convert", "{16777217}", "f32[1]"))),
            (std::vector<double>{16777216}));
  // 2^60 + 2^36 + 1: the f32 spacing there is 2^37, and the offset exceeds
  // half of it, so the correct result is 2^60 + 2^37. (Rounding through a
  // double first would give the tie 2^60 + 2^36 and then 2^60.)
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("s64[1]", "convert", "{1152921573326323713}", "f32[1]"))),
            (std::vector<double>{1152921642045800448.0}));
  // u64 max rounds up to 2^64 in f32.
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("u64[1]", "convert", "{18446744073709551615}", "f32[1]"))),
            (std::vector<double>{18446744073709551616.0}));
  // 257 in bf16 is a tie between 256 and 258 -> 256; 70000 -> f16 inf.
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("s32[1]", "convert", "{257}", "bf16[1]"))), (std::vector<double>{256}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("s32[1]", "convert", "{70000}", "f16[1]"))), (std::vector<double>{kInf}));
}

TEST(ElementwiseConvert, FloatToFloatAndComplex) {
  // f32 -> f16: 65520 is the midpoint between 65504 and 65536 (beyond the
  // range): ties to even overflow to inf.
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f32[2]", "convert", "{65520, 65519}", "f16[2]"))),
            (std::vector<double>{kInf, 65504}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("f64[1]", "convert", "{0.1}", "f32[1]"))),
            (std::vector<double>{0.10000000149011612}));
  Literal c = MustEvaluateEntryBody(Unary("f32[1]", "convert", "{2.5}", "c64[1]"));
  EXPECT_EQ(c.GetC128(0), std::complex<double>(2.5, 0));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("c64[1]", "convert", "{(3, 4)}", "f32[1]"))), (std::vector<double>{3}));
}

TEST(ElementwiseConvert, StochasticConvert) {
  // fraction 0.25 becomes 2^30 on the u32 scale: random 0 < 2^30 rounds the
  // magnitude up; random 2^32-1 does not. NaN -> 0, 1e10 saturates.
  std::string body =
      "  x = f32[5] constant({2.25, -2.25, 2.25, nan, 1e10})\n"
      "  u = u32[5] constant({0, 0, 4294967295, 0, 0})\n"
      "  ROOT r = s32[5] stochastic-convert(x, u)\n";
  EXPECT_EQ(S(MustEvaluateEntryBody(body)), (std::vector<int64_t>{3, -3, 2, 0, kS32Max}));
}

TEST(ElementwiseBitcastConvert, SameAndDifferentWidths) {
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("f32[]", "bitcast-convert", "1", "u32[]"))),
            (std::vector<uint64_t>{0x3F800000}));
  // Little-endian halves: 1.0 = 0x3F800000 -> {0x0000, 0x3F80};
  // -2.0 = 0xC0000000 -> {0x0000, 0xC000}.
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("f32[2]", "bitcast-convert", "{1, -2}", "u16[2,2]"))),
            (std::vector<uint64_t>{0, 0x3F80, 0, 0xC000}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("u16[2,2]", "bitcast-convert", "{{0, 16256}, {0, 49152}}", "f32[2]"))),
            (std::vector<double>{1.0, -2.0}));
  // Bytes of 1.0f: 00 00 80 3F.
  EXPECT_EQ(S(MustEvaluateEntryBody(Unary("f32[]", "bitcast-convert", "1", "s8[4]"))),
            (std::vector<int64_t>{0, 0, -128, 63}));
  // Sub-byte: 0xAB splits into nibbles {0xB, 0xA} (low nibble first), and
  // s4 {-1, 1} packs into 0x1F.
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("u8[]", "bitcast-convert", "171", "u4[2]"))),
            (std::vector<uint64_t>{0xB, 0xA}));
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("s4[2]", "bitcast-convert", "{-1, 1}", "u8[]"))),
            (std::vector<uint64_t>{0x1F}));
  // bf16 1.0 = 0x3F80.
  EXPECT_EQ(U(MustEvaluateEntryBody(Unary("bf16[1]", "bitcast-convert", "{1}", "u16[1]"))),
            (std::vector<uint64_t>{0x3F80}));
  // Mismatched minor dimension is an error.
  EXPECT_FALSE(EvaluateEntryBody(Unary("u16[2,3]", "bitcast-convert", "{{0,0,0},{0,0,0}}", "f32[2]")).ok());
}

// ---------------------------------------------------------------------------
// Complex numbers.

TEST(ElementwiseComplex, Arithmetic) {
  std::string body =
      "  re = f32[2] constant({1, 3})\n"
      "  im = f32[2] constant({2, 4})\n"
      "  ROOT c = c64[2] complex(re, im)\n";
  Literal c = MustEvaluateEntryBody(body);
  EXPECT_EQ(c.GetC128(1), std::complex<double>(3, 4));
  // (1+2i)(3+4i) = -5+10i; (-5+10i)/(3+4i) = 1+2i.
  Literal m = MustEvaluateEntryBody(Binary("c64[1]", "multiply", "{(1, 2)}", "{(3, 4)}"));
  EXPECT_EQ(m.GetC128(0), std::complex<double>(-5, 10));
  Literal d = MustEvaluateEntryBody(Binary("c64[1]", "divide", "{(-5, 10)}", "{(3, 4)}"));
  EXPECT_NEAR(d.GetC128(0).real(), 1, 1e-6);
  EXPECT_NEAR(d.GetC128(0).imag(), 2, 1e-6);
  // |3+4i| = 5 in the component type; real/imag pick components.
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("c64[1]", "abs", "{(3, 4)}", "f32[1]"))), (std::vector<double>{5}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("c128[1]", "real", "{(3, 4)}", "f64[1]"))), (std::vector<double>{3}));
  EXPECT_EQ(F(MustEvaluateEntryBody(Unary("c128[1]", "imag", "{(3, 4)}", "f64[1]"))), (std::vector<double>{4}));
  // sign(3+4i) = 0.6+0.8i; sqrt(-4) = 2i; exp(i*pi) = -1.
  Literal s = MustEvaluateEntryBody(Unary("c128[1]", "sign", "{(3, 4)}"));
  EXPECT_NEAR(s.GetC128(0).real(), 0.6, 1e-15);
  EXPECT_NEAR(s.GetC128(0).imag(), 0.8, 1e-15);
  Literal q = MustEvaluateEntryBody(Unary("c128[1]", "sqrt", "{(-4, 0)}"));
  EXPECT_NEAR(q.GetC128(0).real(), 0, 1e-15);
  EXPECT_NEAR(q.GetC128(0).imag(), 2, 1e-15);
  Literal e = MustEvaluateEntryBody(Unary("c128[1]", "exponential", "{(0, 3.141592653589793)}"));
  EXPECT_NEAR(e.GetC128(0).real(), -1, 1e-15);
  EXPECT_NEAR(e.GetC128(0).imag(), 0, 1e-15);
  // (1+i)^2 = 2i.
  Literal p = MustEvaluateEntryBody(Binary("c128[1]", "power", "{(1, 1)}", "{(2, 0)}"));
  EXPECT_NEAR(p.GetC128(0).real(), 0, 1e-15);
  EXPECT_NEAR(p.GetC128(0).imag(), 2, 1e-15);
}

// ---------------------------------------------------------------------------
// map.

TEST(ElementwiseMap, AppliesComputationPerElement) {
  std::string text =
      "HloModule m\n\n"
      "fma1 {\n"
      "  x = f32[] parameter(0)\n"
      "  y = f32[] parameter(1)\n"
      "  m = f32[] multiply(x, y)\n"
      "  one = f32[] constant(1)\n"
      "  ROOT r = f32[] add(m, one)\n"
      "}\n\n"
      "ENTRY e {\n"
      "  a = f32[3] constant({1, 2, 3})\n"
      "  b = f32[3] constant({4, 5, 6})\n"
      "  ROOT r = f32[3] map(a, b), dimensions={0}, to_apply=fma1\n"
      "}\n";
  EXPECT_EQ(F(MustEvaluateHlo(text)), (std::vector<double>{5, 11, 19}));
}

// ---------------------------------------------------------------------------
// Parameters and unsupported combinations.

TEST(ElementwiseParams, ArgumentsFlowThrough) {
  std::string body =
      "  p = f32[3] parameter(0)\n"
      "  q = f32[3] parameter(1)\n"
      "  ROOT r = f32[3] maximum(p, q)\n";
  Literal p = Literal::Vector(ElementType::kF32, {kNaN, 2, -1});
  Literal q = Literal::Vector(ElementType::kF32, {1, kNaN, -2});
  std::vector<double> r = F(MustEvaluateEntryBody(body, {p, q}));
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_TRUE(std::isnan(r[1]));
  EXPECT_EQ(r[2], -1);
}

// Evaluates `op` applied to parameters holding `args`. The module is built
// directly (not parsed), so no parser or verifier rejects it first and the
// evaluator's own checks are what is tested.
StatusOr<Literal> EvalDirect(HloOpcode op, const Shape& result, const std::vector<Literal>& args) {
  HloModule module("m");
  auto comp = std::make_unique<HloComputation>("e");
  auto root = std::make_unique<HloInstruction>(op, "bad", result);
  for (size_t i = 0; i < args.size(); ++i) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, "p" + std::to_string(i),
                                              args[i].shape());
    p->set_parameter_number(static_cast<int64_t>(i));
    root->AppendOperand(comp->AddInstruction(std::move(p)));
  }
  comp->set_root(comp->AddInstruction(std::move(root)));
  module.set_entry(module.AddComputation(std::move(comp)));
  return Evaluator().Evaluate(module, args);
}

void ExpectErrorNamingInstruction(HloOpcode op, const Shape& result,
                                  const std::vector<Literal>& args) {
  StatusOr<Literal> r = EvalDirect(op, result, args);
  ASSERT_FALSE(r.ok()) << OpcodeName(op);
  EXPECT_NE(r.status().message().find("%bad"), std::string::npos) << r.status().message();
}

TEST(ElementwiseErrors, UndefinedOpTypeCombinations) {
  Literal s32 = Literal::Vector(ElementType::kS32, {4, 9});
  Literal f32 = Literal::Vector(ElementType::kF32, {1, 2});
  Literal c64 = Literal::Vector(ElementType::kC64, {1, 2});
  Shape s32_shape(ElementType::kS32, {2}), f32_shape(ElementType::kF32, {2});
  Shape c64_shape(ElementType::kC64, {2});
  ExpectErrorNamingInstruction(HloOpcode::kSqrt, s32_shape, {s32});
  ExpectErrorNamingInstruction(HloOpcode::kFloor, s32_shape, {s32});
  ExpectErrorNamingInstruction(HloOpcode::kAnd, f32_shape, {f32, f32});
  ExpectErrorNamingInstruction(HloOpcode::kShiftLeft, f32_shape, {f32, f32});
  ExpectErrorNamingInstruction(HloOpcode::kNot, f32_shape, {f32});
  ExpectErrorNamingInstruction(HloOpcode::kMaximum, c64_shape, {c64, c64});
  ExpectErrorNamingInstruction(HloOpcode::kCbrt, c64_shape, {c64});
  ExpectErrorNamingInstruction(HloOpcode::kIsFinite, Shape(ElementType::kPred, {2}), {s32});
  // compare without a direction attribute.
  ExpectErrorNamingInstruction(HloOpcode::kCompare, Shape(ElementType::kPred, {2}), {f32, f32});
}

TEST(ElementwiseErrors, MismatchedShapesAndTypes) {
  Literal f2 = Literal::Vector(ElementType::kF32, {1, 2});
  Literal f3 = Literal::Vector(ElementType::kF32, {1, 2, 3});
  Literal s2 = Literal::Vector(ElementType::kS32, {1, 2});
  Shape f32_2(ElementType::kF32, {2});
  ExpectErrorNamingInstruction(HloOpcode::kAdd, f32_2, {f2, f3});   // operand dims
  ExpectErrorNamingInstruction(HloOpcode::kAdd, f32_2, {f2, s2});   // operand types
  ExpectErrorNamingInstruction(HloOpcode::kNegate, Shape(ElementType::kF32, {3}), {f2});
  ExpectErrorNamingInstruction(HloOpcode::kNegate, Shape(ElementType::kS32, {2}), {f2});
  ExpectErrorNamingInstruction(HloOpcode::kAdd, f32_2, {f2});       // operand count
}

}  // namespace
}  // namespace kiln::hlo
