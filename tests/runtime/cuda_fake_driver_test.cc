// The CUDA backend on a fake driver (fake_cuda_driver.h), so its logic runs
// on machines without a GPU: staging of arguments and results, zeroing,
// constants uploaded once, kernel parameters (one device pointer per
// argument) and launch dimensions, the host syncs control flow needs (and
// only those), overlapping copies, donation, profiling from events, code
// selection and JIT-log errors, error propagation and resource cleanup,
// and what the runtime takes from kiln's emulator (time source, sampling
// mode, counters).
// Expected values are computed by hand in the comments.
#include <gtest/gtest.h>

#if KILN_HAVE_CUDA_HEADERS

#include "runtime/backend.h"
#include "runtime/cuda_backend.h"
#include "tests/runtime/fake_cuda_driver.h"
#include "tests/runtime/runtime_test_programs.h"
#include "tests/runtime/runtime_test_util.h"

namespace kiln::runtime::testing {
namespace {

using ::kiln::thunks::ThunkKind;

// The backend runs without a Device here, so the outputs come back to the
// host (the staging path these tests count).
ExecuteOptions HostOutputs() {
  ExecuteOptions options;
  options.host_outputs = true;
  return options;
}

template <typename T>
T* Arg(void** params, int i) {
  return reinterpret_cast<T*>(*static_cast<CUdeviceptr*>(params[i]));
}

// out = (a + b) * a over 6 floats.
void FusedKernel(void** p) {
  for (int i = 0; i < 6; ++i)
    Arg<float>(p, 2)[i] = (Arg<float>(p, 0)[i] + Arg<float>(p, 1)[i]) * Arg<float>(p, 0)[i];
}
void CondLt10(void** p) { *Arg<uint8_t>(p, 1) = *Arg<int32_t>(p, 0) < 10 ? 1 : 0; }
void AddOne(void** p) { *Arg<int32_t>(p, 1) = *Arg<int32_t>(p, 0) + 1; }

// A backend on the fake driver with the kernels above registered.
std::unique_ptr<CudaBackend> FakeBackend(int streams = 1, int sm_arch = 90) {
  std::unique_ptr<CudaDriver> driver = MakeFakeCudaDriver();
  Fake().sm_major = sm_arch / 10;
  Fake().sm_minor = sm_arch % 10;
  Fake().kernels = {{"fused", FusedKernel}, {"cond_lt", CondLt10}, {"body_add", AddOne}};
  StatusOr<std::unique_ptr<CudaBackend>> b = CudaBackend::Create(std::move(driver), 0, streams);
  EXPECT_TRUE(b.ok()) << b.status().message();
  return b.ok() ? std::move(*b) : nullptr;
}

bef::Artifact FakeCudaArtifact(th::ThunkProgram p, std::vector<std::string> kernels = {},
                               std::string ptx = "PTX..", std::vector<uint8_t> cubin90 = {}) {
  std::vector<bef::CubinImage> cubins;
  if (!cubin90.empty()) cubins.push_back({90, std::move(cubin90)});
  bef::Artifact a = ::kiln::testing::CudaArtifact(std::move(p), std::move(kernels), std::move(ptx),
                                                  std::move(cubins));
  EXPECT_TRUE(bef::ValidateArtifact(a).ok()) << bef::ValidateArtifact(a).message();
  return a;
}

StatusOr<std::unique_ptr<BackendExecutable>> Load(CudaBackend& backend, const bef::Artifact& a) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const ProgramBinding> binding, BindProgram(a.program));
  return backend.Load(a, binding);
}

std::unique_ptr<BackendExecutable> MustLoadFake(CudaBackend& backend, const bef::Artifact& a) {
  StatusOr<std::unique_ptr<BackendExecutable>> e = Load(backend, a);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? std::move(*e) : nullptr;
}

// kiln's emulator extensions (kiln_cuda_emulator.h), faked: every event
// pair covers one launch modeled at 2 µs, 1.5 µs roofline-optimal.
const char* FakeEmuDescription() { return "fake emulator"; }
int FakeEmuSampling() { return 0; }  // kilnEmuResultsComputed in sampling mode
int FakeEmuCounters(void*, void*, KilnEmuCounters* out) {
  *out = KilnEmuCounters{};
  out->launches = 1;
  out->model_ns = 2000;
  out->optimal_ns = 1500;
  return CUDA_SUCCESS;
}

// FakeBackend on a driver that is kiln's emulator: with the timing model
// (kilnEmuResultsComputed, API version 2) in sampling mode, or without it.
std::unique_ptr<CudaBackend> FakeEmulatorBackend(bool timing_model) {
  std::unique_ptr<CudaDriver> driver = MakeFakeCudaDriver();
  Fake().kernels = {{"fused", FusedKernel}};
  driver->kilnEmuDescription = FakeEmuDescription;
  driver->kilnEmuEventCounters = FakeEmuCounters;
  if (timing_model) driver->kilnEmuResultsComputed = FakeEmuSampling;
  StatusOr<std::unique_ptr<CudaBackend>> b = CudaBackend::Create(std::move(driver), 0, 1);
  EXPECT_TRUE(b.ok()) << b.status().message();
  return b.ok() ? std::move(*b) : nullptr;
}

// FusionProgram launching "fused" with grid 1, block 256.
th::ThunkProgram FusedProgram() { return FusionProgram("fused", {{1, 1, 1}, {256, 1, 1}, 0}); }

TEST(CudaFakeDriver, KernelGetsOnePointerPerArgumentAndOneSyncPerRun) {
  auto backend = FakeBackend();
  ASSERT_NE(backend, nullptr);
  auto exe = MustLoadFake(
      *backend, FakeCudaArtifact(FusedProgram(), {"fused"}, "PTX..", {'C', 'U', 'B', 'I', 'N'}));
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(Fake().loaded_image, "CUBIN");  // sm_90 device, sm_90 cubin
  Buffer x = MakeBuffer<float>(ElementType::kF32, {2, 3}, {1.5f, -2, 3, 0.25f, 5, -6});
  Buffer y = MakeBuffer<float>(ElementType::kF32, {2, 3}, {2, 4, -1, 8, 0.5f, 3});
  StatusOr<ExecutionResult> r = exe->Run({x, y}, HostOutputs());
  ASSERT_TRUE(r.ok()) << r.status().message();
  // (x + y) * x: 5.25, -4, 6, 2.0625, 27.5, 18.
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{5.25f, -4, 6, 2.0625f, 27.5f, 18}));
  EXPECT_FALSE(r->outputs[0].SharesMemoryWith(x));
  ASSERT_EQ(Fake().launches.size(), 1u);
  EXPECT_EQ(Fake().launches[0].kernel, "fused");
  EXPECT_EQ(Fake().launches[0].grid[0], 1u);
  EXPECT_EQ(Fake().launches[0].block[0], 256u);
  EXPECT_EQ(Fake().stream_syncs, 1);  // only the final one
  EXPECT_EQ(Fake().async_uploads, 2);
  // Profile from events: run begin (tick 1), fusion begin 2, end 3, run end 4.
  ASSERT_EQ(r->profile.thunks.size(), 1u);
  EXPECT_EQ(r->profile.thunks[0].name, "fusion.1");
  EXPECT_EQ(r->profile.thunks[0].kind, ThunkKind::kKernel);
  EXPECT_EQ(r->profile.thunks[0].start, std::chrono::milliseconds(1));
  EXPECT_EQ(r->profile.thunks[0].duration, std::chrono::milliseconds(1));
  EXPECT_EQ(r->profile.total, std::chrono::milliseconds(3));
  // Without profiling no event is recorded.
  long ticks = Fake().tick;
  ExecuteOptions quiet;
  quiet.profile = false;
  quiet.host_outputs = true;
  StatusOr<ExecutionResult> q = exe->Run({x, y}, quiet);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(Fake().tick, ticks);
  EXPECT_TRUE(q->profile.thunks.empty());
  EXPECT_EQ(Read<float>(q->outputs[0]), (std::vector<float>{5.25f, -4, 6, 2.0625f, 27.5f, 18}));
}

TEST(CudaFakeDriver, PtxWhenNoCubinMatchesAndJitLogInTheError) {
  auto backend = FakeBackend(1, 89);  // sm_89: the sm_90 cubin does not fit
  ASSERT_NE(backend, nullptr);
  auto exe = MustLoadFake(
      *backend, FakeCudaArtifact(FusedProgram(), {"fused"}, "PTX..", {'C', 'U', 'B', 'I', 'N'}));
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(Fake().loaded_image, "PTX..");
  StatusOr<std::unique_ptr<BackendExecutable>> bad =
      Load(*backend, FakeCudaArtifact(FusedProgram(), {"fused"}, "BAD PTX"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "loading the CUDA kernels (PTX (JIT for sm_89)) failed: CUDA_ERROR_INVALID_PTX (fake "
            "driver): ptxas fatal: bad input line 2");
}

TEST(CudaFakeDriver, RejectedCubinFallsBackToPtx) {
  auto backend = FakeBackend();
  ASSERT_NE(backend, nullptr);
  auto exe = MustLoadFake(*backend,
                          FakeCudaArtifact(FusedProgram(), {"fused"}, "PTX..", {'B', 'A', 'D'}));
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(Fake().loaded_image, "PTX..");
}

TEST(CudaFakeDriver, MissingKernelAndHostOnlyArtifactFailAtLoad) {
  auto backend = FakeBackend();
  ASSERT_NE(backend, nullptr);
  Fake().kernels.erase("fused");
  StatusOr<std::unique_ptr<BackendExecutable>> e =
      Load(*backend, FakeCudaArtifact(FusedProgram(), {"fused"}));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "kernel 'fused' is not defined by the CUDA kernels (PTX (JIT for sm_90)): "
            "CUDA_ERROR_NOT_FOUND (fake driver)");
  StatusOr<std::unique_ptr<BackendExecutable>> host =
      Load(*backend, HostArtifact(FusedProgram(), {"fused"}, {0x7f, 'E', 'L', 'F'}));
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.status().message(), "the artifact has no CUDA kernel image (compiled for: host)");
}

TEST(CudaFakeDriver, WhileSyncsOncePerPredicateReadAndNeverWithTripCount) {
  auto backend = FakeBackend();
  ASSERT_NE(backend, nullptr);
  auto exe =
      MustLoadFake(*backend, FakeCudaArtifact(WhileProgram(std::nullopt), {"body_add", "cond_lt"}));
  ASSERT_NE(exe, nullptr);
  // 3 -> 10 after 7 iterations: 8 predicate reads + the final sync.
  StatusOr<ExecutionResult> r = exe->Run({MakeBuffer<int32_t>(ElementType::kS32, {}, {3})}, HostOutputs());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<int32_t>(r->outputs[0]), std::vector<int32_t>{10});
  EXPECT_EQ(Fake().stream_syncs, 9);
  // Profile: copy.in, 7 x (lt, add, copy.back), the last lt, the while.
  ASSERT_EQ(r->profile.thunks.size(), 24u);
  EXPECT_EQ(r->profile.thunks[1].name, "lt");
  EXPECT_EQ(r->profile.thunks[1].depth, 2);
  EXPECT_EQ(r->profile.thunks.back().kind, ThunkKind::kWhile);
  EXPECT_EQ(r->profile.thunks.back().depth, 1);

  auto known = MustLoadFake(*backend, FakeCudaArtifact(WhileProgram(4), {"body_add", "cond_lt"}));
  ASSERT_NE(known, nullptr);
  Fake().stream_syncs = 0;
  Fake().launches.clear();
  // Four increments from 100 and no predicate read: only the final sync.
  StatusOr<ExecutionResult> k = known->Run({MakeBuffer<int32_t>(ElementType::kS32, {}, {100})}, HostOutputs());
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_EQ(Read<int32_t>(k->outputs[0]), std::vector<int32_t>{104});
  EXPECT_EQ(Fake().stream_syncs, 1);
  EXPECT_EQ(Fake().launches.size(), 4u);  // body_add only, never cond_lt
}

TEST(CudaFakeDriver, ConditionalReadsTheIndexOnce) {
  auto backend = FakeBackend();
  ASSERT_NE(backend, nullptr);
  auto index = MustLoadFake(*backend, FakeCudaArtifact(ConditionalProgram(false)));
  ASSERT_NE(index, nullptr);
  // index -> branch: 0->0 (10), 1->1 (20), 2->2 (30), 7->last (30), -1->last (30).
  for (auto [i, want] :
       std::vector<std::pair<int32_t, int32_t>>{{0, 10}, {1, 20}, {2, 30}, {7, 30}, {-1, 30}}) {
    Fake().stream_syncs = 0;
    StatusOr<ExecutionResult> r = index->Run({MakeBuffer<int32_t>(ElementType::kS32, {}, {i})}, HostOutputs());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Read<int32_t>(r->outputs[0]), std::vector<int32_t>{want}) << "index " << i;
    EXPECT_EQ(Fake().stream_syncs, 2);
  }
  auto pred = MustLoadFake(*backend, FakeCudaArtifact(ConditionalProgram(true)));
  ASSERT_NE(pred, nullptr);
  StatusOr<ExecutionResult> t = pred->Run({MakeBuffer<uint8_t>(ElementType::kPred, {}, {1})}, HostOutputs());
  StatusOr<ExecutionResult> f = pred->Run({MakeBuffer<uint8_t>(ElementType::kPred, {}, {0})}, HostOutputs());
  ASSERT_TRUE(t.ok() && f.ok());
  EXPECT_EQ(Read<int32_t>(t->outputs[0]), std::vector<int32_t>{10});
  EXPECT_EQ(Read<int32_t>(f->outputs[0]), std::vector<int32_t>{20});
  ASSERT_EQ(t->profile.thunks.size(), 2u);
  EXPECT_EQ(t->profile.thunks[0].name, "memset.b0");
  EXPECT_EQ(t->profile.thunks[0].depth, 2);
}

TEST(CudaFakeDriver, OverlappingCopyGoesThroughScratchAndTempsStartZeroed) {
  auto backend = FakeBackend();
  ASSERT_NE(backend, nullptr);
  auto exe = MustLoadFake(*backend, FakeCudaArtifact(ShiftWhileProgram()));
  ASSERT_NE(exe, nullptr);
  for (int run = 0; run < 2; ++run) {  // the reused workspace is zeroed again
    StatusOr<ExecutionResult> r = exe->Run({}, HostOutputs());
    ASSERT_TRUE(r.ok()) << r.status().message();
    // [0,0,0,0] -> [1,0,0,0] -> [1,1,0,0] -> [1,1,1,0].
    EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{1, 1, 1, 0}));
  }
  EXPECT_EQ(Fake().overlapping_copies, 0);
}

// a0 param f32[4] (also output 0, aliased); a1 constant f32[4] {1,2,3,4},
// also output 1; a2 constant read-only {10,20,30,40} is output 2.
// memset a0[0:4] = 1.0f; copy a2[0:4] -> a1[4:8].
TEST(CudaFakeDriver, DonationConstantsAndReadOnlyResults) {
  auto backend = FakeBackend();
  ASSERT_NE(backend, nullptr);
  th::ThunkProgram p;
  th::Allocation a0 = ParamAlloc(16, 0);
  a0.output = ShapeIndex{0};
  th::Allocation a1 = OutputAlloc(16, {1});
  a1.constant = 0;
  th::Allocation a2 = TempAlloc(16);
  a2.constant = 1;
  a2.output = ShapeIndex{2};
  p.allocations = {a0, a1, a2};
  using ::kiln::testing::FloatBytes;
  p.constants = {{"c1", FloatBytes({1, 2, 3, 4})}, {"c2", FloatBytes({10, 20, 30, 40})}};
  Shape f4(ElementType::kF32, {4});
  p.signature.parameters = {f4};
  p.signature.result = Shape::Tuple({f4, f4, f4});
  p.signature.aliases = {{{0}, 0, {}, false}};
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 16)}};
  p.signature.result_leaves = {{{0}, S(0, 0, 16)}, {{1}, S(1, 0, 16)}, {{2}, S(2, 0, 16)}};
  p.root.thunks = {T("memset.1", th::MemsetThunk{S(0, 0, 4), 0x3f800000u}),
                   T("copy.2", th::CopyThunk{S(2, 0, 4), S(1, 4, 4)})};
  auto exe = MustLoadFake(*backend, FakeCudaArtifact(p));
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(Fake().sync_uploads, 1);  // both constants in one upload at Load
  for (bool donate : {false, true, false}) {
    SCOPED_TRACE(donate ? "donated" : "kept");
    Buffer arg = MakeBuffer<float>(ElementType::kF32, {4}, {5, 6, 7, 8});
    ExecuteOptions options = HostOutputs();
    if (donate) options.donate = {true};
    StatusOr<ExecutionResult> r = exe->Run({arg}, options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{1, 6, 7, 8}));
    EXPECT_EQ(r->outputs[0].SharesMemoryWith(arg), donate);
    EXPECT_EQ(Read<float>(arg),
              donate ? (std::vector<float>{1, 6, 7, 8}) : (std::vector<float>{5, 6, 7, 8}));
    // The constant output is written per execution, never the constant itself.
    EXPECT_EQ(Read<float>(r->outputs[1]), (std::vector<float>{1, 10, 3, 4}));
    EXPECT_EQ(Read<float>(r->outputs[2]), (std::vector<float>{10, 20, 30, 40}));
  }
  EXPECT_EQ(Fake().sync_uploads, 1);
}

TEST(CudaFakeDriver, DeviceErrorsAndUnsupportedKindsNameTheThunk) {
  auto backend = FakeBackend();
  ASSERT_NE(backend, nullptr);
  Fake().failing_kernels = {"fused"};
  auto exe = MustLoadFake(*backend, FakeCudaArtifact(FusedProgram(), {"fused"}));
  ASSERT_NE(exe, nullptr);
  Buffer x = MakeBuffer<float>(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  StatusOr<ExecutionResult> r = exe->Run({x, x}, HostOutputs());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      r.status().message(),
      "thunk 'fusion.1': cuLaunchKernel of 'fused' failed: CUDA_ERROR_LAUNCH_FAILED (fake driver)");
  auto unsupported = MustLoadFake(*backend, FakeCudaArtifact(UnsupportedProgram()));
  ASSERT_NE(unsupported, nullptr);
  Fake().stream_syncs = 0;
  StatusOr<ExecutionResult> f = unsupported->Run({}, HostOutputs());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "thunk 'custom-call.1': not supported on cuda yet: custom-call");
  EXPECT_EQ(Fake().stream_syncs, 1);  // drained before the workspace is reused
}

TEST(CudaFakeDriver, TwoStreamsGetTheirOwnWorkspacesAndEverythingIsReleased) {
  {
    auto backend = FakeBackend(2);
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(Fake().live_streams, 2);
    auto exe = MustLoadFake(*backend, FakeCudaArtifact(FusedProgram(), {"fused"}));
    ASSERT_NE(exe, nullptr);
    Buffer x = MakeBuffer<float>(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
    for (int s = 0; s < 2; ++s) {
      ExecuteOptions options = HostOutputs();
      options.stream = s;
      StatusOr<ExecutionResult> r = exe->Run({x, x}, options);
      ASSERT_TRUE(r.ok()) << r.status().message();
      // (x + x) * x = 2x^2.
      EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{2, 8, 18, 32, 50, 72}));
      EXPECT_EQ(r->profile.thunks.at(0).stream, s);
    }
    EXPECT_EQ(Fake().live_device, 2);  // one workspace per stream, no constants
    EXPECT_EQ(Fake().live_host, 2);
    EXPECT_EQ(Fake().live_modules, 1);
  }
  EXPECT_EQ(Fake().live_device, 0);
  EXPECT_EQ(Fake().live_host, 0);
  EXPECT_EQ(Fake().live_events, 0);
  EXPECT_EQ(Fake().live_streams, 0);
  EXPECT_EQ(Fake().live_modules, 0);
}

// FusedProgram loaded on FakeEmulatorBackend, run on 2x3 floats.
struct EmulatorRun {
  explicit EmulatorRun(bool timing_model) : backend(FakeEmulatorBackend(timing_model)) {
    if (backend) exe = MustLoadFake(*backend, FakeCudaArtifact(FusedProgram(), {"fused"}));
  }
  StatusOr<ExecutionResult> Run(bool profile) const {
    if (!exe) return Error("not loaded");
    Buffer x = MakeBuffer<float>(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
    ExecuteOptions options = HostOutputs();
    options.profile = profile;
    return exe->Run({x, x}, options);
  }
  std::unique_ptr<CudaBackend> backend;
  std::unique_ptr<BackendExecutable> exe;  // destroyed before the backend
};

TEST(CudaFakeDriver, EmulatorWithoutTimingModelTimesWithItsClock) {
  EmulatorRun emulator(/*timing_model=*/false);
  StatusOr<ExecutionResult> r = emulator.Run(/*profile=*/true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->results_computed);
  EXPECT_EQ(r->profile.time_source, "emulated: fake emulator");
  EXPECT_FALSE(r->profile.modeled);
  EXPECT_FALSE(r->profile.sampled);
}

TEST(CudaFakeDriver, TimingModelInSamplingModeModelsTimesAndComputesNoResults) {
  EmulatorRun emulator(/*timing_model=*/true);
  StatusOr<ExecutionResult> r = emulator.Run(/*profile=*/true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->results_computed);
  EXPECT_EQ(r->profile.time_source, "modeled: H100 timing model on fake emulator");
  EXPECT_TRUE(r->profile.modeled);
  EXPECT_TRUE(r->profile.sampled);
  ASSERT_EQ(r->profile.thunks.size(), 1u);
  ASSERT_TRUE(r->profile.thunks[0].counters.has_value());
  EXPECT_EQ(r->profile.thunks[0].counters->model_ns, 2000u);
  EXPECT_EQ(r->profile.thunks[0].counters->optimal_ns, 1500u);
  // Unprofiled runs say so too.
  StatusOr<ExecutionResult> q = emulator.Run(/*profile=*/false);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_FALSE(q->results_computed);
}

}  // namespace
}  // namespace kiln::runtime::testing

#endif  // KILN_HAVE_CUDA_HEADERS
