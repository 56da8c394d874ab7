// Tests of the evaluator's topk: values and positions of the K greatest
// (largest=true) or least elements along the last dimension, ties in
// position order, floats in TOTALORDER (+NaN greatest, -NaN least, -0 < +0).
// Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/evaluator_test_util.h"

namespace kiln::hlo {
namespace {

using test_support::EvaluateHlo;
using test_support::MustEvaluateHlo;
using test_support::Values;

std::vector<double> Ints(const Literal& lit) {
  std::vector<double> v;
  for (int64_t i = 0; i < lit.element_count(); ++i) v.push_back(static_cast<double>(lit.GetS64(i)));
  return v;
}

TEST(TopKTest, LargestPerRowWithTies) {
  Literal r = MustEvaluateHlo(R"(HloModule m
ENTRY e {
  x = s32[2,6] constant({{3, 7, 7, 1, 9, 3}, {5, 5, 5, 5, 2, 8}})
  ROOT t = (s32[2,3], s32[2,3]) topk(x), k=3, largest=true
})");
  ASSERT_EQ(r.elements().size(), 2u);
  // Row 0: 9@4, then the tie 7@1 before 7@2. Row 1: 8@5, then 5@0, 5@1.
  EXPECT_EQ(Ints(r.element(0)), (std::vector<double>{9, 7, 7, 8, 5, 5}));
  EXPECT_EQ(Ints(r.element(1)), (std::vector<double>{4, 1, 2, 5, 0, 1}));
}

TEST(TopKTest, SmallestFirstWhenNotLargest) {
  Literal r = MustEvaluateHlo(R"(HloModule m
ENTRY e {
  x = f32[5] constant({2.5, -1, 4, -1, 0})
  ROOT t = (f32[2], s32[2]) topk(x), k=2, largest=false
})");
  // -1@1 and -1@3 tie: the lower position first.
  EXPECT_EQ(Values(r.element(0)), (std::vector<double>{-1, -1}));
  EXPECT_EQ(Ints(r.element(1)), (std::vector<double>{1, 3}));
}

TEST(TopKTest, NaNIsGreatestAndZerosAreOrdered) {
  Literal x = Literal::Vector(ElementType::kF32, {1.0, std::nan(""), -0.0, 0.0, -std::nan(""), -2.0});
  std::vector<Literal> args;
  args.push_back(std::move(x));
  const std::string body = R"(HloModule m
ENTRY e {
  x = f32[6] parameter(0)
  ROOT t = (f32[6], s32[6]) topk(x), k=6, largest=LARGEST
})";
  std::string largest = body, smallest = body;
  largest.replace(largest.find("LARGEST"), 7, "true");
  smallest.replace(smallest.find("LARGEST"), 7, "false");
  // Total order: -NaN@4 < -2@5 < -0@2 < +0@3 < 1@0 < +NaN@1.
  Literal big = MustEvaluateHlo(largest, args);
  EXPECT_EQ(Ints(big.element(1)), (std::vector<double>{1, 0, 3, 2, 5, 4}));
  EXPECT_TRUE(std::isnan(big.element(0).GetF64(0)) && !std::signbit(big.element(0).GetF64(0)));
  EXPECT_TRUE(std::signbit(big.element(0).GetF64(3)));  // -0 after +0
  Literal small = MustEvaluateHlo(smallest, args);
  EXPECT_EQ(Ints(small.element(1)), (std::vector<double>{4, 5, 2, 3, 0, 1}));
}

TEST(TopKTest, RejectsKOutOfRange) {
  auto r = EvaluateHlo(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT t = (f32[5], s32[5]) topk(x), k=5, largest=true
})",
                       {Literal::Vector(ElementType::kF32, {1, 2, 3, 4})});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace kiln::hlo
