// Concurrency under load: 8 host threads execute one LoadedExecutable of
// the README example (examples/mlp.hlo, compiled by bef-compile at build
// time: $KILN_LOAD_BEF) many times each, every execution with its own
// inputs, and every result is checked against the MLP computed
// independently in double precision (tests/support/mlp_example.h).
//
// The device ($KILN_LOAD_DEVICE: host, default, or cuda) has 4 streams;
// execution i of thread t runs on stream (t + i) % 4, so two threads share
// each stream's queue while different streams run at once, and each
// thread keeps two executions in flight. Every 8th execution records the
// per-thunk profile. Iterations per thread: $KILN_LOAD_ITERATIONS (default
// 1000). ctest runs 8 x 1000 on the host (concurrency_load_test, about
// 0.1 s on 2 cores) and on the emulated CUDA device
// (concurrency_load_cuda_test, about 0.8 s: the example's kernels are
// small enough to interpret quickly).
//
// The binary links the runtime only, so scripts/tsan.sh builds it with
// ThreadSanitizer (no LLVM needed) and runs the host case.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/runtime.h"
#include "serialization/artifact.h"
#include "tests/support/mlp_example.h"

namespace kiln::testing {
namespace {

using runtime::Device;
using runtime::DeviceKind;
using runtime::Event;
using runtime::ExecuteOptions;
using runtime::ExecutionResult;
using runtime::LoadedExecutable;

constexpr int kThreads = 8;
constexpr int kStreams = 4;
constexpr int kInFlight = 2;  // executions each thread has queued at once

int64_t IterationsFromEnvironment() {
  const char* v = std::getenv("KILN_LOAD_ITERATIONS");
  if (!v || !*v) return 1000;
  return std::max(1ll, std::atoll(v));
}

DeviceKind DeviceFromEnvironment() {
  const char* v = std::getenv("KILN_LOAD_DEVICE");
  return v && std::string(v) == "cuda" ? DeviceKind::kCuda : DeviceKind::kHost;
}

// One thread's share: runs, failures and the first failure's text.
struct ThreadReport {
  int64_t runs = 0, failures = 0;
  std::string first_failure;
  void Fail(std::string what) {
    if (failures++ == 0) first_failure = std::move(what);
  }
};

struct Pending {
  uint64_t seed;
  Event event;
};

void RunThread(const LoadedExecutable& exe, int thread, int64_t iterations, double tolerance,
               ThreadReport& report) {
  std::deque<Pending> pending;
  auto finish = [&](Pending& p) {
    StatusOr<ExecutionResult> r = p.event.Wait();
    ++report.runs;
    if (!r.ok()) return report.Fail("seed " + std::to_string(p.seed) + ": " + r.status().message());
    std::string bad = CheckMlpOutputs(r->outputs, ComputeMlp(MakeMlpInputs(p.seed)), tolerance);
    if (!bad.empty()) report.Fail("seed " + std::to_string(p.seed) + ": " + bad);
  };
  for (int64_t i = 0; i < iterations; ++i) {
    const uint64_t seed = static_cast<uint64_t>(thread) * 1000003u + static_cast<uint64_t>(i);
    StatusOr<std::vector<runtime::Buffer>> args = MlpArguments(MakeMlpInputs(seed));
    if (!args.ok()) {
      report.Fail(args.status().message());
      continue;
    }
    ExecuteOptions options;
    options.stream = static_cast<int>((thread + i) % kStreams);
    options.profile = i % 8 == 0;
    options.host_outputs = true;  // checked on the host
    // The queued work keeps the argument buffers alive; ours go now.
    StatusOr<Event> event = exe.Execute(std::move(*args), options);
    if (!event.ok()) {
      ++report.runs;
      report.Fail("seed " + std::to_string(seed) + ": " + event.status().message());
      continue;
    }
    pending.push_back({seed, *event});
    if (pending.size() >= kInFlight) {
      finish(pending.front());
      pending.pop_front();
    }
  }
  for (Pending& p : pending) finish(p);
}

TEST(ConcurrencyLoad, EightThreadsExecuteOneExecutable) {
  const char* bef = std::getenv("KILN_LOAD_BEF");
  ASSERT_TRUE(bef && *bef) << "KILN_LOAD_BEF must name the compiled examples/mlp.hlo";
  const DeviceKind kind = DeviceFromEnvironment();
  const int64_t iterations = IterationsFromEnvironment();
  StatusOr<bef::Artifact> artifact = bef::LoadArtifactFile(bef);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  StatusOr<std::unique_ptr<Device>> device = Device::Create(kind, kStreams);
  if (!device.ok() && kind == DeviceKind::kCuda) GTEST_SKIP() << device.status().message();
  ASSERT_TRUE(device.ok()) << device.status().message();
  StatusOr<std::unique_ptr<LoadedExecutable>> exe = LoadedExecutable::Load(**device, *artifact);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  // f32 against double: the sums have 8 and 16 terms of magnitude < 1.
  const double tolerance = 1e-5;

  std::vector<ThreadReport> reports(kThreads);
  std::vector<std::thread> threads;
  auto begin = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { RunThread(**exe, t, iterations, tolerance, reports[t]); });
  }
  for (std::thread& t : threads) t.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

  int64_t runs = 0, failures = 0;
  for (const ThreadReport& r : reports) {
    runs += r.runs;
    failures += r.failures;
    EXPECT_EQ(r.failures, 0) << r.first_failure;
  }
  std::printf("concurrency_load: %s (%s): %d threads x %lld executions on %d streams: %lld runs, %lld failures, "
              "%.2f s wall\n",
              std::string(runtime::DeviceKindName(kind)).c_str(), (*device)->description().c_str(), kThreads,
              static_cast<long long>(iterations), kStreams, static_cast<long long>(runs),
              static_cast<long long>(failures), seconds);
  EXPECT_EQ(runs, kThreads * iterations);
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace kiln::testing
