// Tests for common/value_compare: tolerance rules, special values, messages.
// Expected outcomes follow from |a - e| <= atol + rtol * |e| worked by hand.
#include "common/value_compare.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/value_syntax.h"

namespace kiln {
namespace {

using ET = ElementType;

Literal V(std::string_view spec) { return *ParseValue(spec, nullptr); }

std::string Compare(std::string_view actual, std::string_view expected, CompareOptions options = {}) {
  Status s = CompareValues(V(actual), V(expected), "result[0]", options);
  return s.ok() ? "OK" : s.message();
}

TEST(ValueCompare, ReportsFirstMismatchWithMultiIndex) {
  EXPECT_EQ(Compare("2x3xf32=1 2 3 4 5 2.5", "2x3xf32=1 2 3 4 5 4.5"),
            "result[0]: element at index [1, 2] (2.5) does not match the expected (4.5)");
  EXPECT_EQ(Compare("f32=1", "f32=2"), "result[0]: element at index [] (1) does not match the expected (2)");
}

TEST(ValueCompare, ShapesAndTypesMustAgree) {
  EXPECT_EQ(Compare("2xf32=1 2", "3xf32=1 2 3"), "result[0]: shape 2xf32 does not match the expected 3xf32");
  EXPECT_EQ(Compare("2xf64=1 2", "2xf32=1 2"), "result[0]: shape 2xf64 does not match the expected 2xf32");
}

TEST(ValueCompare, IntegersAndPredAreExact) {
  EXPECT_EQ(Compare("3xs32=1 2 3", "3xs32=1 2 3"), "OK");
  EXPECT_NE(Compare("3xs32=1 2 4", "3xs32=1 2 3", {.atol = 10, .rtol = 10}), "OK");
  EXPECT_NE(Compare("2xpred=1 0", "2xpred=1 1"), "OK");
  EXPECT_EQ(Compare("u64=18446744073709551615", "u64=18446744073709551615"), "OK");
}

TEST(ValueCompare, F32DefaultTolerance) {
  // atol 1e-6 + rtol 1e-5 * 100 = 1.001e-3: 100.0009 passes, 100.002 fails.
  EXPECT_EQ(Compare("f32=100.0009", "f32=100"), "OK");
  EXPECT_NE(Compare("f32=100.002", "f32=100"), "OK");
  // Near zero only atol counts: 5e-7 passes, 2e-6 fails.
  EXPECT_EQ(Compare("f32=5e-7", "f32=0"), "OK");
  EXPECT_NE(Compare("f32=2e-6", "f32=0"), "OK");
  // Overrides: with rtol 0.1, 109 matches 100.
  EXPECT_EQ(Compare("f32=109", "f32=100", {.atol = std::nullopt, .rtol = 0.1}), "OK");
}

TEST(ValueCompare, NarrowTypeDefaults) {
  // bf16 neighbours of 1 are 1 +- 2^-7 (0.0078 < 0.02 allowed).
  EXPECT_EQ(Compare("bf16=1.0078125", "bf16=1"), "OK");
  EXPECT_NE(Compare("bf16=1.03125", "bf16=1"), "OK");
  EXPECT_DOUBLE_EQ(DefaultTolerance(ET::kF8E4M3FN).rtol, 0.125);
  EXPECT_DOUBLE_EQ(DefaultTolerance(ET::kF8E5M2).rtol, 0.25);
  EXPECT_DOUBLE_EQ(DefaultTolerance(ET::kC64).rtol, 1e-5);
  EXPECT_DOUBLE_EQ(DefaultTolerance(ET::kS32).rtol, 0);
}

TEST(ValueCompare, NanAndInf) {
  EXPECT_EQ(Compare("2xf32=nan -nan", "2xf32=nan nan"), "OK");
  EXPECT_NE(Compare("f32=1", "f32=nan"), "OK");
  EXPECT_NE(Compare("f32=nan", "f32=1"), "OK");
  EXPECT_EQ(Compare("f32=-inf", "f32=-inf"), "OK");
  EXPECT_NE(Compare("f32=inf", "f32=-inf"), "OK");
  // A huge finite value does not match inf even though rtol * inf is inf.
  EXPECT_NE(Compare("f32=3e38", "f32=inf"), "OK");
  EXPECT_NE(Compare("f32=inf", "f32=3e38"), "OK");
  EXPECT_TRUE(RealMatches(1.0, 1.0, {0, 0}));
  EXPECT_FALSE(RealMatches(1.0, 1.5, {0.4, 0}));
}

TEST(ValueCompare, ComplexComparesBothParts) {
  EXPECT_EQ(Compare("c64=1+2i", "c64=1+2.000001i"), "OK");
  EXPECT_EQ(Compare("2xc64=1+2i 1+3i", "2xc64=1+2i 1+2i"),
            "result[0]: element at index [1] (1+3i) does not match the expected (1+2i)");
}

TEST(ValueCompare, Tuples) {
  Literal a = Literal::MakeTuple({V("f32=1"), V("2xs32=1 2")});
  Literal b = Literal::MakeTuple({V("f32=1"), V("2xs32=1 3")});
  Status s = CompareValues(a, b, "out");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "out{1}: element at index [1] (2) does not match the expected (3)");
  EXPECT_TRUE(CompareValues(a, a, "out").ok());
  EXPECT_FALSE(CompareValues(a, V("f32=1"), "out").ok());
}

}  // namespace
}  // namespace kiln
