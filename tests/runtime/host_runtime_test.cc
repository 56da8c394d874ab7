// Host runtime on hand-built thunk programs without kernels: copy, memset,
// gemm, fft, conditional, while with a known trip count, argument checking,
// aliasing, profiling, streams and the errors for unsupported thunks.
// Expected values are computed by hand in the comments.
#include <gtest/gtest.h>

#include "tests/runtime/runtime_test_programs.h"
#include "tests/runtime/runtime_test_util.h"

namespace kiln::runtime::testing {
namespace {

using ::kiln::thunks::ThunkKind;

TEST(HostRuntime, CopyAndMemset) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, RoundTrip(HostArtifact(CopyMemsetProgram())));
  ASSERT_NE(exe, nullptr);
  Buffer in = MakeBuffer<float>(ElementType::kF32, {4}, {1.5f, -2, 3, 4});
  StatusOr<ExecutionResult> r = exe->ExecuteSync({in});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{1.5f, -2, 3, 4}));
  EXPECT_EQ(Read<float>(r->outputs[1]), (std::vector<float>{2, 2, 0, 0}));
  EXPECT_EQ(r->outputs[1].shape().ToString(false), "f32[4]");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r->outputs[0].data()) % 64, 0u);
  // Profile: the four thunks in order, each at depth 1.
  ASSERT_EQ(r->profile.thunks.size(), 4u);
  EXPECT_EQ(r->profile.thunks[0].name, "copy.1");
  EXPECT_EQ(r->profile.thunks[2].name, "memset.3");
  EXPECT_EQ(r->profile.thunks[2].kind, ThunkKind::kMemset);
  EXPECT_EQ(r->profile.thunks[3].depth, 1);
  for (const ThunkProfileEntry& e : r->profile.thunks) EXPECT_GE(e.duration.count(), 0);
  EXPECT_GE(r->profile.total, r->profile.thunks[3].start);
}

TEST(HostRuntime, AsyncExecutionsOnTwoStreams) {
  auto device = HostDevice(2);
  auto exe = MustLoad(*device, HostArtifact(CopyMemsetProgram()));
  ASSERT_NE(exe, nullptr);
  std::vector<Event> events;
  for (int i = 0; i < 8; ++i) {
    ExecuteOptions options;
    options.stream = i % 2;
    StatusOr<Event> e = exe->Execute(
        {MakeBuffer<float>(ElementType::kF32, {4}, {float(i), 0, 0, 1})}, options);
    ASSERT_TRUE(e.ok()) << e.status().message();
    events.push_back(*e);
  }
  for (int i = 0; i < 8; ++i) {
    StatusOr<ExecutionResult> r = events[i].Wait();
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(events[i].IsReady());
    EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{float(i), 0, 0, 1}));
  }
}

TEST(HostRuntime, GemmF32) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, RoundTrip(HostArtifact(GemmProgram(ElementType::kF32, ElementType::kF32))));
  ASSERT_NE(exe, nullptr);
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]]:
  //   row 0: 1*7+2*9+3*11 = 58, 1*8+2*10+3*12 = 64
  //   row 1: 4*7+5*9+6*11 = 139, 4*8+5*10+6*12 = 154
  StatusOr<ExecutionResult> r =
      exe->ExecuteSync({MakeBuffer<float>(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{58, 64, 139, 154}));
  EXPECT_EQ(r->profile.thunks.at(0).kind, ThunkKind::kGemm);
}

TEST(HostRuntime, GemmF64) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(GemmProgram(ElementType::kF64, ElementType::kF64)));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r =
      exe->ExecuteSync({MakeBuffer<double>(ElementType::kF64, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<double>(r->outputs[0]), (std::vector<double>{58, 64, 139, 154}));
}

// bf16 x bf16 -> f32 (the CUDA form, which host execution of the same
// artifact runs too): [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]].
TEST(HostRuntime, GemmBf16OperandsF32Result) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, RoundTrip(HostArtifact(GemmProgram(ElementType::kBF16, ElementType::kF32))));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r = exe->ExecuteSync({GemmBf16Lhs()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{58, 64, 139, 154}));
}

// Batched f64 with a transposed rhs and beta: out starts at zero (fresh
// output), so beta has no visible effect; alpha = 2 does.
TEST(HostRuntime, GemmBatchedTransposedF64) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(GemmBatchedTransposedF64Program()));
  ASSERT_NE(exe, nullptr);
  // batch 0: A = [[1,2],[3,4]], B = [[5,6],[7,8]] stored transposed as
  //   [[5,7],[6,8]]; A x B = [[19,22],[43,50]], times 2 = [[38,44],[86,100]].
  // batch 1: A = identity, B = [[2,3],[4,5]] stored as [[2,4],[3,5]];
  //   2 * B = [[4,6],[8,10]].
  Buffer lhs = MakeBuffer<double>(ElementType::kF64, {2, 2, 2}, {1, 2, 3, 4, 1, 0, 0, 1});
  Buffer rhs = MakeBuffer<double>(ElementType::kF64, {2, 2, 2}, {5, 7, 6, 8, 2, 4, 3, 5});
  StatusOr<ExecutionResult> r = exe->ExecuteSync({lhs, rhs});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<double>(r->outputs[0]), (std::vector<double>{38, 44, 86, 100, 4, 6, 8, 10}));
}

// s8 x s8 -> s32 (the int8 GEMMs compiled for CUDA, which the host runs
// too), wrapping in s32.
TEST(HostRuntime, GemmInt8WrapsInS32) {
  auto device = HostDevice();
  ExpectGemmInt8WrapsInS32([&](const th::ThunkProgram& p) { return MustLoad(*device, RoundTrip(HostArtifact(p))); });
}

TEST(HostRuntime, GemmUnsupportedTypeIsUnimplemented) {
  th::ThunkProgram p = GemmProgram(ElementType::kF32, ElementType::kF32);
  th::GemmThunk& g = *p.root.thunks[0].As<th::GemmThunk>();
  g.lhs_type = g.rhs_type = g.out_type = ElementType::kBF16;
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(p));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r =
      exe->ExecuteSync({MakeBuffer<float>(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Unimplemented"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("dot.1"), std::string::npos) << r.status().message();
}

TEST(HostRuntime, ConditionalIndexOutOfRangeRunsLastBranch) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(ConditionalProgram(false)));
  ASSERT_NE(exe, nullptr);
  // index -> branch: 0->0 (10), 1->1 (20), 2->2 (30), 7->last (30), -1->last (30).
  std::vector<std::pair<int32_t, int32_t>> cases = {{0, 10}, {1, 20}, {2, 30}, {7, 30}, {-1, 30}};
  for (auto [index, want] : cases) {
    StatusOr<ExecutionResult> r = exe->ExecuteSync({MakeBuffer<int32_t>(ElementType::kS32, {}, {index})});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Read<int32_t>(r->outputs[0]), std::vector<int32_t>{want}) << "index " << index;
  }
}

TEST(HostRuntime, ConditionalPred) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(ConditionalProgram(true)));
  ASSERT_NE(exe, nullptr);
  // true -> branch 0 (10), false -> branch 1 (20).
  StatusOr<ExecutionResult> t = exe->ExecuteSync({MakeBuffer<uint8_t>(ElementType::kPred, {}, {1})});
  StatusOr<ExecutionResult> f = exe->ExecuteSync({MakeBuffer<uint8_t>(ElementType::kPred, {}, {0})});
  ASSERT_TRUE(t.ok() && f.ok());
  EXPECT_EQ(Read<int32_t>(t->outputs[0]), std::vector<int32_t>{10});
  EXPECT_EQ(Read<int32_t>(f->outputs[0]), std::vector<int32_t>{20});
  // Profile: the branch's memset (depth 2) precedes the conditional (depth 1).
  ASSERT_EQ(t->profile.thunks.size(), 2u);
  EXPECT_EQ(t->profile.thunks[0].name, "memset.b0");
  EXPECT_EQ(t->profile.thunks[0].depth, 2);
  EXPECT_EQ(t->profile.thunks[1].kind, ThunkKind::kConditional);
}

// While with trip_count 3: the body shifts the accumulator right (memmove
// of 12 bytes), then memsets element 0 to 1.0f; the condition must not run.
TEST(HostRuntime, WhileKnownTripCountRunsBodyNTimes) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(ShiftWhileProgram()));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r = exe->ExecuteSync({});
  ASSERT_TRUE(r.ok()) << r.status().message();
  // [0,0,0,0] -> [1,0,0,0] -> [1,1,0,0] -> [1,1,1,0].
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{1, 1, 1, 0}));
  // 3 iterations x 2 body thunks + the while itself; no condition thunk.
  ASSERT_EQ(r->profile.thunks.size(), 7u);
  EXPECT_EQ(r->profile.thunks[6].name, "while.1");
  EXPECT_EQ(r->profile.thunks[6].kind, ThunkKind::kWhile);
  for (int i = 0; i < 6; ++i) EXPECT_NE(r->profile.thunks[i].name, "cond");
}

TEST(HostRuntime, ArgumentChecking) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(CopyMemsetProgram()));
  ASSERT_NE(exe, nullptr);
  StatusOr<Event> none = exe->Execute({});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "Execute: expected 1 arguments, got 0");
  StatusOr<Event> shape = exe->Execute({MakeBuffer<float>(ElementType::kF32, {2}, {1, 2})});
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().message(), "Execute: argument 0 (parameter 0): expected f32[4], got f32[2]");
  StatusOr<Event> type = exe->Execute({MakeBuffer<int32_t>(ElementType::kS32, {4}, {1, 2, 3, 4})});
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.status().message(), "Execute: argument 0 (parameter 0): expected f32[4], got s32[4]");
  StatusOr<Event> null = exe->Execute({Buffer()});
  ASSERT_FALSE(null.ok());
  EXPECT_NE(null.status().message().find("null"), std::string::npos);
  ExecuteOptions bad_stream;
  bad_stream.stream = 3;
  StatusOr<Event> stream =
      exe->Execute({MakeBuffer<float>(ElementType::kF32, {4}, {1, 2, 3, 4})}, bad_stream);
  ASSERT_FALSE(stream.ok());
  EXPECT_NE(stream.status().message().find("no stream 3"), std::string::npos);
}

TEST(HostRuntime, InputOutputAliasDonationUpdatesInPlace) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(AliasProgram(false)));
  ASSERT_NE(exe, nullptr);
  // Not donated: the caller's buffer is untouched, the output is a copy.
  Buffer kept = MakeBuffer<float>(ElementType::kF32, {4}, {5, 6, 7, 8});
  StatusOr<ExecutionResult> r = exe->ExecuteSync({kept});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{1, 6, 7, 8}));
  EXPECT_EQ(Read<float>(kept), (std::vector<float>{5, 6, 7, 8}));
  EXPECT_FALSE(r->outputs[0].SharesMemoryWith(kept));
  // Donated: the output is the argument's memory, updated in place.
  Buffer donated = MakeBuffer<float>(ElementType::kF32, {4}, {5, 6, 7, 8});
  ExecuteOptions options;
  options.donate = {true};
  StatusOr<ExecutionResult> d = exe->ExecuteSync({donated}, options);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->outputs[0].SharesMemoryWith(donated));
  EXPECT_EQ(Read<float>(donated), (std::vector<float>{1, 6, 7, 8}));
}

TEST(HostRuntime, MustAliasRequiresDonation) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(AliasProgram(true)));
  ASSERT_NE(exe, nullptr);
  StatusOr<Event> e = exe->Execute({MakeBuffer<float>(ElementType::kF32, {4}, {5, 6, 7, 8})});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "Execute: argument 0 (parameter 0) must be donated: it must alias output {}");
}

TEST(HostRuntime, UnsupportedThunkKindIsAClearError) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(UnsupportedProgram()));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r = exe->ExecuteSync({});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "thunk 'custom-call.1': not supported on host yet: custom-call");
}

TEST(HostRuntime, FftAndIfft) {
  auto device = HostDevice();
  auto fft = MustLoad(*device, RoundTrip(HostArtifact(FftProgram(th::FftType::kFft))));
  auto ifft = MustLoad(*device, HostArtifact(FftProgram(th::FftType::kIfft)));
  ASSERT_NE(fft, nullptr);
  ASSERT_NE(ifft, nullptr);
  Buffer ones = ComplexBuffer(EightOnes());
  for (int run = 0; run < 2; ++run) {  // the second run reuses the plan
    StatusOr<ExecutionResult> r = fft->ExecuteSync({ones});
    ASSERT_TRUE(r.ok()) << r.status().message();
    ExpectNear(Read<float>(r->outputs[0]), EightAtZero());
  }
  EXPECT_EQ(Read<float>(ones), EightOnes());  // the argument is untouched
  StatusOr<ExecutionResult> r = ifft->ExecuteSync({ComplexBuffer(EightAtZero())});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectNear(Read<float>(r->outputs[0]), EightOnes());  // scaled by 1/8
}

TEST(HostRuntime, FftWithTheSameInputAndOutputSlice) {
  auto device = HostDevice();
  auto exe = MustLoad(*device, HostArtifact(FftProgram(th::FftType::kFft, /*in_place=*/true)));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r = exe->ExecuteSync({ComplexBuffer(EightOnes())});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectNear(Read<float>(r->outputs[0]), EightAtZero());
}

TEST(HostRuntime, FftThunkThatContradictsItsShapesFailsAtLoad) {
  auto device = HostDevice();
  th::ThunkProgram p = FftProgram(th::FftType::kFft);
  p.root.thunks[0].As<th::FftThunk>()->type = th::FftType::kIrfft;  // c64 -> c64 is no IRFFT
  StatusOr<std::unique_ptr<LoadedExecutable>> e = LoadedExecutable::Load(*device, HostArtifact(p));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "thunk 'fft.1': IRFFT of c64 -> c64 is not supported (FFT/IFFT c64 or c128, RFFT f32->c64 or "
            "f64->c128, IRFFT c64->f32 or c128->f64)");
}

TEST(HostRuntime, CudaDeviceIsNotAvailable) {
  EXPECT_FALSE(Device::Create(DeviceKind::kHost, 0).ok());
  StatusOr<std::unique_ptr<Device>> d = Device::Create(DeviceKind::kCuda);
  if (d.ok()) GTEST_SKIP() << "this machine has a usable CUDA device";
  EXPECT_NE(d.status().message().find("CUDA backend not built/available"), std::string::npos);
}

}  // namespace
}  // namespace kiln::runtime::testing
