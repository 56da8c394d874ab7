#include "common/literal.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

TEST(LiteralTest, IntegersWrapToTheirWidth) {
  Literal s8(Shape(ElementType::kS8, {2}));
  s8.SetS64(0, 200);   // 200 - 256
  s8.SetS64(1, -129);  // -129 + 256
  EXPECT_EQ(s8.GetS64(0), -56);
  EXPECT_EQ(s8.GetS64(1), 127);
  Literal u16(Shape(ElementType::kU16, {1}));
  u16.SetS64(0, -1);
  EXPECT_EQ(u16.GetU64(0), 65535u);
}

TEST(LiteralTest, SubByteIntegersSignExtend) {
  Literal s4(Shape(ElementType::kS4, {3}));
  s4.SetS64(0, 7);
  s4.SetS64(1, 8);   // wraps to -8
  s4.SetS64(2, -1);
  EXPECT_EQ(s4.GetS64(0), 7);
  EXPECT_EQ(s4.GetS64(1), -8);
  EXPECT_EQ(s4.GetS64(2), -1);
  EXPECT_EQ(s4.raw()[2], 0xFF);  // one byte per element, sign-extended
  Literal u2(Shape(ElementType::kU2, {1}));
  u2.SetU64(0, 5);  // 5 mod 4
  EXPECT_EQ(u2.GetU64(0), 1u);
}

TEST(LiteralTest, NarrowFloatsRoundToNearestEven) {
  Literal bf16(Shape(ElementType::kBF16, {2}));
  bf16.SetF64(0, 1.0 + std::ldexp(1.0, -8));      // halfway between 1 and 1+2^-7: ties to even
  bf16.SetF64(1, 1.0 + 3 * std::ldexp(1.0, -9));  // above halfway: rounds up
  EXPECT_EQ(bf16.GetF64(0), 1.0);
  EXPECT_EQ(bf16.GetF64(1), 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(bf16.data<uint16_t>()[0], 0x3F80);
}

TEST(LiteralTest, FloatAndComplexStorage) {
  Literal f32(Shape(ElementType::kF32, {1}));
  f32.SetF64(0, 0.1);
  EXPECT_EQ(f32.GetF64(0), static_cast<double>(0.1f));
  Literal c64(Shape(ElementType::kC64, {1}));
  c64.SetC128(0, {1.5, -2.0});
  EXPECT_EQ(c64.GetC128(0), std::complex<double>(1.5, -2.0));
  EXPECT_EQ(c64.raw_size(), 8u);
}

TEST(LiteralTest, ToStringUsesHloConstantSyntax) {
  Literal m(Shape(ElementType::kS32, {2, 2}));
  for (int i = 0; i < 4; ++i) m.SetS64(i, i + 1);
  EXPECT_EQ(m.ToString(), "{{1, 2}, {3, 4}}");
  EXPECT_EQ(Literal::Scalar(ElementType::kPred, true).ToString(), "true");
  Literal f = Literal::Vector(ElementType::kF32, {1.5, INFINITY, NAN});
  EXPECT_EQ(f.ToString(), "{1.5, inf, nan}");
  Literal t = Literal::MakeTuple({Literal::Scalar(ElementType::kS32, 1), Literal::Vector(ElementType::kF32, {2, 3})});
  EXPECT_EQ(t.ToString(), "(1, {2, 3})");
  EXPECT_EQ(m.ToStringTruncated(3), "{{1, 2}, {3, ...}}");
}

TEST(LiteralTest, EqualityIgnoresLayout) {
  Literal a = Literal::Vector(ElementType::kS32, {1, 2});
  Shape laid_out(ElementType::kS32, {2});
  laid_out.set_layout(Layout{{0}});
  Literal b(laid_out);
  b.SetS64(0, 1);
  b.SetS64(1, 2);
  EXPECT_EQ(a, b);
  b.SetS64(1, 3);
  EXPECT_NE(a, b);
}

TEST(LiteralTest, ReshapeKeepsRowMajorOrder) {
  Literal v = Literal::Vector(ElementType::kS32, {1, 2, 3, 4, 5, 6});
  auto m = v.Reshape({2, 3});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->GetS64(m->Linear({1, 0})), 4);
  EXPECT_FALSE(v.Reshape({4}).ok());
}

}  // namespace
}  // namespace kiln
