// DotMerger end to end: a CUDA compile merges the three projections of an
// attention block (GEMMs sharing their lhs) and two GEMMs sharing their rhs
// into one GEMM thunk each, and the merged program's results match the
// reference evaluator on the device under test (the host or the emulated
// CUDA device) and on the host running the host+CUDA program.
#include <gtest/gtest.h>

#include "compiler/driver/compiler.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

// x . wq, x . wk and x . wv in [batch, seq, model] form, as JAX writes
// them, read by an elementwise consumer; a and b share the rhs w.
constexpr char kProjections[] = R"(HloModule projections
ENTRY e {
  x = f32[2,24,32] parameter(0)
  wq = f32[32,40] parameter(1)
  wk = f32[32,40] parameter(2)
  wv = f32[32,40] parameter(3)
  q = f32[2,24,40] dot(x, wq), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  k = f32[2,24,40] dot(x, wk), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  v = f32[2,24,40] dot(x, wv), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  qk = f32[2,24,40] multiply(q, k)
  ROOT r = f32[2,24,40] add(qk, v)
})";

constexpr char kSharedRhs[] = R"(HloModule shared_rhs
ENTRY e {
  a = bf16[16,64] parameter(0)
  b = bf16[48,64] parameter(1)
  c = bf16[8,64] parameter(2)
  w = bf16[64,32] parameter(3)
  x = f32[16,32] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[48,32] dot(b, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[8,32] dot(c, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[72,32] concatenate(x, y, z), dimensions={0}
})";

int64_t GemmThunks(const std::string& text, bool cuda) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return -1;
  compiler::CompileOptions options;
  options.cuda = cuda;
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return -1;
  int64_t n = 0;
  thunks::ForEachThunk(artifact->program.root, [&](const thunks::Thunk& t, int) { n += t.As<thunks::GemmThunk>() != nullptr; });
  return n;
}

TEST(DotMergerCompile, CudaCompilesMergeGemmsSharingAnOperand) {
  EXPECT_EQ(GemmThunks(kProjections, true), 1);
  EXPECT_EQ(GemmThunks(kSharedRhs, true), 1);
  // The host's GEMM library gains nothing from one larger call.
  EXPECT_EQ(GemmThunks(kProjections, false), 3);
}

using DotMergerE2ETest = E2EDeviceTest;

// The projections sum 32 products of values in [-1, 1): in f32, in whatever
// order the GEMM library's kernels add them, a result that cancels to near
// zero is off by up to ~32 * 2^-24 * sum|ab|, a few 1e-6, where the
// default f32 tolerance (atol 1e-6) assumes the evaluator's order.
const CompareOptions kGemmTolerance{.atol = 1e-5, .rtol = std::nullopt};

TEST_F(DotMergerE2ETest, MergedProjectionsMatchTheEvaluator) {
  ExpectMatchesEvaluator(kProjections, *device_, 3, kGemmTolerance);
}

TEST_F(DotMergerE2ETest, MergedSharedRhsGemmsMatchTheEvaluator) {
  ExpectMatchesEvaluator(kSharedRhs, *device_, 5, kGemmTolerance);
}

// The host runs the program compiled for host and CUDA, merged GEMMs and
// all.
TEST(DotMergerHostRun, HostRunsTheMergedProgram) {
  auto device = runtime::Device::Create(runtime::DeviceKind::kHost);
  ASSERT_TRUE(device.ok()) << device.status().message();
  for (const char* text : {kProjections, kSharedRhs}) {
    auto module = hlo::ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().message();
    std::vector<Literal> args = RandomArgs(**module, 7);
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    tools::CompileAndRunOptions run;
    run.all_targets = true;
    StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, **device, run);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    Status same = CompareValues(actual->result, *expected, "result", kGemmTolerance);
    EXPECT_TRUE(same.ok()) << same.message();
  }
}

}  // namespace
}  // namespace kiln::testing
