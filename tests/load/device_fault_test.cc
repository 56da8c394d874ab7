// Device errors on the emulated CUDA device: the emulator's fault injection
// (kilnEmuInjectFault) fails an allocation, a kernel launch or a cuBLAS
// call in the middle of an execution of the README example
// ($KILN_LOAD_BEF). Each fault must come back from Wait as one line naming
// the failing call and the injected error; the next execution on the same
// device must give correct results (checked against the MLP computed
// independently in double precision); and nothing may leak: the emulator's
// live objects (allocations, modules, streams, events, library handles;
// kilnEmuLiveObjects) return to the counts before the fault. One case
// injects 20 faults while 4 threads execute on 4 streams; the last fails
// every allocation, launch and library call (cuDNN, cuFFT, cuBLAS,
// cuSOLVER) of a module with library thunks in turn. Skipped
// without a CUDA device or with a device that is not the emulator.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cuda_emulator/include/kiln_cuda_emulator.h"
#include "runtime/runtime.h"
#include "serialization/artifact.h"
#include "tests/support/mlp_example.h"

namespace kiln::testing {
namespace {

using runtime::Device;
using runtime::DeviceKind;
using runtime::ExecutionResult;
using runtime::LoadedExecutable;

// The emulator's fault and leak entry points, from the library the runtime
// loaded (null when it is not loaded or lacks them).
struct Emulator {
  int (*inject)(int, int64_t) = nullptr;
  int (*live)(KilnEmuLiveObjects*) = nullptr;
};

Emulator FindEmulator() {
  Emulator e;
  const char* path = std::getenv("KILN_CUDA_EMULATOR");
  if (!path || !*path) return e;
  void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return e;
  e.inject = reinterpret_cast<int (*)(int, int64_t)>(dlsym(lib, "kilnEmuInjectFault"));
  e.live = reinterpret_cast<int (*)(KilnEmuLiveObjects*)>(dlsym(lib, "kilnEmuLiveObjects"));
  return e;
}

std::string Describe(const KilnEmuLiveObjects& l) {
  char text[256];
  std::snprintf(text, sizeof text,
                "%llu device allocations (%llu bytes), %llu pinned, %llu modules, %llu streams, %llu events, "
                "%llu library handles, %llu descriptors",
                (unsigned long long)l.device_allocations, (unsigned long long)l.device_bytes,
                (unsigned long long)l.host_allocations, (unsigned long long)l.modules,
                (unsigned long long)l.streams, (unsigned long long)l.events,
                (unsigned long long)l.library_handles, (unsigned long long)l.library_descriptors);
  return text;
}

void ExpectOneLine(const std::string& error, std::initializer_list<std::string> parts) {
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  for (const std::string& p : parts) EXPECT_NE(error.find(p), std::string::npos) << "no '" << p << "' in: " << error;
  std::printf("  error: %s\n", error.c_str());
}

#define EXPECT_LIVE_EQ(a, b) EXPECT_EQ(Describe(a), Describe(b))

constexpr int kStreams = 4;  // the device's; the single-stream cases use stream 0

class DeviceFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bef = std::getenv("KILN_LOAD_BEF");
    ASSERT_TRUE(bef && *bef) << "KILN_LOAD_BEF must name the compiled examples/mlp.hlo";
    StatusOr<bef::Artifact> artifact = bef::LoadArtifactFile(bef);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    artifact_ = std::move(*artifact);
    StatusOr<std::unique_ptr<Device>> device = Device::Create(DeviceKind::kCuda, kStreams);
    if (!device.ok()) GTEST_SKIP() << device.status().message();
    device_ = std::move(*device);
    emulator_ = FindEmulator();
    if (!emulator_.inject || !emulator_.live) GTEST_SKIP() << "the CUDA device is not an emulator with fault injection";
  }

  void TearDown() override {
    if (!emulator_.inject) return;
    for (int kind : {KILN_EMU_FAULT_ALLOC, KILN_EMU_FAULT_LAUNCH, KILN_EMU_FAULT_LIBRARY}) emulator_.inject(kind, -1);
  }

  KilnEmuLiveObjects Live() const {
    KilnEmuLiveObjects l{};
    EXPECT_EQ(emulator_.live(&l), 0);
    return l;
  }

  void Inject(KilnEmuFaultKind kind, int64_t after) const { ASSERT_EQ(emulator_.inject(kind, after), 0); }

  std::unique_ptr<LoadedExecutable> Load() const {
    StatusOr<std::unique_ptr<LoadedExecutable>> exe = LoadedExecutable::Load(*device_, artifact_);
    EXPECT_TRUE(exe.ok()) << exe.status().message();
    return exe.ok() ? std::move(*exe) : nullptr;
  }

  // Runs with the inputs of `seed` on `stream`: "" when the results are
  // correct, else the error (from Execute or Wait) or the wrong value.
  static std::string Run(const LoadedExecutable& exe, uint64_t seed, int stream = 0) {
    StatusOr<std::vector<runtime::Buffer>> args = MlpArguments(MakeMlpInputs(seed));
    if (!args.ok()) return "no arguments: " + args.status().message();
    runtime::ExecuteOptions options;
    options.stream = stream;
    options.host_outputs = true;  // checked on the host
    StatusOr<ExecutionResult> r = exe.ExecuteSync(std::move(*args), options);
    if (!r.ok()) return r.status().message();
    std::string bad = CheckMlpOutputs(r->outputs, ComputeMlp(MakeMlpInputs(seed)));
    return bad.empty() ? "" : "wrong result: " + bad;
  }
  // The error of an execution that must fail.
  static std::string FailingRun(const LoadedExecutable& exe, uint64_t seed) {
    std::string error = Run(exe, seed);
    return error.empty() ? "(no error)" : error;
  }
  static void CorrectRun(const LoadedExecutable& exe, uint64_t seed, int stream = 0) {
    EXPECT_EQ(Run(exe, seed, stream), "");
  }

  void FaultMidExecution(KilnEmuFaultKind kind, uint64_t seed, std::initializer_list<std::string> error_parts);

  bef::Artifact artifact_;
  std::unique_ptr<Device> device_;
  Emulator emulator_;
};

// The first execution allocates the stream's workspace (device memory, then
// pinned staging): failing either allocation leaves nothing behind.
TEST_F(DeviceFaultTest, AllocationFailure) {
  std::unique_ptr<LoadedExecutable> exe = Load();
  ASSERT_TRUE(exe);
  const KilnEmuLiveObjects loaded = Live();
  for (int64_t after = 0; after < 2; ++after) {
    Inject(KILN_EMU_FAULT_ALLOC, after);
    std::string error = FailingRun(*exe, 100 + after);
    ExpectOneLine(error, {after == 0 ? "cuMemAlloc" : "cuMemHostAlloc", "CUDA_ERROR_OUT_OF_MEMORY",
                          "injected alloc failure"});
    EXPECT_LIVE_EQ(Live(), loaded);
  }
  CorrectRun(*exe, 200);
  const KilnEmuLiveObjects running = Live();
  CorrectRun(*exe, 201);
  EXPECT_LIVE_EQ(Live(), running);
  std::printf("  live after load: %s\n  live while running: %s\n", Describe(loaded).c_str(),
              Describe(running).c_str());
}

// A launch fails after some kernels and copies of the execution were
// issued.
// On a warm executable, fault `kind` fails the first, then the second call
// of its kind in an execution (the README example has two kernels and two
// GEMMs); each time the next execution is correct and nothing leaks.
void DeviceFaultTest::FaultMidExecution(KilnEmuFaultKind kind, uint64_t seed,
                                        std::initializer_list<std::string> error_parts) {
  std::unique_ptr<LoadedExecutable> exe = Load();
  ASSERT_TRUE(exe);
  CorrectRun(*exe, seed);
  const KilnEmuLiveObjects running = Live();
  for (int64_t after = 0; after < 2; ++after) {
    Inject(kind, after);
    ExpectOneLine(FailingRun(*exe, seed + 10 + after), error_parts);
    EXPECT_LIVE_EQ(Live(), running);
    CorrectRun(*exe, seed + 20 + after);
    EXPECT_LIVE_EQ(Live(), running);
  }
}

TEST_F(DeviceFaultTest, LaunchFailure) {
  FaultMidExecution(KILN_EMU_FAULT_LAUNCH, 300,
                    {"cuLaunchKernel", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "injected launch failure"});
}

// cuBLAS fails one of the two GEMMs. With CUDA graphs (the default) the
// GEMMs run as nodes of a graph launch, so the error is cuGraphLaunch's; a
// GEMM issued directly fails with cuBLAS' status.
TEST_F(DeviceFaultTest, LibraryFailure) {
  FaultMidExecution(KILN_EMU_FAULT_LIBRARY, 400, {"cublas", "injected library failure"});
}

// Unloading after faults releases everything the executable made; only the
// device's own objects (streams, the cuBLAS handle of its stream) remain.
TEST_F(DeviceFaultTest, UnloadAfterFaultsReleasesEverything) {
  std::unique_ptr<LoadedExecutable> warm = Load();
  ASSERT_TRUE(warm);
  CorrectRun(*warm, 500);  // creates the device's cuBLAS handle
  warm.reset();
  const KilnEmuLiveObjects device_only = Live();
  std::unique_ptr<LoadedExecutable> exe = Load();
  ASSERT_TRUE(exe);
  Inject(KILN_EMU_FAULT_ALLOC, 0);
  EXPECT_NE(FailingRun(*exe, 510), "(no error)");
  Inject(KILN_EMU_FAULT_LAUNCH, 1);
  EXPECT_NE(FailingRun(*exe, 511), "(no error)");
  Inject(KILN_EMU_FAULT_LIBRARY, 1);
  EXPECT_NE(FailingRun(*exe, 512), "(no error)");
  CorrectRun(*exe, 513);
  CorrectRun(*exe, 514);  // replays the CUDA graph the previous run captured
  EXPECT_GT(Live().graph_execs, 0u);
  exe.reset();
  EXPECT_LIVE_EQ(Live(), device_only);
  EXPECT_EQ(Live().graphs, 0u);  // the executable's CUDA graphs went with it
  EXPECT_EQ(Live().graph_execs, 0u);
}

// Faults while 4 threads execute on the device's 4 streams: a fifth
// thread arms a launch or a library fault, alternately, and waits until an
// execution reports it before arming the next. Every execution either is
// correct or fails with the injected error; exactly one execution fails
// per fault; the other streams carry on; nothing leaks.
TEST_F(DeviceFaultTest, FaultsUnderConcurrentLoad) {
  constexpr int kFaults = 20;
  constexpr int kRunsPerThread = 250;
  std::unique_ptr<LoadedExecutable> exe = Load();
  ASSERT_TRUE(exe);
  for (int s = 0; s < kStreams; ++s) CorrectRun(*exe, 600 + s, s);  // every stream's workspace
  const KilnEmuLiveObjects running = Live();

  std::atomic<int> injected_errors{0}, other_failures{0}, running_threads{kStreams}, executions{0};
  std::atomic<bool> all_fired{false};
  std::vector<std::string> first_failure(kStreams);
  std::vector<std::thread> threads;
  for (int t = 0; t < kStreams; ++t) {
    threads.emplace_back([&, t] {
      // At least kRunsPerThread executions, and on until every fault fired
      // (bounded, should a fault never fire).
      for (int i = 0; (i < kRunsPerThread || !all_fired.load()) && i < 100 * kRunsPerThread; ++i) {
        ++executions;
        std::string error = Run(*exe, 1000u * (t + 1) + i, t);
        if (error.empty()) continue;
        if (error.find("injected") != std::string::npos && error.find('\n') == std::string::npos) {
          ++injected_errors;
        } else if (other_failures++ == 0) {
          first_failure[t] = error;
        }
      }
      --running_threads;
    });
  }
  int armed = 0;
  for (; armed < kFaults && running_threads.load() > 0; ++armed) {
    Inject(armed % 2 ? KILN_EMU_FAULT_LIBRARY : KILN_EMU_FAULT_LAUNCH, 0);
    while (injected_errors.load() <= armed && running_threads.load() > 0) std::this_thread::yield();
  }
  all_fired = true;
  for (std::thread& t : threads) t.join();
  TearDown();  // disarms a fault that found no execution left

  for (const std::string& f : first_failure) EXPECT_EQ(f, "");
  EXPECT_EQ(other_failures.load(), 0);
  EXPECT_EQ(armed, kFaults) << "a fault never fired";
  EXPECT_EQ(injected_errors.load(), kFaults);
  std::printf("  %d executions on %d streams, %d injected faults, %d failed with them\n", executions.load(),
              kStreams, armed, injected_errors.load());
  EXPECT_LIVE_EQ(Live(), running);
  for (int s = 0; s < kStreams; ++s) CorrectRun(*exe, 700 + s, s);
  EXPECT_LIVE_EQ(Live(), running);
}

// ---- every call of a module with library thunks --------------------------

// Arguments of the library module ($KILN_LOAD_LIBRARY_BEF, from
// tests/load/data/library_calls.hlo) from `seed`: values in [-1, 1), and
// for the Cholesky operand (argument 3, n x n) m m^T + n I, which is
// symmetric positive definite.
StatusOr<std::vector<runtime::Buffer>> LibraryArguments(const LoadedExecutable& exe, uint64_t seed) {
  std::vector<runtime::Buffer> args;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (const Shape& shape : exe.argument_shapes()) {
    KILN_ASSIGN_OR_RETURN(runtime::Buffer b, runtime::Buffer::Allocate(shape));
    float* v = reinterpret_cast<float*>(b.data());
    const int64_t n = b.size() / static_cast<int64_t>(sizeof(float));
    for (int64_t i = 0; i < n; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      v[i] = static_cast<float>(static_cast<double>(state >> 40) / static_cast<double>(1ull << 23) - 1.0);
    }
    args.push_back(std::move(b));
  }
  if (args.size() != 4) return Error("the library module takes 4 arguments");
  const int64_t n = args[3].shape().dims().at(0);
  std::vector<float> m(reinterpret_cast<float*>(args[3].data()), reinterpret_cast<float*>(args[3].data()) + n * n);
  float* a = reinterpret_cast<float*>(args[3].data());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = i == j ? static_cast<float>(n) : 0.0f;
      for (int64_t k = 0; k < n; ++k) sum += m[i * n + k] * m[j * n + k];
      a[i * n + j] = sum;
    }
  }
  return args;
}

using Outputs = std::vector<std::vector<uint8_t>>;

// The outputs of one execution with the inputs of `seed`, or its error.
StatusOr<Outputs> RunLibraryModule(const LoadedExecutable& exe, uint64_t seed) {
  KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> args, LibraryArguments(exe, seed));
  runtime::ExecuteOptions options;
  options.host_outputs = true;  // compared on the host
  KILN_ASSIGN_OR_RETURN(ExecutionResult r, exe.ExecuteSync(std::move(args), options));
  Outputs out;
  for (const runtime::Buffer& b : r.outputs) out.emplace_back(b.data(), b.data() + b.size());
  return out;
}

// Each allocation (of the first execution: workspace, staging, library
// scratch), each kernel launch and each library call (cuDNN, cuFFT, cuBLAS,
// cuSOLVER) of an execution is failed in turn, every time on a device and
// executable of their own, until an execution has no call left to fail.
// Each failure is one line naming the injected error; the same executable's
// next execution gives the results of a fault-free execution (the
// emulator's results are deterministic; the e2e tests check them against
// the evaluator); and once that device is gone, the emulator's live objects
// are what they were before it was made.
TEST_F(DeviceFaultTest, EveryCallOfALibraryModuleFailsCleanly) {
  const char* bef = std::getenv("KILN_LOAD_LIBRARY_BEF");
  ASSERT_TRUE(bef && *bef) << "KILN_LOAD_LIBRARY_BEF must name the compiled tests/load/data/library_calls.hlo";
  StatusOr<bef::Artifact> artifact = bef::LoadArtifactFile(bef);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  constexpr uint64_t kSeed = 900;
  Outputs reference;
  {
    StatusOr<std::unique_ptr<LoadedExecutable>> exe = LoadedExecutable::Load(*device_, *artifact);
    ASSERT_TRUE(exe.ok()) << exe.status().message();
    StatusOr<Outputs> r = RunLibraryModule(**exe, kSeed);
    ASSERT_TRUE(r.ok()) << r.status().message();
    reference = std::move(*r);
  }
  const struct {
    KilnEmuFaultKind kind;
    const char* name;
    int at_least;  // calls of the kind in the module's first execution
  } kinds[] = {{KILN_EMU_FAULT_ALLOC, "alloc", 3}, {KILN_EMU_FAULT_LAUNCH, "launch", 1},
               {KILN_EMU_FAULT_LIBRARY, "library", 6}};
  for (const auto& k : kinds) {
    int failed = 0;
    bool clean_run = false;
    for (int64_t after = 0; after < 64 && !clean_run; ++after) {
      SCOPED_TRACE(std::string(k.name) + " fault after " + std::to_string(after) + " calls");
      const KilnEmuLiveObjects before = Live();
      {
        StatusOr<std::unique_ptr<Device>> device = Device::Create(DeviceKind::kCuda);
        ASSERT_TRUE(device.ok()) << device.status().message();
        StatusOr<std::unique_ptr<LoadedExecutable>> exe = LoadedExecutable::Load(**device, *artifact);
        ASSERT_TRUE(exe.ok()) << exe.status().message();
        Inject(k.kind, after);
        StatusOr<Outputs> faulted = RunLibraryModule(**exe, kSeed);
        if (faulted.ok()) {
          clean_run = true;  // fewer calls of the kind than `after`
          Inject(k.kind, -1);
          EXPECT_TRUE(*faulted == reference);
        } else {
          ++failed;
          ExpectOneLine(faulted.status().message(), {"injected " + std::string(k.name) + " failure"});
          StatusOr<Outputs> next = RunLibraryModule(**exe, kSeed);
          ASSERT_TRUE(next.ok()) << next.status().message();
          EXPECT_TRUE(*next == reference);
        }
      }
      EXPECT_LIVE_EQ(Live(), before);
    }
    EXPECT_TRUE(clean_run);
    EXPECT_GE(failed, k.at_least) << k.name;
    std::printf("  %s: %d calls failed one at a time, each recovered\n", k.name, failed);
  }
}

}  // namespace
}  // namespace kiln::testing
