// Driver calls per execution with CUDA graphs (docs/runtime_hal.md), counted
// by the emulator (kilnEmuApiCalls) on the emulated CUDA device: the README
// example (examples/mlp.hlo) and chains of 10 and 1000 dependent GEMMs, with
// inputs resident on the device and outputs left there, as XLA's and IREE's
// benchmarks time them. Once captured, every execution is one cuGraphLaunch
// and no other call that puts work on a stream, whatever the chain's length;
// without graphs the chain takes at least one call per GEMM. A loop with a
// known trip count is recorded whole, up to the unrolling limit. Results are
// checked against the MLP computed in double (tests/support/mlp_example.h)
// and the chains against the reference evaluator. CUDA only: skipped on the
// host registration (tests/CMakeLists.txt runs it with KILN_E2E_DEVICE=cuda).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/command_segments.h"
#include "tests/e2e/e2e_test_util.h"
#include "tests/support/emulator_transfers.h"
#include "tests/support/mlp_example.h"

namespace kiln::testing {
namespace {

using runtime::Buffer;

// Calls that put work on a stream directly (captured ones are recorded into
// a graph, not issued) plus graph launches: what bench/dispatch_bench and
// bench/soak_bench report as driver calls.
uint64_t DirectCalls(const KilnEmuApiCalls& c) {
  return c.kernel_launches + c.library_calls + c.copies + c.memsets + c.event_records - c.captured +
         c.graph_launches;
}

struct PerExecution {
  uint64_t direct = 0, graph_launches = 0, stream_syncs = 0;
  std::string detail;  // the counters behind `direct`
};

// x_n = x_{n-1} . w, n GEMMs one after another.
std::string GemmChain(int n) {
  std::string s = "HloModule gemm_chain\nENTRY main {\n  x0 = f32[4,4] parameter(0)\n  w = f32[4,4] parameter(1)\n";
  for (int i = 1; i <= n; ++i) {
    s += std::string(i == n ? "  ROOT " : "  ") + "x" + std::to_string(i) + " = f32[4,4] dot(x" +
         std::to_string(i - 1) + ", w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  }
  return s + "}\n";
}

// A loop of n iterations (a known trip count) whose body multiplies x by w
// and takes tanh: a GEMM, so it stays a thunk loop, not a loop kernel.
std::string CountedLoop(int n) {
  return R"(HloModule counted_loop
cond {
  p = (s32[], f32[4,4], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant()" + std::to_string(n) + R"()
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4,4], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4,4] get-tuple-element(p), index=1
  w = f32[4,4] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  d = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[4,4] tanh(d)
  ROOT r = (s32[], f32[4,4], f32[4,4]) tuple(i2, t, w)
}
ENTRY main {
  x = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[4,4], f32[4,4]) tuple(z, x, w)
  loop = (s32[], f32[4,4], f32[4,4]) while(init), condition=cond, body=body
  ROOT out = f32[4,4] get-tuple-element(loop), index=1
}
)";
}

int CountGemms(const thunks::SequenceThunk& seq) {
  int n = 0;
  for (const thunks::Thunk& t : seq.thunks) {
    if (t.kind() == thunks::ThunkKind::kGemm) ++n;
    for (const thunks::SequenceThunk* child : thunks::ChildSequences(t)) n += CountGemms(*child);
  }
  return n;
}

class CudaDriverCallsE2ETest : public CudaOnlyE2ETest {
 protected:
  void SetUp() override {
    CudaOnlyE2ETest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(EmulatorApiCalls().has_value()) << "the emulator's call counters";
  }

  // One execution with host outputs against `expected`.
  static void ExpectResult(const runtime::LoadedExecutable& exe, const std::vector<Buffer>& args,
                           const Literal& expected, const CompareOptions& tol) {
    runtime::ExecuteOptions options;
    options.host_outputs = true;
    auto r = exe.ExecuteSync(args, options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    StatusOr<Literal> actual = tools::BuffersToLiteral(exe.result_shape(), r->outputs);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    Status same = CompareValues(*actual, expected, "result", tol);
    EXPECT_TRUE(same.ok()) << same.message();
  }

  // The figures, for the closing note.
  static void Report(const std::string& what, const PerExecution& on, const PerExecution& off) {
    std::printf("%s, driver calls per execution: graphs on %llu, off %llu\n", what.c_str(),
                static_cast<unsigned long long>(on.direct), static_cast<unsigned long long>(off.direct));
  }

  // The calls of each of `n` executions on `args` (outputs left on the
  // device and dropped), after three that issue directly, capture and
  // replay once; EXPECTs every execution to make the same calls.
  PerExecution CallsPerExecution(const runtime::LoadedExecutable& exe, const std::vector<Buffer>& args,
                                 bool graphs, int n = 5) {
    runtime::ExecuteOptions options;
    options.cuda_graphs = graphs;
    options.host_outputs = false;
    options.profile = false;  // a profiled execution records events around the run
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(exe.ExecuteSync(args, options).ok());
    PerExecution first;
    for (int i = 0; i < n; ++i) {
      KilnEmuApiCalls a = *EmulatorApiCalls();
      auto r = exe.ExecuteSync(args, options);
      KilnEmuApiCalls b = *EmulatorApiCalls();
      EXPECT_TRUE(r.ok()) << r.status().message();
      EXPECT_TRUE(r.ok() && r->outputs.size() >= 1 && r->outputs[0].memory_space() == runtime::MemorySpace::kDevice);
      PerExecution p{DirectCalls(b) - DirectCalls(a), b.graph_launches - a.graph_launches,
                     b.stream_syncs - a.stream_syncs,
                     "kernels " + std::to_string(b.kernel_launches - a.kernel_launches) + ", library " +
                         std::to_string(b.library_calls - a.library_calls) + ", copies " +
                         std::to_string(b.copies - a.copies) + ", memsets " + std::to_string(b.memsets - a.memsets) +
                         ", event records " + std::to_string(b.event_records - a.event_records) + ", captured " +
                         std::to_string(b.captured - a.captured) + ", graph launches " +
                         std::to_string(b.graph_launches - a.graph_launches)};
      if (i == 0) first = p;
      EXPECT_EQ(p.direct, first.direct) << "execution " << i;
    }
    return first;
  }
};

TEST_F(CudaDriverCallsE2ETest, ReadmeExampleIsOneGraphLaunch) {
  std::ifstream file("examples/mlp.hlo");
  ASSERT_TRUE(file) << "run from the repository root";
  std::stringstream text;
  text << file.rdbuf();
  std::unique_ptr<hlo::HloModule> module;
  auto exe = CompileAndLoadForCuda(text.str(), *device_, &module);
  ASSERT_NE(exe, nullptr);
  const MlpInputs inputs = MakeMlpInputs(11);
  StatusOr<std::vector<Buffer>> host = MlpArguments(inputs);
  ASSERT_TRUE(host.ok()) << host.status().message();
  std::vector<Buffer> args = Upload(*host);

  PerExecution on = CallsPerExecution(*exe, args, true);
  EXPECT_EQ(on.direct, 1u) << on.detail;
  EXPECT_EQ(on.graph_launches, 1u);
  EXPECT_LE(on.stream_syncs, 1u);
  PerExecution off = CallsPerExecution(*exe, args, false);
  EXPECT_GT(off.direct, on.direct);
  Report("README example", on, off);
  EXPECT_EQ(off.graph_launches, 0u);

  runtime::ExecuteOptions options;
  options.host_outputs = true;
  auto r = exe->ExecuteSync(args, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(CheckMlpOutputs(r->outputs, ComputeMlp(inputs)), "");
}

TEST_F(CudaDriverCallsE2ETest, GemmChainsOf10And1000TakeTheSameCalls) {
  std::vector<PerExecution> with_graphs;
  for (int n : {10, 1000}) {
    SCOPED_TRACE(std::to_string(n) + " GEMMs");
    std::unique_ptr<hlo::HloModule> module;
    thunks::ThunkProgram program;
    auto exe = CompileAndLoadForCuda(GemmChain(n), *device_, &module, 1, &program);
    ASSERT_NE(exe, nullptr);
    ASSERT_GE(CountGemms(program.root), n);
    // w cycles the 4 columns, so x . w^n stays exact; the evaluator checks it.
    std::vector<Literal> literals = RandomArgs(*module, 90 + static_cast<uint64_t>(n));
    Literal& w = literals[1];
    for (int64_t i = 0; i < 16; ++i) w.SetF64(i, (i % 4) == ((i / 4) + 1) % 4 ? 1.0 : 0.0);
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(*module, literals);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    std::vector<Buffer> args = Upload(literals);
    ASSERT_EQ(args.size(), 2u);

    PerExecution on = CallsPerExecution(*exe, args, true);
    EXPECT_EQ(on.direct, 1u) << on.detail;
    EXPECT_EQ(on.graph_launches, 1u);
    EXPECT_LE(on.stream_syncs, 1u);
    with_graphs.push_back(on);
    PerExecution off = CallsPerExecution(*exe, args, false, 2);
    EXPECT_GE(off.direct, static_cast<uint64_t>(n));
    Report(std::to_string(n) + "-GEMM chain", on, off);
    ExpectResult(*exe, args, *expected, {0.0, 0.0});
  }
  ASSERT_EQ(with_graphs.size(), 2u);
  EXPECT_EQ(with_graphs[0].direct, with_graphs[1].direct);
}

// A while loop with a known trip count is recorded whole, unrolled into
// its segment's graph: one cuGraphLaunch per execution for 50 iterations.
// Beyond runtime::kMaxUnrolledRecordedThunks (3000 iterations of a body of
// two or more thunks) it is not, and its body is a segment of its own,
// launched once per iteration. Results against the evaluator.
TEST_F(CudaDriverCallsE2ETest, KnownTripCountLoopIsCapturedWhole) {
  for (int n : {50, 3000}) {
    SCOPED_TRACE(std::to_string(n) + " iterations");
    std::unique_ptr<hlo::HloModule> module;
    thunks::ThunkProgram program;
    auto exe = CompileAndLoadForCuda(CountedLoop(n), *device_, &module, 1, &program);
    ASSERT_NE(exe, nullptr);
    const thunks::WhileThunk* loop = nullptr;
    for (const thunks::Thunk& t : program.root.thunks) {
      if (t.kind() == thunks::ThunkKind::kWhile) loop = t.As<thunks::WhileThunk>();
    }
    ASSERT_NE(loop, nullptr) << "the loop stays a thunk loop";
    ASSERT_TRUE(loop->trip_count.has_value());
    EXPECT_EQ(*loop->trip_count, n);
    ASSERT_GE(loop->body.thunks.size(), 2u);
    const bool whole = n * static_cast<int64_t>(loop->body.thunks.size()) <= runtime::kMaxUnrolledRecordedThunks;
    EXPECT_EQ(whole, n == 50);

    std::vector<Literal> literals = RandomArgs(*module, 70 + static_cast<uint64_t>(n));
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(*module, literals);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    std::vector<Buffer> args = Upload(literals);
    ASSERT_EQ(args.size(), 2u);
    PerExecution on = CallsPerExecution(*exe, args, true, 2);
    EXPECT_EQ(on.stream_syncs, 1u);
    if (whole) {
      EXPECT_EQ(on.direct, 1u) << on.detail;
      EXPECT_EQ(on.graph_launches, 1u);
    } else {
      // The body one segment, launched per iteration, plus the root's
      // segments around the loop (the state's initial copies).
      const runtime::CommandSegments segments(program);
      ASSERT_EQ(segments.For(loop->body).size(), 1u);
      EXPECT_EQ(on.graph_launches, static_cast<uint64_t>(n) + segments.For(program.root).size()) << on.detail;
      EXPECT_EQ(on.direct, on.graph_launches) << on.detail;
    }
    PerExecution off = CallsPerExecution(*exe, args, false, 1);
    EXPECT_GE(off.direct, 2u * static_cast<uint64_t>(n));
    Report(std::to_string(n) + "-iteration counted loop", on, off);
    ExpectResult(*exe, args, *expected, {1e-4, 1e-4});
  }
}

}  // namespace
}  // namespace kiln::testing
