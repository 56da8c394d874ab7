#include "common/shape.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(ShapeTest, ArrayToStringWithAndWithoutLayout) {
  Shape s(ElementType::kF32, {2, 3});
  EXPECT_EQ(s.ToString(), "f32[2,3]");
  s.set_layout(Layout{{1, 0}});
  EXPECT_EQ(s.ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(s.ToString(false), "f32[2,3]");
  EXPECT_EQ(Shape::Scalar(ElementType::kPred).ToString(), "pred[]");
}

TEST(ShapeTest, LayoutSuffixesPrintInCanonicalOrder) {
  Layout layout{{1, 0}};
  layout.tiles = {Tile{{8, 128}}, Tile{{2, 1}}};
  layout.memory_space = 1;
  EXPECT_EQ(layout.ToString(), "{1,0:T(8,128)(2,1)S(1)}");
  Layout combined{{0}};
  combined.tiles = {Tile{{Tile::kCombined, 4}}};
  combined.element_size_in_bits = 4;
  EXPECT_EQ(combined.ToString(), "{0:T(*,4)E(4)}");
}

TEST(ShapeTest, DynamicDimensions) {
  Shape s(ElementType::kBF16, {8, 4});
  s.set_dynamic_dim(0, true);
  EXPECT_EQ(s.ToString(), "bf16[<=8,4]");
  EXPECT_TRUE(s.is_dynamic());
}

TEST(ShapeTest, TuplesAndSubShapes) {
  Shape inner = Shape::Tuple({Shape(ElementType::kS32, {}), Shape::Token()});
  Shape t = Shape::Tuple({Shape(ElementType::kF32, {4}), inner});
  EXPECT_EQ(t.ToString(), "(f32[4], (s32[], token[]))");
  ASSERT_NE(SubShape(t, {1, 0}), nullptr);
  EXPECT_EQ(SubShape(t, {1, 0})->element_type(), ElementType::kS32);
  EXPECT_EQ(SubShape(t, {2}), nullptr);
  // 4 floats + 1 int32.
  EXPECT_EQ(t.ByteSize(), 4 * 4 + 4);
}

TEST(ShapeTest, CompatibleIgnoresLayoutButNotType) {
  Shape a(ElementType::kF32, {2, 3});
  Shape b = a;
  b.set_layout(Layout{{0, 1}});
  EXPECT_TRUE(a.Compatible(b));
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a.Compatible(Shape(ElementType::kF16, {2, 3})));
  EXPECT_TRUE(a.SameDimensions(Shape(ElementType::kF16, {2, 3})));
}

TEST(ShapeTest, MinorToMajorDefaultsToDescending) {
  EXPECT_EQ(Shape(ElementType::kF32, {2, 3, 4}).MinorToMajor(), (std::vector<int64_t>{2, 1, 0}));
}

TEST(ShapeTest, RowMajorIndexing) {
  std::vector<int64_t> dims = {2, 3};
  EXPECT_EQ(RowMajorStrides(dims), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(LinearIndex(dims, {1, 2}), 5);
  std::vector<int64_t> index = {0, 2};
  ASSERT_TRUE(NextIndex(dims, index));
  EXPECT_EQ(index, (std::vector<int64_t>{1, 0}));
  index = {1, 2};
  EXPECT_FALSE(NextIndex(dims, index));
}

}  // namespace
}  // namespace kiln
