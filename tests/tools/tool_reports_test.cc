// Tests of the report helpers of tools/common on hand-made profiles, with
// expected figures worked out by hand.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tools/common/latency_stats.h"
#include "tools/common/memory_report.h"
#include "tools/common/profile_report.h"
#include "tools/common/trace_writer.h"

namespace kiln::tools {
namespace {

namespace th = ::kiln::thunks;
using std::chrono::nanoseconds;

runtime::ThunkProfileEntry Entry(const th::ThunkInfo& info, th::ThunkKind kind, int64_t start_ns,
                                 int64_t duration_ns, int depth = 1) {
  return {info.profile_name, &info, 0, kind, depth, nanoseconds(start_ns), nanoseconds(duration_ns)};
}

TEST(ProfileReportTest, AggregatesByThunkAndExcludesControlFlow) {
  th::ThunkInfo dot{"dot.1", {{"dot.1", "dot", ""}}, {2000, 0, 600, 400}};
  th::ThunkInfo body{"fusion.2", {{"add.2", "add", ""}}, {}};
  th::ThunkInfo loop{"while.3", {}, {}};
  // A second thunk with the same name stays a separate row.
  th::ThunkInfo body_twin{"fusion.2", {}, {}};
  runtime::ExecutionProfile run1, run2;
  run1.thunks = {Entry(dot, th::ThunkKind::kGemm, 0, 4000),
                 Entry(body, th::ThunkKind::kKernel, 4000, 1000, 2),
                 Entry(body, th::ThunkKind::kKernel, 5000, 3000, 2),
                 Entry(loop, th::ThunkKind::kWhile, 4000, 4500),
                 Entry(body_twin, th::ThunkKind::kKernel, 8500, 500)};
  run1.total = nanoseconds(10000);
  run2.thunks = {Entry(dot, th::ThunkKind::kGemm, 0, 2000)};
  run2.total = nanoseconds(2500);
  ProfileReport report = BuildProfileReport({run1, run2});

  EXPECT_EQ(report.runs, 2);
  // Leaves: dot 4 + 2 = 6 µs, body 1 + 3 = 4 µs, twin 0.5 µs; the while's
  // 4.5 µs is not added.
  EXPECT_DOUBLE_EQ(report.leaf_total_us, 10.5);
  EXPECT_DOUBLE_EQ(report.wall_total_us, 12.5);
  ASSERT_EQ(report.rows.size(), 4u);
  EXPECT_EQ(report.rows[0].name, "dot.1");
  EXPECT_EQ(report.rows[0].count(), 2);
  EXPECT_DOUBLE_EQ(report.rows[0].total_us, 6);
  EXPECT_DOUBLE_EQ(report.rows[0].median_us(), 3);
  EXPECT_EQ(report.rows[1].info, &body);
  EXPECT_EQ(report.rows[1].depth, 2);
  EXPECT_EQ(report.rows[2].info, &body_twin);
  EXPECT_TRUE(report.rows[3].control_flow);
  EXPECT_EQ(report.rows[3].name, "while.3");

  // 1 GB/s and 1 GFLOP/s: 1 byte or 1 flop per ns.
  th::RooflineTarget target{"test", 1e9, 1e9, 1e10, 1e8};
  std::string text = FormatProfileReport(report, target);
  // dot: 6 / 10.5 = 57.14%; 2000 flops / 3 µs mean = 0.667 GFLOP/s;
  // 1000 bytes / 3 µs = 0.333 GB/s; optimal max(2000 flops / 1e9, 1000 B / 1e9)
  // = 2 µs, 2 / 3 = 66.67% of the roofline.
  EXPECT_NE(text.find("  57.14%   57.14%        2         6.00       3.00       3.00      0.667      0.333"
                      "       2.000     66.67%  gemm"),
            std::string::npos)
      << text;
  // No estimate, no optimal time.
  EXPECT_NE(text.find("   4.76%  100.00%        1         0.50       0.50       0.50          -          -"
                      "           -          -  kernel       fusion.2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("optimal µs % roofline  kind"), std::string::npos) << text;
  EXPECT_NE(text.find("       -        -        1         4.50"), std::string::npos) << text;
  // Total: 5 leaf executions (dot 2, body 2, twin 1), 10.5 µs, 5.25 µs per run; 4000 flops over
  // 10.5 µs = 0.381 GFLOP/s; 2000 bytes = 0.190 GB/s; optimal 2 x 2 µs = 4 µs,
  // 2 µs per run, 4 / 10.5 = 38.10% of the roofline.
  std::string last = text.substr(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_EQ(last,
            " 100.00%                 5        10.50       5.25          -      0.381      0.190"
            "       2.000     38.10%               total                    2 runs (mean per run), "
            "wall 12.50 µs, leaf thunks 84.00% of it, roofline test\n");
}

TEST(ProfileReportTest, RooflineTargetForDevice) {
  unsetenv("KILN_ROOFLINE");
  StatusOr<th::RooflineTarget> cuda = RooflineTargetForDevice(runtime::DeviceKind::kCuda);
  ASSERT_TRUE(cuda.ok());
  EXPECT_EQ(cuda->name, "cuda-h100");
  EXPECT_DOUBLE_EQ(cuda->bytes_per_second, 3.0e12);
  setenv("KILN_ROOFLINE", "bw=1e10,name=laptop", 1);
  StatusOr<th::RooflineTarget> host = RooflineTargetForDevice(runtime::DeviceKind::kHost);
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->name, "laptop");
  EXPECT_DOUBLE_EQ(host->bytes_per_second, 1e10);
  EXPECT_DOUBLE_EQ(host->flops_per_second, 5.0e10);  // the host default
  setenv("KILN_ROOFLINE", "bw", 1);
  EXPECT_FALSE(RooflineTargetForDevice(runtime::DeviceKind::kHost).ok());
  unsetenv("KILN_ROOFLINE");
}

TEST(ProfileReportTest, DescribeHloOpsAbbreviates) {
  th::ThunkInfo info;
  EXPECT_EQ(DescribeHloOps(&info), "");
  info.hlo = {{"add.1", "add", ""}, {"d", "dot", ""}};
  EXPECT_EQ(DescribeHloOps(&info), "add.1, d=dot");
  info.hlo.clear();
  for (int i = 0; i < 20; ++i) info.hlo.push_back({"multiply." + std::to_string(i), "multiply", ""});
  // "multiply.0, " is 12 characters: five names fit in 60, fifteen remain.
  EXPECT_EQ(DescribeHloOps(&info),
            "multiply.0, multiply.1, multiply.2, multiply.3, multiply.4, ... (+15 more)");
}

TEST(LatencyStatsTest, MinMedianMeanP90Max) {
  LatencyStats s = ComputeLatencyStats({5, 1, 4, 2, 3, 10, 6, 7, 9, 8});
  EXPECT_EQ(s.count, 10);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.p90, 9);  // nearest rank ceil(0.9 * 10) = 9th
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_EQ(FormatLatencyStats(ComputeLatencyStats({2})),
            "latency (µs) over 1 iteration: min 2.00  median 2.00  mean 2.00  p90 2.00  max 2.00");
}

TEST(MemoryReportTest, FormatBytes) {
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(4096), "4.0 KiB");
  EXPECT_EQ(FormatBytes(3 * 1024 * 1024 / 2), "1.5 MiB");
}

TEST(TraceWriterTest, EscapesAndLaysOutRuns) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  th::ThunkInfo info{"k\"1", {{"add.1", "add", "jit(f)/add"}}, {4, 0, 32, 16}};
  runtime::ExecutionProfile run;
  run.thunks = {Entry(info, th::ThunkKind::kKernel, 1500, 2250)};
  run.total = nanoseconds(5000);
  std::string json = ChromeTraceJson({run, run}, "host");
  EXPECT_NE(json.find("\"name\":\"kiln host\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0"), std::string::npos);
  // Run 0 at 1.5 µs; run 1 starts where run 0 ended (5 µs): 6.5 µs.
  EXPECT_NE(json.find("\"name\":\"k\\\"1\",\"cat\":\"thunk\",\"ph\":\"X\",\"ts\":1.500,\"dur\":2.250"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"ts\":6.500,\"dur\":2.250"), std::string::npos) << json;
  EXPECT_NE(json.find("\"op_name\":\"jit(f)/add\""), std::string::npos) << json;
}

}  // namespace
}  // namespace kiln::tools
