// CUDA program streams end to end (docs/runtime_hal.md, "Program streams";
// runtime/cuda_program_streams.h) on the emulated CUDA device: modules
// compiled with --streams=1 and --streams=4, loaded once and executed
// several times with CUDA graphs on and off (the first execution issues
// directly, the second captures, later ones replay), give the reference
// evaluator's results. Two independent GEMMs on two program streams run on
// two CUstreams: their profile rows carry their program streams and overlap
// in the H100 timing model's time, with graphs off (cuStreamWaitEvent
// orders the streams) and on (the replayed graph has a branch per stream);
// on one stream they do not. CUDA only: skipped on the host registration.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/runtime.h"
#include "tests/e2e/e2e_test_util.h"
#include "tests/support/emulator_transfers.h"
#include "thunks/streams.h"

namespace kiln::testing {
namespace {

using runtime::Buffer;

// Two GEMMs on disjoint inputs, a kernel independent of both, and sums
// that join them; every intermediate is also a result, so buffer
// assignment cannot give two branches the same bytes.
constexpr char kForkJoin[] = R"(HloModule fork_join
ENTRY e {
  a = f32[48,32] parameter(0)
  b = f32[32,40] parameter(1)
  c = f32[48,24] parameter(2)
  d = f32[24,40] parameter(3)
  x = f32[48,40] parameter(4)
  dot1 = f32[48,40] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot2 = f32[48,40] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[48,40] tanh(x)
  s1 = f32[48,40] add(dot1, t)
  s2 = f32[48,40] multiply(dot2, s1)
  ROOT r = (f32[48,40], f32[48,40], f32[48,40], f32[48,40]) tuple(s1, s2, dot1, dot2)
})";

// Two large independent GEMMs (the modeled time is theirs).
constexpr char kTwoGemms[] = R"(HloModule two_gemms
ENTRY e {
  a = f32[256,256] parameter(0)
  b = f32[256,256] parameter(1)
  c = f32[256,256] parameter(2)
  d = f32[256,256] parameter(3)
  dot1 = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot2 = f32[256,256] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[256,256], f32[256,256]) tuple(dot1, dot2)
})";

// A profile row's modeled time span.
struct Interval {
  double start_us = 0, end_us = 0;
  int program_stream = -1;
};

// Two intervals overlap when each starts before the other ends.
bool Overlap(const Interval& a, const Interval& b) { return a.start_us < b.end_us && b.start_us < a.end_us; }

class CudaProgramStreamsE2ETest : public CudaOnlyE2ETest {
 protected:
  // One execution on host copies of `args`.
  StatusOr<runtime::ExecutionResult> Execute(const runtime::LoadedExecutable& exe, const std::vector<Literal>& args,
                                             bool graphs, bool profile) {
    std::vector<Buffer> buffers;
    for (const Literal& arg : args) {
      KILN_ASSIGN_OR_RETURN(std::vector<Buffer> leaves, tools::LiteralToBuffers(arg));
      for (Buffer& b : leaves) buffers.push_back(std::move(b));
    }
    runtime::ExecuteOptions options;
    options.cuda_graphs = graphs;
    options.profile = profile;
    options.host_outputs = true;
    return exe.ExecuteSync(buffers, options);
  }

  void ExpectMatchesEvaluator(int streams, bool graphs) {
    std::unique_ptr<hlo::HloModule> module;
    thunks::ThunkProgram program;
    auto exe = CompileAndLoadForCuda(kForkJoin, *device_, &module, streams, &program);
    ASSERT_NE(exe, nullptr);
    if (streams > 1) {
      EXPECT_GE(program.num_streams, 2) << thunks::StreamSummary(program);
      EXPECT_GE(program.num_events, 1) << thunks::StreamSummary(program);
    }
    for (int run = 0; run < 4; ++run) {
      std::vector<Literal> args = RandomArgs(*module, 300 + run);
      StatusOr<Literal> expected = hlo::Evaluator().Evaluate(*module, args);
      ASSERT_TRUE(expected.ok()) << expected.status().message();
      StatusOr<runtime::ExecutionResult> r = Execute(*exe, args, graphs, /*profile=*/run == 3);
      ASSERT_TRUE(r.ok()) << r.status().message();
      StatusOr<Literal> actual = tools::BuffersToLiteral(exe->result_shape(), r->outputs);
      ASSERT_TRUE(actual.ok()) << actual.status().message();
      Status same = CompareValues(*actual, *expected, "result", CompareOptions{1e-4, 1e-4});
      EXPECT_TRUE(same.ok()) << "streams=" << streams << " graphs=" << graphs << " run " << run << ": "
                             << same.message();
    }
  }

  // The GEMM rows of a profile.
  static std::vector<Interval> Gemms(const runtime::ExecutionProfile& profile) {
    std::vector<Interval> out;
    for (const runtime::ThunkProfileEntry& e : profile.thunks) {
      if (e.kind != thunks::ThunkKind::kGemm) continue;
      double start = static_cast<double>(e.start.count()) / 1e3;
      out.push_back({start, start + static_cast<double>(e.duration.count()) / 1e3, e.program_stream});
    }
    return out;
  }

  // The third profiled execution of kTwoGemms with `streams` (with graphs
  // on, a replay: no kernel or library call goes through the API).
  runtime::ExecutionProfile ProfileTwoGemms(int streams, bool graphs) {
    std::unique_ptr<hlo::HloModule> module;
    thunks::ThunkProgram program;
    auto exe = CompileAndLoadForCuda(kTwoGemms, *device_, &module, streams, &program);
    EXPECT_NE(exe, nullptr);
    if (!exe) return {};
    std::vector<Literal> args = RandomArgs(*module, 7);
    runtime::ExecutionProfile profile;
    for (int run = 0; run < 3; ++run) {
      std::optional<KilnEmuApiCalls> before = EmulatorApiCalls();
      StatusOr<runtime::ExecutionResult> r = Execute(*exe, args, graphs, /*profile=*/true);
      EXPECT_TRUE(r.ok()) << r.status().message();
      if (!r.ok()) return {};
      std::optional<KilnEmuApiCalls> after = EmulatorApiCalls();
      if (run == 2 && graphs && before && after) {
        EXPECT_EQ(after->library_calls, before->library_calls) << "not replayed";
        EXPECT_GE(after->graph_launches - before->graph_launches, 1u);
      }
      profile = std::move(r->profile);
    }
    EXPECT_TRUE(profile.modeled) << profile.time_source;
    return profile;
  }
};

TEST_F(CudaProgramStreamsE2ETest, OneStreamGraphsOff) { ExpectMatchesEvaluator(1, false); }
TEST_F(CudaProgramStreamsE2ETest, OneStreamGraphsOn) { ExpectMatchesEvaluator(1, true); }
TEST_F(CudaProgramStreamsE2ETest, FourStreamsGraphsOff) { ExpectMatchesEvaluator(4, false); }
TEST_F(CudaProgramStreamsE2ETest, FourStreamsGraphsOn) { ExpectMatchesEvaluator(4, true); }

TEST_F(CudaProgramStreamsE2ETest, IndependentGemmsOverlapOnTwoStreams) {
  for (bool graphs : {false, true}) {
    SCOPED_TRACE(graphs ? "graphs on" : "graphs off");
    runtime::ExecutionProfile two = ProfileTwoGemms(2, graphs);
    std::vector<Interval> g = Gemms(two);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_NE(g[0].program_stream, g[1].program_stream);
    EXPECT_TRUE(Overlap(g[0], g[1]))
        << g[0].start_us << "-" << g[0].end_us << " vs " << g[1].start_us << "-" << g[1].end_us;
    const double sum_us = (g[0].end_us - g[0].start_us) + (g[1].end_us - g[1].start_us);
    EXPECT_LT(static_cast<double>(two.total.count()) / 1e3, sum_us);

    runtime::ExecutionProfile one = ProfileTwoGemms(1, graphs);
    std::vector<Interval> h = Gemms(one);
    ASSERT_EQ(h.size(), 2u);
    EXPECT_EQ(h[0].program_stream, 0);
    EXPECT_EQ(h[1].program_stream, 0);
    EXPECT_FALSE(Overlap(h[0], h[1]));
    EXPECT_GE(static_cast<double>(one.total.count()) / 1e3, sum_us * 0.999);
  }
}

}  // namespace
}  // namespace kiln::testing
