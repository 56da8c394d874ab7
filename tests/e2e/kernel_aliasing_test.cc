// KernelAliasing (compiler/driver/kernel_aliasing.h): what buffer
// assignment's slices tell codegen about kernel arguments, on hand-built
// programs with the expected flags written down; then end to end, a layer
// norm's kernels get noalias arguments and still match the reference
// evaluator. (tests/codegen/in_place_kernel_test.cc runs a kernel whose
// output is its operand's buffer.)
#include "compiler/driver/kernel_aliasing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/driver/compiler.h"
#include "runtime/runtime.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

namespace th = ::kiln::thunks;

th::ThunkProgram OneKernel(std::vector<th::KernelArgument> args, const std::string& name = "k") {
  th::ThunkProgram p;
  th::Thunk t;
  t.body = th::KernelThunk{name, std::move(args), {}};
  p.root.thunks.push_back(std::move(t));
  return p;
}

th::KernelArgument Arg(int32_t allocation, int64_t offset, int64_t size, bool written = false) {
  return {th::BufferSlice{allocation, offset, size}, written};
}

TEST(KernelAliasingTest, DistinctBuffersAreDisjoint) {
  auto a = compiler::KernelAliasing(OneKernel({Arg(0, 0, 64), Arg(1, 0, 64), Arg(2, 64, 64, true)}));
  ASSERT_EQ(a.count("k"), 1u);
  EXPECT_EQ(a["k"].same_buffer, (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ(a["k"].disjoint, (std::vector<bool>{true, true, true}));
}

TEST(KernelAliasingTest, OutputInItsOperandsBuffer) {
  // Parameter 1 and the output are one slice; parameter 0 sits next to it.
  auto a = compiler::KernelAliasing(OneKernel({Arg(3, 0, 64), Arg(3, 64, 64), Arg(3, 64, 64, true)}));
  EXPECT_EQ(a["k"].same_buffer, (std::vector<int64_t>{-1, -1, 1}));
  EXPECT_EQ(a["k"].disjoint, (std::vector<bool>{true, true, true}));
}

TEST(KernelAliasingTest, PartialOverlapWithAWrittenArgument) {
  auto a = compiler::KernelAliasing(OneKernel({Arg(0, 0, 128), Arg(0, 64, 128, true)}));
  EXPECT_EQ(a["k"].same_buffer, (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(a["k"].disjoint, (std::vector<bool>{false, false}));
}

TEST(KernelAliasingTest, ReadOnlyOverlapStaysDisjoint) {
  // Two parameters read the same constant bytes: nothing writes them.
  auto a = compiler::KernelAliasing(OneKernel({Arg(0, 0, 128), Arg(0, 64, 64), Arg(1, 0, 64, true)}));
  EXPECT_EQ(a["k"].disjoint, (std::vector<bool>{true, true, true}));
}

TEST(KernelAliasingTest, TwoLaunchesKeepOnlyWhatBothAllow) {
  th::ThunkProgram p = OneKernel({Arg(0, 0, 64), Arg(0, 0, 64, true)});
  th::ThunkProgram q = OneKernel({Arg(1, 0, 64), Arg(2, 0, 64, true)});
  p.root.thunks.push_back(q.root.thunks[0]);
  auto a = compiler::KernelAliasing(p);
  EXPECT_EQ(a["k"].same_buffer, (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(a["k"].disjoint, (std::vector<bool>{false, false}));
}

// Layer normalization as JAX writes it in bf16 (the corpus's layer_norm
// benchmark, at 1x64x96).
constexpr char kLayerNorm[] = R"(
HloModule layer_norm
region_0.1 {
  reduce_sum.3 = f32[] parameter(0)
  reduce_sum.4 = f32[] parameter(1)
  ROOT reduce_sum.5 = f32[] add(reduce_sum.3, reduce_sum.4)
}

region_1.2 {
  reduce_sum.10 = f32[] parameter(0)
  reduce_sum.11 = f32[] parameter(1)
  ROOT reduce_sum.12 = f32[] add(reduce_sum.10, reduce_sum.11)
}

ENTRY main.3 {
  x.1 = bf16[1,64,96]{2,1,0} parameter(0)
  convert_element_type.4 = f32[1,64,96]{2,1,0} convert(x.1)
  constant.5 = f32[] constant(0)
  reduce_sum.14 = f32[1,64]{1,0} reduce(convert_element_type.4, constant.5), dimensions={2}, to_apply=region_0.1
  broadcast_in_dim.2 = f32[1,64,1]{2,1,0} reshape(reduce_sum.14)
  constant.4 = f32[] constant(96)
  broadcast.1 = f32[1,64,1]{2,1,0} broadcast(constant.4), dimensions={}
  div.6 = f32[1,64,1]{2,1,0} divide(broadcast_in_dim.2, broadcast.1)
  convert_element_type.5 = bf16[1,64,1]{2,1,0} convert(div.6)
  sub.12 = bf16[1,64,1]{2,1,0} broadcast(convert_element_type.5), dimensions={0,1,2}
  sub.13 = bf16[1,64]{1,0} reshape(sub.12)
  sub.14 = bf16[1,64,96]{2,1,0} broadcast(sub.13), dimensions={0,1}
  sub.15 = bf16[1,64,96]{2,1,0} subtract(x.1, sub.14)
  sub.8 = bf16[1,64,1]{2,1,0} broadcast(convert_element_type.5), dimensions={0,1,2}
  sub.9 = bf16[1,64]{1,0} reshape(sub.8)
  sub.10 = bf16[1,64,96]{2,1,0} broadcast(sub.9), dimensions={0,1}
  sub.11 = bf16[1,64,96]{2,1,0} subtract(x.1, sub.10)
  integer_pow.1 = bf16[1,64,96]{2,1,0} multiply(sub.11, sub.11)
  convert_element_type.6 = f32[1,64,96]{2,1,0} convert(integer_pow.1)
  reduce_sum.15 = f32[1,64]{1,0} reduce(convert_element_type.6, constant.5), dimensions={2}, to_apply=region_1.2
  broadcast_in_dim.3 = f32[1,64,1]{2,1,0} reshape(reduce_sum.15)
  div.7 = f32[1,64,1]{2,1,0} divide(broadcast_in_dim.3, broadcast.1)
  convert_element_type.7 = bf16[1,64,1]{2,1,0} convert(div.7)
  constant.3 = bf16[] constant(1.001e-05)
  add.2 = bf16[1,64,1]{2,1,0} broadcast(constant.3), dimensions={}
  add.3 = bf16[1,64,1]{2,1,0} add(convert_element_type.7, add.2)
  sqrt.1 = bf16[1,64,1]{2,1,0} sqrt(add.3)
  div.8 = bf16[1,64,1]{2,1,0} broadcast(sqrt.1), dimensions={0,1,2}
  div.9 = bf16[1,64]{1,0} reshape(div.8)
  div.10 = bf16[1,64,96]{2,1,0} broadcast(div.9), dimensions={0,1}
  ROOT div.11 = bf16[1,64,96]{2,1,0} divide(sub.15, div.10)
}
)";

TEST(KernelAliasingTest, LayerNormKernelsGetNoaliasArguments) {
  auto module = hlo::ParseHloModule(kLayerNorm);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::string dir = ::testing::TempDir() + "/kernel_aliasing_dump";
  std::filesystem::remove_all(dir);
  compiler::CompileOptions options;
  options.host = true;
  options.dump_dir = dir;
  auto artifact = compiler::CompileModule(**module, options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  // Its kernels' buffers are all distinct: every argument is noalias.
  for (const auto& [name, a] : compiler::KernelAliasing(artifact->program))
    EXPECT_EQ(a.disjoint, std::vector<bool>(a.disjoint.size(), true)) << name;
  std::ifstream in(dir + "/kernels.mlir");
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove_all(dir);
  EXPECT_NE(text.str().find("llvm.noalias"), std::string::npos) << text.str();

  auto device = runtime::Device::Create(E2EDeviceKind());
  ASSERT_TRUE(device.ok()) << device.status().message();
  for (uint64_t seed : {1, 2}) {
    EXPECT_EQ(CompareWithEvaluator(**module, **device, RandomArgs(**module, seed)), "");
  }
}

}  // namespace
}  // namespace kiln::testing
