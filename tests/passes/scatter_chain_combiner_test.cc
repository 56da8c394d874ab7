// ScatterChainCombiner: chains of one-element scatters at constant indices
// become one scatter. The rewrite is checked against hand-written modules
// (the single scatter the chain means, with its index table written out)
// on the reference evaluator; near-misses are left alone.
#include "compiler/passes/scatter_chain_combiner.h"

#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::CheckPass;
using test_support::ExpectRewriteComputes;
using test_support::MustParse;
using test_support::MustRunPass;

int64_t Scatters(const hlo::HloModule& module) {
  int64_t n = 0;
  for (const hlo::HloInstruction* inst : module.entry()->instructions()) n += inst->opcode() == hlo::HloOpcode::kScatter;
  return n;
}

// Three elements of a zero 3x3 matrix set from the arguments (JAX's
// m.at[i, j].set(v)), each scatter with its own replace combiner, one
// index a broadcast constant and one written out.
constexpr char kSetChain[] = R"(HloModule m
set_a {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
set_b {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  v = f32[3] parameter(0)
  zero = f32[] constant(0)
  m = f32[3,3] broadcast(zero), dimensions={}
  one = s32[] constant(1)
  i11 = s32[2] broadcast(one), dimensions={}
  i02 = s32[2] constant({0, 2})
  i20 = s32[2] constant({2, 0})
  v0 = f32[1] slice(v), slice={[0:1]}
  a = f32[] reshape(v0)
  v1 = f32[1] slice(v), slice={[1:2]}
  b = f32[] reshape(v1)
  c = f32[] cosine(a)
  s1 = f32[3,3] scatter(m, i11, a), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, indices_are_sorted=true, unique_indices=true, to_apply=set_a
  s2 = f32[3,3] scatter(s1, i02, b), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=set_b
  ROOT s3 = f32[3,3] scatter(s2, i20, c), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=set_a
}
)";

constexpr char kSetChainAsOneScatter[] = R"(HloModule m
set {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  v = f32[3] parameter(0)
  zero = f32[] constant(0)
  m = f32[3,3] broadcast(zero), dimensions={}
  v0 = f32[1] slice(v), slice={[0:1]}
  a = f32[] reshape(v0)
  v1 = f32[1] slice(v), slice={[1:2]}
  c = f32[1] cosine(v0)
  u = f32[3] concatenate(v0, v1, c), dimensions={0}
  idx = s32[3,2] constant({{1, 1}, {0, 2}, {2, 0}})
  ROOT s = f32[3,3] scatter(m, idx, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=set
}
)";

TEST(ScatterChainCombiner, ChainOfPointScattersIsOneScatter) {
  ScatterChainCombiner pass;
  ExpectRewriteComputes(pass, kSetChain, kSetChainAsOneScatter);
  auto module = MustParse(kSetChain);
  ASSERT_TRUE(module);
  EXPECT_TRUE(MustRunPass(pass, *module));
  EXPECT_EQ(Scatters(*module), 1);
}

// Adds into a parameter, with scatter_dims_to_operand_dims swapping the
// index's coordinates: the combined scatter adds every update.
TEST(ScatterChainCombiner, AddingChainWithPermutedIndexDims) {
  const std::string chain = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(b, a)
}
ENTRY e {
  m = f32[2,3] parameter(0)
  x = f32[] parameter(1)
  i0 = s32[2] constant({2, 1})
  i1 = s32[2] constant({0, 0})
  y = f32[] negate(x)
  s1 = f32[2,3] scatter(m, i0, x), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=0, to_apply=add
  ROOT s2 = f32[2,3] scatter(s1, i1, y), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=0, to_apply=add
}
)";
  const std::string by_hand = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  m = f32[2,3] parameter(0)
  x = f32[] parameter(1)
  y = f32[] negate(x)
  xr = f32[1] reshape(x)
  yr = f32[1] reshape(y)
  u = f32[2] concatenate(xr, yr), dimensions={0}
  idx = s32[2,2] constant({{2, 1}, {0, 0}})
  ROOT s = f32[2,3] scatter(m, idx, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=1, to_apply=add
}
)";
  ScatterChainCombiner pass;
  ExpectRewriteComputes(pass, chain, by_hand);
}

// Near-misses: the same element twice (the order would matter), different
// combiners, an inner result read elsewhere, an index known only at run
// time, an out-of-bounds index (the scatter skips it).
std::string TwoScatters(const std::string& i0, const std::string& i1, const std::string& second_combiner,
                        bool inner_read) {
  return R"(HloModule m
set {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  m = f32[2,2] parameter(0)
  x = f32[] parameter(1)
  k = s32[2] parameter(2)
  i0 = s32[2] )" + i0 + R"(
  i1 = s32[2] )" + i1 + R"(
  s1 = f32[2,2] scatter(m, i0, x), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=set
  s2 = f32[2,2] scatter(s1, i1, x), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=)" +
         second_combiner + R"(
  ROOT r = f32[2,2] )" + (inner_read ? "add(s1, s2)" : "negate(s2)") + R"(
}
)";
}

TEST(ScatterChainCombiner, NearMissesAreLeftAlone) {
  ScatterChainCombiner pass;
  CheckPass(pass, TwoScatters("constant({1, 0})", "constant({1, 0})", "set", false), false);
  CheckPass(pass, TwoScatters("constant({1, 0})", "constant({0, 1})", "add", false), false);
  CheckPass(pass, TwoScatters("constant({1, 0})", "constant({0, 1})", "set", true), false);
  CheckPass(pass, TwoScatters("add(k, k)", "constant({0, 1})", "set", false), false);
  CheckPass(pass, TwoScatters("constant({2, 0})", "constant({0, 1})", "set", false), false);
  // The control: the same module with distinct in-bounds constant indices.
  auto module = MustParse(TwoScatters("constant({1, 0})", "constant({0, 1})", "set", false));
  ASSERT_TRUE(module);
  EXPECT_TRUE(MustRunPass(pass, *module));
}

}  // namespace
}  // namespace kiln::passes
