// fusible_ops: NormalizeTranspose collapses a transpose into groups of
// operand dimensions that stay adjacent, and IsTiledTransposeHero picks the
// transposes that move the minor dimension with both swapped groups >= 16;
// expected groups and permutations worked out by hand.
#include "compiler/passes/fusible_ops.h"

#include <gtest/gtest.h>

#include "compiler/hlo/computation.h"
#include "tests/support/must_parse.h"

namespace kiln::passes {
namespace {

struct Case {
  const char* operand;
  const char* result;
  const char* dims;
  std::vector<int64_t> operand_dims;
  std::vector<int64_t> permutation;
  bool hero;
};

void Check(const Case& c) {
  std::string text = std::string("HloModule m\n\nENTRY e {\n  p = ") + c.operand + " parameter(0)\n  ROOT t = " + c.result +
                     " transpose(p), dimensions={" + c.dims + "}\n}\n";
  auto module = test_support::MustParse(text);
  ASSERT_TRUE(module);
  const hlo::HloInstruction& t = *module->entry()->root();
  NormalizedTranspose n = NormalizeTranspose(t);
  EXPECT_EQ(n.operand_dims, c.operand_dims) << text;
  EXPECT_EQ(n.permutation, c.permutation) << text;
  EXPECT_EQ(IsTiledTransposeHero(t), c.hero) << text;
}

TEST(FusibleOps, TwoDimensionalTransposeIsHero) {
  Check({"f32[64,32]", "f32[32,64]", "1,0", {64, 32}, {1, 0}, true});
}

TEST(FusibleOps, SmallMinorDimensionIsNotHero) {
  Check({"f32[64,8]", "f32[8,64]", "1,0", {64, 8}, {1, 0}, false});
  Check({"f32[8,64]", "f32[64,8]", "1,0", {8, 64}, {1, 0}, false});
}

TEST(FusibleOps, BatchedTransposeIsHero) {
  Check({"f32[2,64,32]", "f32[2,32,64]", "0,2,1", {2, 64, 32}, {0, 2, 1}, true});
}

TEST(FusibleOps, AdjacentDimensionsCollapse) {
  // Operand dims 0 and 1 stay adjacent: one group of 8*4 = 32.
  Check({"f32[8,4,32]", "f32[32,8,4]", "2,0,1", {32, 32}, {1, 0}, true});
}

TEST(FusibleOps, SizeOneDimensionsAreDropped) {
  Check({"f32[1,64,1,32]", "f32[1,32,1,64]", "0,3,2,1", {64, 32}, {1, 0}, true});
}

TEST(FusibleOps, MinorDimensionKeptIsNotHero) {
  Check({"f32[4,8,32]", "f32[8,4,32]", "1,0,2", {4, 8, 32}, {1, 0, 2}, false});
}

TEST(FusibleOps, FullReversalIsHero) {
  Check({"f32[32,4,32]", "f32[32,4,32]", "2,1,0", {32, 4, 32}, {2, 1, 0}, true});
}

TEST(FusibleOps, IdentityCollapsesToOneGroup) {
  Check({"f32[4,8]", "f32[4,8]", "0,1", {32}, {0}, false});
}

}  // namespace
}  // namespace kiln::passes
