// Host kernels split into unit ranges (kernel_codegen.h, CompiledKernel::
// launch): running a kernel as several calls on disjoint [begin, end)
// ranges must give exactly the result of one call over all units, and both
// must match the reference evaluator. Scatter kernels must not be split.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/codegen/codegen_test_util.h"

namespace kiln::codegen {
namespace {

using testing::Evaluate;
using testing::ExpectNear;
using testing::FindKernel;
using testing::KernelFn;
using testing::LoadedLibrary;
using testing::MustParse;
using testing::Ramp;

struct Compiled {
  std::unique_ptr<hlo::HloModule> module;
  CodegenResult result;
  std::unique_ptr<LoadedLibrary> lib;
  KernelFn fn;
  int64_t elements_per_unit = 0;
};

void Compile(const std::string& text, Compiled& c) {
  c.module = MustParse(text);
  ASSERT_TRUE(c.module);
  StatusOr<CodegenResult> compiled = CompileKernels({{"kernel", c.module->entry()}}, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  c.result = std::move(*compiled);
  ASSERT_TRUE(c.result.host);
  auto lib = LoadedLibrary::Load(c.result.host->shared_object);
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  c.lib = std::move(*lib);
  c.fn = FindKernel(*c.lib, *c.result.host, "kernel");
  ASSERT_NE(c.fn, nullptr);
  ASSERT_EQ(c.result.host->kernels.size(), 1u);
  c.elements_per_unit = c.result.host->kernels[0].launch.block[0];
}

// Runs `fn` on `args` as calls over the unit ranges between `cuts`
// (0 = c0 < c1 < ... < units), in reverse order so that no range relies on
// an earlier one having run.
Literal RunRanges(const KernelFn& fn, const std::vector<Literal>& args, const Shape& result_shape,
                  const std::vector<int64_t>& cuts) {
  Literal result(result_shape);
  std::vector<void*> buffers;
  for (const Literal& a : args) buffers.push_back(const_cast<uint8_t*>(a.raw()));
  buffers.push_back(result.raw());
  for (size_t i = cuts.size() - 1; i > 0; --i) fn.fn(buffers.data(), cuts[i - 1], cuts[i]);
  return result;
}

// Checks the launch, then runs the kernel whole and in 3 uneven ranges.
void ExpectSplitMatches(const std::string& text, const std::vector<Literal>& args, int64_t want_units,
                        int64_t want_per_unit, double rel_tol, double abs_tol = 0) {
  Compiled c;
  Compile(text, c);
  if (::testing::Test::HasFatalFailure()) return;
  const Shape& shape = c.module->entry()->root()->shape();
  ASSERT_EQ(c.fn.units, want_units);
  EXPECT_EQ(c.elements_per_unit, want_per_unit);
  int64_t u = c.fn.units;
  Literal whole = RunRanges(c.fn, args, shape, {0, u});
  Literal split = RunRanges(c.fn, args, shape, {0, 1, u / 3 + 1, u});
  EXPECT_EQ(split, whole);
  ExpectNear(whole, Evaluate(text, args), rel_tol, abs_tol);
}

TEST(HostSplitTest, ElementwiseSplitsAlongFirstNonUnitDimension) {
  // Leading unit dimension: the units are the 37 rows of 50 elements.
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,37,50] parameter(0)
  y = f32[1,37,50] parameter(1)
  e = f32[1,37,50] exponential(x)
  ROOT r = f32[1,37,50] multiply(e, y)
})";
  ExpectSplitMatches(text,
                     {Ramp(ElementType::kF32, {1, 37, 50}, -3, 3), Ramp(ElementType::kF32, {1, 37, 50}, -1, 2)},
                     37, 50, 1e-6);
}

// A unit is one result element and the 64 input elements it sums.
TEST(HostSplitTest, ReduceInputFusion) {
  const std::string text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[23,64] parameter(0)
  t = f32[23,64] tanh(x)
  z = f32[] constant(0)
  ROOT r = f32[23] reduce(t, z), dimensions={1}, to_apply=add
})";
  // Rows of tanh over a symmetric ramp sum to about 0: absolute tolerance.
  ExpectSplitMatches(text, {Ramp(ElementType::kF32, {23, 64}, -2, 2)}, 23, 64, 1e-5, 1e-5);
}

TEST(HostSplitTest, TiledTransposeSplitsAlongTiles) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[100,70] parameter(0)
  ROOT t = f32[70,100] transpose(x), dimensions={1,0}
})";
  Compiled c;
  Compile(text, c);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  ASSERT_NE(c.result.mlir_text.find("kiln.tiles"), std::string::npos) << "not a tiled kernel";
  // 32x32 tiles: ceil(100/32) * ceil(70/32) = 4 * 3, of ceil(7000 / 12)
  // elements each.
  ExpectSplitMatches(text, {Ramp(ElementType::kF32, {100, 70}, -5, 5)}, 12, 584, 0);
}

TEST(HostSplitTest, InPlaceDynamicUpdateSliceSplitsOverTheUpdate) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[40,8] parameter(0)
  u = f32[10,8] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[40,8] dynamic-update-slice(x, u, i, z)
})";
  Compiled c;
  Compile(text, c);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_EQ(c.fn.units, 10);
}

TEST(HostSplitTest, ScatterIsOneUnit) {
  // Duplicate indices would race if the updates were split across threads.
  const std::string text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[5,2] parameter(0)
  idx = s32[4,1] parameter(1)
  upd = f32[4,2] parameter(2)
  ROOT s = f32[5,2] scatter(x, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";
  Compiled c;
  Compile(text, c);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_EQ(c.result.host->kernels[0].launch.grid[0], 1);
  EXPECT_EQ(c.result.host->kernels[0].launch.block[0], 8);  // all 4x2 update elements
}

}  // namespace
}  // namespace kiln::codegen
