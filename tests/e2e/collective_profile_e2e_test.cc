// The per-HLO profile's collective section end to end: a module with one
// collective of each kind runs on N = 2 and 4 devices (host devices with
// Gloo, or with KILN_E2E_DEVICE=cuda CUDA devices with NCCL), profiled, and
// each collective's row carries the bytes and bus factor computed by hand
// below (nccl-tests' definitions), with nonzero bandwidths.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>

#include "tests/e2e/spmd_test_util.h"
#include "tools/common/profile_report.h"

namespace kiln::testing {
namespace {

// p is f32[8,4]: 128 bytes on every device.
std::string EveryCollective(int n) {
  const std::string ring = n == 2 ? "{0,1},{1,0}" : "{0,1},{1,2},{2,3},{3,0}";
  return "HloModule m, replica_count=" + std::to_string(n) + "\n" + Reducer("add", "f32", "add") +
         "ENTRY e {\n  p = f32[8,4] parameter(0)\n"
         "  ar = f32[8,4] all-reduce(p), replica_groups={}, to_apply=add\n"
         "  ag = f32[" + std::to_string(8 * n) + ",4] all-gather(p), dimensions={0}, replica_groups={}\n"
         "  rs = f32[" + std::to_string(8 / n) + ",4] reduce-scatter(p), dimensions={0}, replica_groups={}, "
         "to_apply=add\n"
         "  a2a = f32[8,4] all-to-all(p), dimensions={0}, replica_groups={}\n"
         "  cp = f32[8,4] collective-permute(p), source_target_pairs={" + ring + "}\n"
         "  ROOT t = (f32[8,4], f32[" + std::to_string(8 * n) + ",4], f32[" + std::to_string(8 / n) +
         ",4], f32[8,4], f32[8,4]) tuple(ar, ag, rs, a2a, cp)\n}\n";
}

struct Expected {
  int64_t bytes;
  double factor;
};

struct Seen {
  thunks::CollectiveTraffic traffic;
  double mean_us = 0;
};

// Device 0's collective rows (by thunk kind) and its printed report.
void ProfileOnDevices(int n, std::map<std::string, Seen>& rows, std::string& text) {
  auto module = hlo::ParseHloModule(EveryCollective(n));
  ASSERT_TRUE(module.ok()) << module.status().message();
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, SpmdCompileOptions());
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  std::mutex mutex;
  SpmdRunOptions options;
  options.on_profile = [&](int64_t device, const runtime::ExecutionProfile& profile) {
    if (device != 0) return;
    tools::ProfileReport report = tools::BuildProfileReport({profile});
    std::lock_guard<std::mutex> lock(mutex);
    text = tools::FormatProfileReport(report);
    for (const tools::ProfileRow& row : report.rows)
      if (row.collective) rows[std::string(thunks::ThunkKindName(row.kind))] = {*row.collective, row.mean_us()};
  };
  std::vector<std::vector<Literal>> args = DeviceArgs(**module, n, 3);
  for (const StatusOr<Literal>& r : RunOnHostDevices(*artifact, (*module)->entry()->root()->shape(), args, options))
    ASSERT_TRUE(r.ok()) << r.status().message();
}

void ExpectTraffic(int n, const std::map<std::string, Expected>& expected) {
  std::map<std::string, Seen> rows;
  std::string text;
  ProfileOnDevices(n, rows, text);
  SCOPED_TRACE(text);
  ASSERT_EQ(rows.size(), expected.size());
  for (const auto& [kind, want] : expected) {
    SCOPED_TRACE(kind);
    ASSERT_TRUE(rows.count(kind));
    const Seen& seen = rows[kind];
    EXPECT_EQ(seen.traffic.bytes, want.bytes);
    EXPECT_EQ(seen.traffic.devices, n);
    EXPECT_DOUBLE_EQ(seen.traffic.bus_factor, want.factor);
    const double seconds = seen.mean_us * 1e-6;
    EXPECT_GT(seen.traffic.AlgorithmGBps(seconds), 0);
    EXPECT_GT(seen.traffic.BusGBps(seconds), 0);
  }
  EXPECT_NE(text.find("collectives (nccl-tests' bandwidths"), std::string::npos);
}

TEST(CollectiveProfileE2E, TwoDevices) {
  ExpectTraffic(2, {{"all-reduce", {128, 1.0}},
                    {"all-gather", {256, 0.5}},
                    {"reduce-scatter", {128, 0.5}},
                    {"all-to-all", {128, 0.5}},
                    {"collective-permute", {128, 1.0}}});
}

TEST(CollectiveProfileE2E, FourDevices) {
  ExpectTraffic(4, {{"all-reduce", {128, 1.5}},
                    {"all-gather", {512, 0.75}},
                    {"reduce-scatter", {128, 0.75}},
                    {"all-to-all", {128, 0.75}},
                    {"collective-permute", {128, 1.0}}});
}

}  // namespace
}  // namespace kiln::testing
