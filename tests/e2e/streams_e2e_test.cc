// Multi-stream programs end to end: modules with independent branches
// compiled with --streams=1 and --streams=4 give the reference evaluator's
// results, run after run (the host runs the streams concurrently on four
// threads; CUDA on one CUstream per program stream with events between
// them, cuda_program_streams_e2e_test covering graphs and overlap). The
// compiled program really uses several streams with events between them,
// and the host profile puts thunks on more than one program stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "runtime/runtime.h"
#include "tests/e2e/e2e_test_util.h"
#include "thunks/streams.h"
#include "thunks/validate.h"

namespace kiln::testing {
namespace {

// Two GEMMs on disjoint inputs, an elementwise kernel independent of both
// and a reduction of one of them; the root adds it all up. The GEMMs'
// results are results too, so buffer assignment cannot give both the same
// bytes (which would order them).
constexpr char kBranches[] = R"(HloModule branches
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  a = f32[96,64] parameter(0)
  b = f32[64,80] parameter(1)
  c = f32[96,48] parameter(2)
  d = f32[48,80] parameter(3)
  x = f32[96,80] parameter(4)
  dot1 = f32[96,80] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot2 = f32[96,80] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[96,80] tanh(x)
  z = f32[] constant(0)
  rows = f32[96] reduce(x, z), dimensions={1}, to_apply=add
  rb = f32[96,80] broadcast(rows), dimensions={0}
  s1 = f32[96,80] add(dot1, t)
  s2 = f32[96,80] multiply(dot2, rb)
  ROOT r = (f32[96,80], f32[96,80], f32[96,80], f32[96,80]) tuple(s1, s2, dot1, dot2)
})";

// A loop and a GEMM that do not depend on each other.
constexpr char kLoopBesideGemm[] = R"(HloModule loop_beside_gemm
cond {
  p = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[256] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[256] broadcast(h), dimensions={}
  v1 = f32[256] multiply(v, hb)
  ROOT t = (s32[], f32[256]) tuple(i1, v1)
}
ENTRY e {
  v = f32[256] parameter(0)
  a = f32[64,64] parameter(1)
  b = f32[64,64] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[256]) tuple(zero, v)
  w = (s32[], f32[256]) while(init), condition=cond, body=body
  out = f32[256] get-tuple-element(w), index=1
  dot = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[256], f32[64,64]) tuple(out, dot)
})";

class StreamsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    // Four host threads (read when the host backend is created), so that
    // the streams run concurrently even on a two-core machine.
    setenv("KILN_HOST_THREADS", "4", 1);
    auto device = runtime::Device::Create(E2EDeviceKind());
    unsetenv("KILN_HOST_THREADS");
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }

  // Compiles `text` with `streams` and checks `runs` runs on fresh random
  // arguments against the evaluator; returns the artifact's program.
  thunks::ThunkProgram ExpectMatches(const std::string& text, int streams, int runs) {
    auto module = hlo::ParseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) return {};
    tools::CompileAndRunOptions options{.profile = true, .streams = streams};
    compiler::CompileOptions copts;
    copts.host = E2EDeviceKind() == runtime::DeviceKind::kHost;
    copts.cuda = !copts.host;
    copts.streams = streams;
    copts.tf32 = false;
    StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, copts);
    EXPECT_TRUE(artifact.ok()) << artifact.status().message();
    if (!artifact.ok()) return {};
    // The emulator runs work in issue order: two runs say as much as many.
    if (E2EDeviceKind() != runtime::DeviceKind::kHost) runs = std::min(runs, 2);
    for (int run = 0; run < runs; ++run) {
      std::vector<Literal> args = RandomArgs(**module, 100 + run);
      StatusOr<Literal> expected = hlo::Evaluator().Evaluate(**module, args);
      EXPECT_TRUE(expected.ok()) << expected.status().message();
      StatusOr<tools::DeviceRunResult> actual = tools::RunArtifact(*artifact, args, *device_, options);
      EXPECT_TRUE(actual.ok()) << actual.status().message();
      if (!expected.ok() || !actual.ok()) break;
      Status same = CompareValues(actual->result, *expected, "result", CompareOptions{1e-4, 1e-4});
      EXPECT_TRUE(same.ok()) << "streams=" << streams << " run " << run << ": " << same.message();
      if (E2EDeviceKind() == runtime::DeviceKind::kHost) program_streams_seen_ = ProgramStreams(*actual);
    }
    return artifact->program;
  }

  static std::set<int> ProgramStreams(const tools::DeviceRunResult& run) {
    std::set<int> streams;
    for (const runtime::ThunkProfileEntry& e : run.profile.thunks) streams.insert(e.program_stream);
    return streams;
  }

  std::unique_ptr<runtime::Device> device_;
  std::set<int> program_streams_seen_;
};

TEST_F(StreamsE2E, IndependentBranchesOneStream) {
  thunks::ThunkProgram p = ExpectMatches(kBranches, 1, 2);
  EXPECT_EQ(p.num_streams, 1);
  EXPECT_EQ(p.num_events, 0);
}

TEST_F(StreamsE2E, IndependentBranchesFourStreams) {
  thunks::ThunkProgram p = ExpectMatches(kBranches, 4, 30);
  EXPECT_GE(p.num_streams, 2) << thunks::StreamSummary(p);
  EXPECT_TRUE(thunks::ValidateProgram(p).ok());
  if (E2EDeviceKind() == runtime::DeviceKind::kHost) {
    // The host program reduces `rows` in a kernel of its own, which the
    // second GEMM's consumer waits for (on CUDA it fuses into that consumer).
    EXPECT_GE(p.num_events, 1) << thunks::StreamSummary(p);
    EXPECT_GE(program_streams_seen_.size(), 2u);
  }
}

TEST_F(StreamsE2E, LoopBesideGemm) {
  ExpectMatches(kLoopBesideGemm, 1, 1);
  thunks::ThunkProgram p = ExpectMatches(kLoopBesideGemm, 4, 20);
  EXPECT_GE(p.num_streams, 2) << thunks::StreamSummary(p);
}

}  // namespace
}  // namespace kiln::testing
