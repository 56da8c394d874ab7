// Async collectives overlap compute on CUDA (runtime/cuda_comm_stream.h),
// on 2 emulated CUDA devices with the emulator's NCCL double: an
// all-reduce-start, an independent GEMM and the all-reduce-done give the
// reference evaluator's results with CUDA graphs off and on, and the
// execution's modeled time (the H100 timing model's, docs/gpu_timing_model.md)
// is the longer of the exchange and the GEMM, not their sum as with the
// same module's synchronous all-reduce. CUDA only: skipped on the host
// registration.
//
// The hand-derived expectation, from the model's per-op times: the NCCL
// double models an all-reduce of S bytes on n devices as a launch (4 us),
// 2(n-1) ring steps of 1 us and 2(n-1)/n * S bus bytes at 450 GB/s; for
// S = 4 MiB on 2 devices that is 6 + 4194304 / 450e3 = 15.32 us. The GEMM
// (t_gemm, its profile row) runs beside the exchange; a 4 MiB
// device-to-device copy (read and write at 3 TB/s after a 2 us fixed cost)
// is 4.80 us, what the start costs the compute stream if it must copy its
// source. The done copies nothing: its result is the start's buffer, which
// NCCL fills in place (compiler/pipeline/points_to.h). So:
//   synchronous:  total >= 15.32 + t_gemm
//   async:        total = start + max(15.32, t_gemm)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <mutex>
#include <string>

#include "tests/e2e/spmd_test_util.h"

namespace kiln::testing {
namespace {

constexpr int64_t kElements = 1 << 20;  // f32: 4 MiB
constexpr double kAllReduceUs = 6.0 + 4194304.0 / 450e3;
constexpr double kCopyUs = 2.0 + 2 * 4194304.0 / 3e6;  // a 4 MiB device-to-device copy

std::string Module(bool async) {
  const std::string v = "f32[" + std::to_string(kElements) + "]";
  const std::string exchange =
      async ? "  ars = " + v + " all-reduce-start(p), replica_groups={}, to_apply=add\n"
                  "  d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                  "  ar = " + v + " all-reduce-done(ars)\n"
            : "  ar = " + v + " all-reduce(p), replica_groups={}, to_apply=add\n"
              "  d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  return "HloModule m, replica_count=2\n" + Reducer("add", "f32", "add") + "ENTRY e {\n  p = " + v +
         " parameter(0)\n  a = f32[256,256] parameter(1)\n  b = f32[256,256] parameter(2)\n" + exchange +
         "  ROOT r = (" + v + ", f32[256,256]) tuple(ar, d)\n}\n";
}

struct Outcome {
  std::string mismatch;  // "" when every device matches the evaluator
  runtime::ExecutionProfile profile;  // device 0's last execution
};

// Three executions on each of the 2 devices (with graphs: issue, capture,
// replay); the last one's results against the evaluator's.
Outcome RunModule(bool async, bool graphs) {
  Outcome out;
  auto module = hlo::ParseHloModule(Module(async));
  if (!module.ok()) return {"parse: " + module.status().message(), {}};
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, SpmdCompileOptions());
  if (!artifact.ok()) return {"compile: " + artifact.status().message(), {}};
  std::vector<std::vector<Literal>> args = DeviceArgs(**module, 2, 11);
  StatusOr<std::vector<Literal>> expected = EvaluateOnGrid(**module, *artifact, args);
  if (!expected.ok()) return {"evaluator: " + expected.status().message(), {}};
  std::mutex mu;
  SpmdRunOptions options;
  options.iterations = 3;
  options.cuda_graphs = graphs;
  options.on_profile = [&](int64_t device, const runtime::ExecutionProfile& p) {
    std::lock_guard<std::mutex> lock(mu);
    if (device == 0) out.profile = p;
  };
  std::vector<StatusOr<Literal>> actual =
      RunOnHostDevices(*artifact, (*module)->entry()->root()->shape(), args, options);
  for (size_t d = 0; d < actual.size() && out.mismatch.empty(); ++d) {
    if (!actual[d].ok()) {
      out.mismatch = "device " + std::to_string(d) + ": " + actual[d].status().message();
      continue;
    }
    Status same = CompareValues(*actual[d], (*expected)[d], "result", CompareOptions{1e-4, 1e-4});
    if (!same.ok()) out.mismatch = "device " + std::to_string(d) + ": " + same.message();
  }
  return out;
}

double Us(std::chrono::nanoseconds t) { return static_cast<double>(t.count()) / 1e3; }

// The modeled duration of the profile's rows of `kind` (summed).
double RowsUs(const runtime::ExecutionProfile& profile, thunks::ThunkKind kind) {
  double us = 0;
  for (const runtime::ThunkProfileEntry& e : profile.thunks)
    if (e.kind == kind && e.depth == 1) us += Us(e.duration);
  return us;
}

class CudaCollectiveOverlapE2ETest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (E2EDeviceKind() != runtime::DeviceKind::kCuda) GTEST_SKIP() << "needs KILN_E2E_DEVICE=cuda";
  }
};

TEST_P(CudaCollectiveOverlapE2ETest, AsyncAllReduceOverlapsAGemm) {
  const bool graphs = GetParam();
  Outcome sync = RunModule(false, graphs);
  ASSERT_EQ(sync.mismatch, "");
  Outcome async = RunModule(true, graphs);
  ASSERT_EQ(async.mismatch, "");
  ASSERT_TRUE(sync.profile.modeled) << sync.profile.time_source;
  ASSERT_TRUE(async.profile.modeled) << async.profile.time_source;

  // The synchronous all-reduce's row is the NCCL double's model, by hand.
  EXPECT_NEAR(RowsUs(sync.profile, thunks::ThunkKind::kAllReduce), kAllReduceUs, 0.05);
  const double gemm_us = RowsUs(async.profile, thunks::ThunkKind::kGemm);
  ASSERT_GT(gemm_us, 1.0);
  EXPECT_NEAR(RowsUs(sync.profile, thunks::ThunkKind::kGemm), gemm_us, 0.05);

  // The start's row is its issue on the compute stream: nothing, or the
  // copy of its source when compute before the done might touch it (not
  // here: p has no other user). No copy runs at all: the done's result is
  // the start's buffer, which is the tuple's output leaf.
  const double start_us = RowsUs(async.profile, thunks::ThunkKind::kAllReduce);
  const double copies_us = RowsUs(async.profile, thunks::ThunkKind::kCopy);
  EXPECT_TRUE(std::abs(start_us) < 0.01 || std::abs(start_us - kCopyUs) < 0.01) << start_us;
  EXPECT_EQ(copies_us, 0.0);
  int copy_rows = 0;
  for (const runtime::ThunkProfileEntry& e : async.profile.thunks) copy_rows += e.kind == thunks::ThunkKind::kCopy;
  EXPECT_EQ(copy_rows, 0);

  const double sync_us = Us(sync.profile.total), async_us = Us(async.profile.total);
  const double overlapped_us = start_us + std::max(kAllReduceUs, gemm_us) + copies_us;
  std::string rows;
  for (const runtime::ThunkProfileEntry& e : async.profile.thunks)
    rows += " " + e.name + "@" + std::to_string(Us(e.start)) + "+" + std::to_string(Us(e.duration));
  SCOPED_TRACE("async rows:" + rows);
  SCOPED_TRACE("modeled: synchronous " + std::to_string(sync_us) + " us, async " + std::to_string(async_us) +
               " us, GEMM " + std::to_string(gemm_us) + " us, expected async " + std::to_string(overlapped_us) +
               " us");
  EXPECT_GE(sync_us, 0.999 * (kAllReduceUs + gemm_us));
  EXPECT_LT(async_us, sync_us);
  EXPECT_LE(async_us, sync_us - std::min(kAllReduceUs, gemm_us) + start_us + copies_us + 0.05);
  // The hand-derived figure (the done's wait and the event records cost
  // nothing in the model).
  EXPECT_NEAR(async_us, overlapped_us, 0.05);
  std::cout << "modeled: synchronous " << sync_us << " us, async " << async_us << " us (GEMM " << gemm_us
            << " us, all-reduce " << kAllReduceUs << " us)\n";
}

INSTANTIATE_TEST_SUITE_P(Graphs, CudaCollectiveOverlapE2ETest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "On" : "Off"; });

}  // namespace
}  // namespace kiln::testing
