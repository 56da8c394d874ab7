// Collectives across processes: SPMD modules compiled once, written as a
// .bef with every device's random inputs and the reference evaluator's
// results as .npy files, then run by scripts/launch_local.sh as P bef-run
// processes over the loopback (--coordinator=127.0.0.1:PORT, or a file
// store), each process checking its own devices' results
// (--expected_output). Each collective on 2 and 4 processes, 2 processes of
// 2 devices each (corpus_spmd_e2e_test runs every corpus SPMD module as
// processes); a process killed mid-run makes
// its peer fail with one line within the timeout, and a process that never
// starts makes the others fail naming it. Every child is waited for with a
// deadline.
#include <gtest/gtest.h>

#include "tests/e2e/launched_spmd_util.h"

namespace kiln::testing {
namespace {

// "" when every device of `module`, run as `run.processes` processes, matches
// the evaluator; else what went wrong.
std::string CompareProcessesWithEvaluator(const hlo::HloModule& module, const ProcessRun& run, uint64_t seed = 1) {
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(module, {});
  if (!artifact.ok()) return "compile: " + artifact.status().message();
  std::vector<std::vector<Literal>> args = DeviceArgs(module, artifact->program.device_count(), seed);
  StatusOr<std::vector<Literal>> expected = EvaluateOnGrid(module, *artifact, args);
  if (!expected.ok()) return "evaluator: " + expected.status().message();
  return CompareLaunchedProcesses(*artifact, args, *expected, run);
}

void ExpectProcessesMatchEvaluator(const std::string& text, const ProcessRun& run, uint64_t seed = 1) {
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ(CompareProcessesWithEvaluator(**module, run, seed), "") << text;
}

TEST(MultiProcessE2E, AllReduceOnTwoAndFourProcesses) {
  for (int p : {2, 4}) {
    SCOPED_TRACE(p);
    ExpectProcessesMatchEvaluator("HloModule m, replica_count=" + std::to_string(p) + "\n" +
                                      Reducer("add", "f32", "add") + R"(
ENTRY e {
  p = f32[3,5] parameter(0)
  ROOT ar = f32[3,5] all-reduce(p), replica_groups={}, to_apply=add
})",
                                  {.processes = p});
  }
  ExpectProcessesMatchEvaluator("HloModule m, replica_count=4\n" + Reducer("red", "s32", "maximum") + R"(
ENTRY e {
  p = s32[7] parameter(0)
  ROOT ar = s32[7] all-reduce(p), replica_groups={{0,2},{1,3}}, to_apply=red
})",
                                {.processes = 4});
}

TEST(MultiProcessE2E, AllGatherAndReduceScatter) {
  ExpectProcessesMatchEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT ag = f32[2,6] all-gather(p), replica_groups=[2,2]<=[4], dimensions={1}
})",
                                {.processes = 4});
  ExpectProcessesMatchEvaluator("HloModule m, replica_count=2\n" + Reducer("add", "f32", "add") + R"(
ENTRY e {
  p = f32[4,6] parameter(0)
  ROOT rs = f32[4,3] reduce-scatter(p), replica_groups={{0,1}}, dimensions={1}, to_apply=add
})",
                                {.processes = 2});
}

TEST(MultiProcessE2E, AllToAllAndCollectivePermute) {
  ExpectProcessesMatchEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[3,8] parameter(0)
  ROOT a2a = f32[3,8] all-to-all(p), replica_groups={{0,1,2,3}}, dimensions={1}
})",
                                {.processes = 4});
  ExpectProcessesMatchEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = s32[3] parameter(0)
  ROOT cp = s32[3] collective-permute(p), source_target_pairs={{1,0},{0,1},{2,2}}
})",
                                {.processes = 4});
  ExpectProcessesMatchEvaluator(R"(HloModule m, replica_count=2
ENTRY e {
  p = f64[2,2] parameter(0)
  ROOT cp = f64[2,2] collective-permute(p), source_target_pairs={{0,1}}
})",
                                {.processes = 2});
}

TEST(MultiProcessE2E, BroadcastIdsAndAsyncPairsOnAFileStore) {
  ExpectProcessesMatchEvaluator(R"(HloModule m, replica_count=4
ENTRY e {
  p = s64[3] parameter(0)
  ROOT b = s64[3] collective-broadcast(p), replica_groups={{1,0},{3,2}}
})",
                                {.processes = 4, .file_store = true});
  ExpectProcessesMatchEvaluator(R"(HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ten = u32[] constant(10)
  rt = u32[] multiply(r, ten)
  ROOT id = u32[] add(rt, p)
})",
                                {.processes = 4});
  ExpectProcessesMatchEvaluator("HloModule m, replica_count=2\n" + Reducer("add", "f32", "add") + R"(
ENTRY e {
  p = f32[16] parameter(0)
  q = f32[16] parameter(1)
  ars = f32[16] all-reduce-start(p), replica_groups={}, to_apply=add
  ags = (f32[16], f32[32]) all-gather-start(q), replica_groups={}, dimensions={0}
  e = f32[16] exponential(q)
  m = f32[16] multiply(e, p)
  ard = f32[16] all-reduce-done(ars)
  agd = f32[32] all-gather-done(ags)
  s = f32[16] add(ard, m)
  ROOT t = (f32[16], f32[32]) tuple(s, agd)
})",
                                {.processes = 2, .file_store = true, .atol = 1e-4, .rtol = 1e-4}, 7);
}

TEST(MultiProcessE2E, TwoProcessesOfTwoDevices) {
  // Groups inside a process and across the two.
  ExpectProcessesMatchEvaluator("HloModule m, replica_count=2, num_partitions=2\n" + Reducer("add", "f32", "add") + R"(
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=add
  b = f32[8] all-gather(a), channel_id=2, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, dimensions={0}
  ROOT c = f32[8] collective-permute(b), channel_id=3, source_target_pairs={{0,1},{1,0}}
})",
                                {.processes = 2});
}

// XLA's collective tests from the corpus, one process per device.
std::string WriteBef(const ScratchDir& dir, const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return "";
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, {});
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return "";
  EXPECT_TRUE(bef::WriteArtifactFile(*artifact, dir / "m.bef").ok());
  return dir / "m.bef";
}

std::vector<std::string> ProcessArgs(const std::string& bef, int id, int processes, int port, double timeout) {
  return {BefRun(), bef, "--process_id=" + std::to_string(id), "--num_processes=" + std::to_string(processes),
          "--coordinator=127.0.0.1:" + std::to_string(port), "--collective_timeout=" + std::to_string(timeout),
          "--output="};
}

TEST(MultiProcessE2E, AProcessKilledMidRunFailsItsPeerWithinTheTimeout) {
  ASSERT_FALSE(BefRun().empty()) << "KILN_BEF_RUN must be set";
  ScratchDir dir;
  // An all-reduce in a loop long enough to be killed in.
  const std::string bef = WriteBef(dir, AllReduceLoopModule(2, "f32", 256, 100000000));
  ASSERT_FALSE(bef.empty());
  const int port = FreeLoopbackPort();
  constexpr double kTimeout = 10;
  Child p0(ProcessArgs(bef, 0, 2, port, kTimeout), dir / "out0", dir / "err0");
  Child p1(ProcessArgs(bef, 1, 2, port, kTimeout), dir / "out1", dir / "err1");
  ASSERT_TRUE(p0.started() && p1.started());
  // Both are well inside the loop's collectives by then.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  p1.Kill();
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(p1.Wait(std::chrono::seconds(10)), 128 + SIGKILL);
  const int code = p0.Wait(std::chrono::seconds(static_cast<int>(kTimeout) + 10));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  const std::string err = p0.err();
  EXPECT_EQ(code, 1) << err;
  EXPECT_LT(seconds, kTimeout + 5);
  EXPECT_NE(err.find("bef-run: error: device 0: "), std::string::npos) << err;
  EXPECT_NE(err.find("all-reduce 'w' on devices {0,1}"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(MultiProcessE2E, AProcessThatNeverStartsIsNamedAfterTheTimeout) {
  ASSERT_FALSE(BefRun().empty()) << "KILN_BEF_RUN must be set";
  ScratchDir dir;
  const std::string bef = WriteBef(dir, AllReduceModule(3));
  ASSERT_FALSE(bef.empty());
  const int port = FreeLoopbackPort();
  constexpr double kTimeout = 2;
  const auto start = std::chrono::steady_clock::now();
  Child p0(ProcessArgs(bef, 0, 3, port, kTimeout), dir / "out0", dir / "err0");
  Child p1(ProcessArgs(bef, 1, 3, port, kTimeout), dir / "out1", dir / "err1");
  for (Child* p : {&p0, &p1}) {
    const int code = p->Wait(std::chrono::seconds(20));
    const std::string err = p->err();
    EXPECT_EQ(code, 1) << err;
    EXPECT_NE(err.find("all-reduce 'ar' on devices {0,1,2}: devices 2 did not arrive within 2 s"), std::string::npos)
        << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 15);
}

TEST(MultiProcessE2E, AnUnreachableCoordinatorIsAnError) {
  ASSERT_FALSE(BefRun().empty()) << "KILN_BEF_RUN must be set";
  ScratchDir dir;
  const std::string bef = WriteBef(dir, AllReduceModule(2));
  ASSERT_FALSE(bef.empty());
  Child p1(ProcessArgs(bef, 1, 2, FreeLoopbackPort(), 1), dir / "out1", dir / "err1");
  EXPECT_EQ(p1.Wait(std::chrono::seconds(20)), 1);
  const std::string err = p1.err();
  EXPECT_NE(err.find("(process 0) did not answer within 1 s"), std::string::npos) << err;
}

}  // namespace
}  // namespace kiln::testing
