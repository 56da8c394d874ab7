// Tests of the report helpers of tools/common on hand-made profiles, with
// expected figures worked out by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "tools/common/json_writer.h"
#include "tools/common/latency_stats.h"
#include "tools/common/memory_report.h"
#include "tools/common/profile_json.h"
#include "tools/common/profile_report.h"
#include "tools/common/trace_writer.h"

namespace kiln::tools {
namespace {

namespace th = ::kiln::thunks;
using std::chrono::nanoseconds;

runtime::ThunkProfileEntry Entry(const th::ThunkInfo& info, th::ThunkKind kind, int64_t start_ns,
                                 int64_t duration_ns, int depth = 1,
                                 std::optional<KilnEmuCounters> counters = std::nullopt) {
  return {info.profile_name, &info,    0, kind, depth, nanoseconds(start_ns), nanoseconds(duration_ns),
          counters};
}

// Two modeled and sampled runs as the CUDA emulator's timing model reports
// them: a kernel counted by the emulator in both, a copy without counters
// in the first.
struct ModeledRuns {
  // Estimate: 2000 flops (2 µs at 1 GFLOP/s), 1000 bytes (1 µs at 1 GB/s).
  th::ThunkInfo kernel{"fusion.1", {{"add.1", "add", ""}}, {2000, 0, 600, 400}};
  // Estimate: 1000 bytes, 1 µs.
  th::ThunkInfo copy{"copy.2", {}, {0, 0, 500, 500}};
  std::vector<runtime::ExecutionProfile> runs;
  ModeledRuns() {
    KilnEmuCounters c{};
    c.launches = 1;
    c.model_ns = 3000;
    c.optimal_ns = 1500;
    c.sampled_launches = 1;
    c.global_unique_load_sectors = 100;
    c.global_unique_store_sectors = 50;
    c.global_unique_atomic_sectors = 10;  // read and written: 20 sectors of traffic
    runtime::ExecutionProfile run1, run2;
    run1.thunks = {Entry(kernel, th::ThunkKind::kKernel, 0, 3000, 1, c),
                   Entry(copy, th::ThunkKind::kCopy, 3000, 1000)};
    run1.total = nanoseconds(5000);
    run2.thunks = {Entry(kernel, th::ThunkKind::kKernel, 0, 5000, 1, c)};
    run2.total = nanoseconds(6000);
    for (runtime::ExecutionProfile* run : {&run1, &run2}) {
      run->time_source = "modeled: H100 timing model on test";
      run->modeled = true;
      run->sampled = true;
    }
    runs = {run1, run2};
  }
};

TEST(ProfileReportTest, ModeledTimesUseTheModelsOptimalTime) {
  ModeledRuns m;
  setenv("KILN_EMU_SAMPLE", "3", 1);
  ProfileReport report = BuildProfileReport(m.runs);
  EXPECT_TRUE(report.modeled);
  EXPECT_TRUE(report.sampled);
  ASSERT_EQ(report.rows.size(), 2u);
  // Counters summed over both runs: optimal 3000 ns over 2 executions, and
  // (200 + 100 + 2 x 20) sectors x 32 bytes / 2 executions.
  EXPECT_DOUBLE_EQ(report.rows[0].model_optimal_us(), 1.5);
  EXPECT_DOUBLE_EQ(report.rows[0].dram_bytes(), 5440);
  EXPECT_DOUBLE_EQ(report.rows[1].model_optimal_us(), 0);
  th::RooflineTarget target{"test", 1e9, 1e9, 1e10, 1e8};
  std::string text = FormatProfileReport(report, target);
  // fusion.1: 8 of 9 µs = 88.89%, mean 4 µs; 2000 flops / 4 µs = 0.5
  // GFLOP/s, 1000 bytes / 4 µs = 0.25 GB/s; optimal: the model's 1.5 µs
  // (not the estimate's 2 µs), 1.5 / 4 = 37.50%.
  EXPECT_NE(text.find("  88.89%   88.89%        2         8.00       4.00       4.00      0.500      0.250"
                      "       1.500     37.50%  kernel       fusion.1                 add.1\n"),
            std::string::npos)
      << text;
  // copy.2 has no counters: the estimate's 1 µs, 100% of its 1 µs.
  EXPECT_NE(text.find("  11.11%  100.00%        1         1.00       1.00       1.00          -      1.000"
                      "       1.000    100.00%  copy         copy.2\n"),
            std::string::npos)
      << text;
  // Total optimal: 2 x 1.5 + 1 = 4 µs, 2 per run, 4 / 9 = 44.44%.
  EXPECT_NE(text.find("       2.000     44.44%               total                    2 runs (mean per run), "
                      "wall 11.00 µs, leaf thunks 81.82% of it, roofline H100 timing model, else test\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  times are modeled by the H100 timing model, not measured; "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  results not computed (sampled emulation: KILN_EMU_SAMPLE=3): times and "
                      "counters are extrapolated from a sample of each launch's blocks\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("clock, not measured GPU time"), std::string::npos) << text;
  unsetenv("KILN_EMU_SAMPLE");
}

TEST(ProfileJsonTest, ModeledSampledRuns) {
  ModeledRuns m;
  setenv("KILN_EMU_SAMPLE", "3", 1);
  th::RooflineTarget target{"test", 1e9, 1e9, 1e10, 1e8};
  std::string json = ProfileJson(BuildProfileReport(m.runs), "cuda: test", target);
  unsetenv("KILN_EMU_SAMPLE");
  // Per run: leaf thunks 9 / 2 = 4.5 µs, executions 11 / 2 = 5.5 µs. Per
  // execution of fusion.1: 1 launch (1 sampled), 5440 DRAM bytes, optimal
  // 1.5 µs (model) and 2 µs (estimate). copy.2: no counters, no model.
  EXPECT_EQ(json, R"json({
  "device": "cuda: test",
  "time_source": "modeled: H100 timing model on test",
  "modeled": true,
  "results_computed": false,
  "note": "results not computed (sampled emulation: KILN_EMU_SAMPLE=3)",
  "runs": 2,
  "total_us": 4.500,
  "wall_us": 5.500,
  "roofline_target": "test",
  "thunks": [
    {
      "name": "fusion.1",
      "kind": "kernel",
      "control_flow": false,
      "depth": 1,
      "count": 2,
      "mean_us": 4.000,
      "median_us": 4.000,
      "total_us": 8.000,
      "optimal_us": 1.500,
      "estimated_optimal_us": 2.000,
      "modeled": true,
      "flops": 2000,
      "bytes": 1000,
      "hlo": [
        "add.1"
      ],
      "launches": 1,
      "dram_bytes": 5440,
      "sampled_launches": 1
    },
    {
      "name": "copy.2",
      "kind": "copy",
      "control_flow": false,
      "depth": 1,
      "count": 1,
      "mean_us": 1.000,
      "median_us": 1.000,
      "total_us": 1.000,
      "optimal_us": null,
      "estimated_optimal_us": 1.000,
      "modeled": true,
      "flops": null,
      "bytes": 1000,
      "hlo": []
    }
  ]
}
)json");
}

TEST(ProfileJsonTest, MeasuredHostRunHasNoModel) {
  th::ThunkInfo kernel{"fusion.1", {}, {}};
  runtime::ExecutionProfile run;
  run.thunks = {Entry(kernel, th::ThunkKind::kKernel, 0, 2500)};
  run.total = nanoseconds(3000);
  std::string json = ProfileJson(BuildProfileReport({run}), "host (2 threads)", th::HostRooflineTarget());
  for (const char* field : {"\"time_source\": \"measured\"", "\"modeled\": false", "\"results_computed\": true",
                            "\"total_us\": 2.500", "\"wall_us\": 3.000", "\"optimal_us\": null",
                            "\"estimated_optimal_us\": null", "\"mean_us\": 2.500"})
    EXPECT_NE(json.find(field), std::string::npos) << field << " in " << json;
  EXPECT_EQ(json.find("\"note\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"launches\""), std::string::npos) << json;
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
  EXPECT_EQ(JsonWriter::Escape("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
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

// A multi-stream program's profile: one track per program stream, named
// "stream S.P" beside its Device stream's "stream S" (program stream 0),
// and each thunk on the track of its program stream.
TEST(TraceWriterTest, OneTrackPerProgramStream) {
  th::ThunkInfo g0{"g0", {}, {}}, g2{"g2", {}, {}}, g3{"g3", {}, {}};
  runtime::ExecutionProfile run;
  run.thunks = {Entry(g0, th::ThunkKind::kGemm, 0, 1000), Entry(g2, th::ThunkKind::kGemm, 0, 1000),
                Entry(g3, th::ThunkKind::kKernel, 500, 1000)};
  for (runtime::ThunkProfileEntry& e : run.thunks) e.stream = 1;
  run.thunks[1].program_stream = 2;
  run.thunks[2].program_stream = 3;
  run.total = nanoseconds(2000);
  const std::string json = ChromeTraceJson({run}, "cuda");
  auto track_tid = [&](const std::string& name) {
    std::smatch m;
    const std::regex re("\"tid\":([0-9]+),\"args\":\\{\"name\":\"" + name + "\"\\}");
    return std::regex_search(json, m, re) ? m[1].str() : std::string("none");
  };
  auto thunk_tid = [&](const std::string& name) {
    std::smatch m;
    const std::regex re("\"name\":\"" + name + "\",\"cat\":\"thunk\"[^}]*\"tid\":([0-9]+)");
    return std::regex_search(json, m, re) ? m[1].str() : std::string("none");
  };
  const std::string s1 = track_tid("stream 1"), s12 = track_tid("stream 1\\.2"), s13 = track_tid("stream 1\\.3");
  EXPECT_NE(s1, "none") << json;
  EXPECT_NE(s12, "none") << json;
  EXPECT_NE(s13, "none") << json;
  EXPECT_NE(s1, s12);
  EXPECT_NE(s12, s13);
  EXPECT_EQ(track_tid("stream 1\\.1"), "none") << "no thunk ran on program stream 1";
  EXPECT_EQ(thunk_tid("g0"), s1) << json;
  EXPECT_EQ(thunk_tid("g2"), s12) << json;
  EXPECT_EQ(thunk_tid("g3"), s13) << json;
}

}  // namespace
}  // namespace kiln::tools
