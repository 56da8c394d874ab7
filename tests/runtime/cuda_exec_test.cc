// CUDA runtime executing programs on a GPU: kernels compiled by
// kiln::codegen (cubin and PTX-JIT paths), cuBLAS gemm, cuFFT fft, copies, memsets,
// while (with and without a trip count), conditional, donation, streams and
// profiling. Expected values are computed by hand in the comments. Every
// test GTEST_SKIP()s when no CUDA device is usable (machines without a GPU
// or without the CUDA headers at build time), so these never pass there.
#include <gtest/gtest.h>

#include <optional>

#include "compiler/codegen/kernel_codegen.h"
#include "tests/runtime/runtime_test_programs.h"
#include "tests/runtime/runtime_test_util.h"
#include "tests/support/must_parse.h"

namespace kiln::runtime::testing {
namespace {

using ::kiln::test_support::MustParse;
using ::kiln::thunks::ThunkKind;

std::unique_ptr<Device> CudaDeviceOrNull(std::string* why, int streams) {
  StatusOr<std::unique_ptr<Device>> d = Device::Create(DeviceKind::kCuda, streams);
  if (!d.ok()) {
    *why = d.status().message();
    return nullptr;
  }
  return std::move(*d);
}

#define KILN_CUDA_DEVICE_OR_SKIP(device, streams)                            \
  std::string device##_why;                                                  \
  std::unique_ptr<Device> device = CudaDeviceOrNull(&device##_why, streams); \
  if (!device) GTEST_SKIP() << "no usable CUDA device: " << device##_why

// An artifact for the CUDA target, round-tripped through .bef bytes:
// `program` and the compiled image (cubin for its arch unless `with_cubin`
// is false, then PTX only).
bef::Artifact CompiledArtifact(th::ThunkProgram program, const codegen::CudaImage* image = nullptr,
                               bool with_cubin = true) {
  if (!image) return RoundTrip(::kiln::testing::CudaArtifact(std::move(program)));
  std::vector<std::string> kernels;
  for (const codegen::CompiledKernel& c : image->kernels) kernels.push_back(c.name);
  std::vector<bef::CubinImage> cubins;
  if (with_cubin && !image->cubin.empty())
    cubins.push_back({std::stoi(image->arch.substr(3)), image->cubin});
  return RoundTrip(
      ::kiln::testing::CudaArtifact(std::move(program), kernels, image->ptx, std::move(cubins)));
}

std::optional<codegen::CudaImage> CompileCuda(const std::vector<codegen::KernelSpec>& specs) {
  codegen::CodegenOptions options;
  options.host = false;
  options.cuda = true;
  StatusOr<codegen::CodegenResult> r = codegen::CompileKernels(specs, options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok() || !r->cuda) return std::nullopt;
  return std::move(*r->cuda);
}

th::LaunchDims Launch(const codegen::CudaImage& image, const std::string& name) {
  for (const codegen::CompiledKernel& k : image.kernels) {
    if (k.name == name) {
      return {{k.launch.grid[0], k.launch.grid[1], k.launch.grid[2]},
              {k.launch.block[0], k.launch.block[1], k.launch.block[2]},
              k.launch.shared_mem_bytes};
    }
  }
  ADD_FAILURE() << "no kernel " << name;
  return {};
}

// WhileProgram launching the kernels of `image` (compiled from kWhileModule).
th::ThunkProgram WhileProgramFor(const codegen::CudaImage& image,
                                 std::optional<int64_t> trip_count) {
  return WhileProgram(trip_count, Launch(image, "cond_lt"), Launch(image, "body_add"));
}

TEST(CudaExec, ElementwiseKernelFromCubinAndFromPtx) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  auto module = MustParse(kFusionModule);
  ASSERT_NE(module, nullptr);
  std::optional<codegen::CudaImage> image =
      CompileCuda({{"fused_kernel", module->FindComputation("fused")}});
  ASSERT_TRUE(image.has_value());
  for (bool with_cubin : {true, false}) {
    SCOPED_TRACE(with_cubin ? "cubin" : "ptx jit");
    auto exe = MustLoad(*device,
                        CompiledArtifact(FusionProgram("fused_kernel", Launch(*image, "fused_kernel")),
                                     &*image, with_cubin));
    ASSERT_NE(exe, nullptr);
    // (x + y) * x: (1.5+2)*1.5 = 5.25, (-2+4)*-2 = -4, (3-1)*3 = 6,
    // (0.25+8)*0.25 = 2.0625, (5+0.5)*5 = 27.5, (-6+3)*-6 = 18 (all exact).
    Buffer x = MakeBuffer<float>(ElementType::kF32, {2, 3}, {1.5f, -2, 3, 0.25f, 5, -6});
    Buffer y = MakeBuffer<float>(ElementType::kF32, {2, 3}, {2, 4, -1, 8, 0.5f, 3});
    StatusOr<ExecutionResult> r = exe->ExecuteSync({x, y});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{5.25f, -4, 6, 2.0625f, 27.5f, 18}));
    EXPECT_EQ(r->outputs[0].shape().ToString(false), "f32[2,3]");
    ASSERT_EQ(r->profile.thunks.size(), 1u);
    EXPECT_EQ(r->profile.thunks[0].name, "fusion.1");
    EXPECT_EQ(r->profile.thunks[0].kind, ThunkKind::kKernel);
    EXPECT_GE(r->profile.thunks[0].duration.count(), 0);
    // Without profiling: same result, no per-thunk entries.
    ExecuteOptions quiet;
    quiet.profile = false;
    StatusOr<ExecutionResult> q = exe->ExecuteSync({x, y}, quiet);
    ASSERT_TRUE(q.ok()) << q.status().message();
    EXPECT_EQ(Read<float>(q->outputs[0]), (std::vector<float>{5.25f, -4, 6, 2.0625f, 27.5f, 18}));
    EXPECT_TRUE(q->profile.thunks.empty());
  }
}

TEST(CudaExec, HostOnlyArtifactFailsToLoad) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  bef::Artifact a = HostArtifact(FusionProgram("k", {}), {"k"}, {0x7f, 'E', 'L', 'F'});
  StatusOr<std::unique_ptr<LoadedExecutable>> e = LoadedExecutable::Load(*device, a);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "the artifact has no CUDA kernel image (compiled for: host)");
}

TEST(CudaExec, GemmF32AndF64) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]].
  auto f32 = MustLoad(*device, CompiledArtifact(GemmProgram(ElementType::kF32, ElementType::kF32)));
  ASSERT_NE(f32, nullptr);
  StatusOr<ExecutionResult> r =
      f32->ExecuteSync({MakeBuffer<float>(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{58, 64, 139, 154}));
  EXPECT_EQ(r->profile.thunks.at(0).kind, ThunkKind::kGemm);
  auto f64 = MustLoad(*device, CompiledArtifact(GemmProgram(ElementType::kF64, ElementType::kF64)));
  ASSERT_NE(f64, nullptr);
  StatusOr<ExecutionResult> d =
      f64->ExecuteSync({MakeBuffer<double>(ElementType::kF64, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(Read<double>(d->outputs[0]), (std::vector<double>{58, 64, 139, 154}));
}

// bf16 operands, f32 result: cublasGemmStridedBatchedEx on the tensor cores.
TEST(CudaExec, GemmBf16OperandsF32Result) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  auto exe = MustLoad(*device, CompiledArtifact(GemmProgram(ElementType::kBF16, ElementType::kF32)));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r = exe->ExecuteSync({GemmBf16Lhs()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{58, 64, 139, 154}));
}

// s8 x s8 -> s32 in cuBLAS' int8 form (cublasGemmStridedBatchedEx,
// CUBLAS_COMPUTE_32I): HostRuntime.GemmInt8WrapsInS32's values.
TEST(CudaExec, GemmInt8WrapsInS32) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  ExpectGemmInt8WrapsInS32([&](const th::ThunkProgram& p) { return MustLoad(*device, CompiledArtifact(p)); });
}

TEST(CudaExec, GemmBatchedTransposedF64) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  auto exe = MustLoad(*device, CompiledArtifact(GemmBatchedTransposedF64Program()));
  ASSERT_NE(exe, nullptr);
  // batch 0: 2 * [[1,2],[3,4]] x [[5,6],[7,8]] = [[38,44],[86,100]];
  // batch 1: 2 * I x [[2,3],[4,5]] = [[4,6],[8,10]]; rhs stored transposed.
  StatusOr<ExecutionResult> r = exe->ExecuteSync(
      {MakeBuffer<double>(ElementType::kF64, {2, 2, 2}, {1, 2, 3, 4, 1, 0, 0, 1}),
       MakeBuffer<double>(ElementType::kF64, {2, 2, 2}, {5, 7, 6, 8, 2, 4, 3, 5})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<double>(r->outputs[0]), (std::vector<double>{38, 44, 86, 100, 4, 6, 8, 10}));
}

TEST(CudaExec, CopyMemsetOnTwoStreamsWithProfile) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 2);
  auto exe = MustLoad(*device, CompiledArtifact(CopyMemsetProgram()));
  ASSERT_NE(exe, nullptr);
  std::vector<Event> events;
  for (int i = 0; i < 8; ++i) {
    ExecuteOptions options;
    options.stream = i % 2;
    StatusOr<Event> e =
        exe->Execute({MakeBuffer<float>(ElementType::kF32, {4}, {float(i), 0, 0, 1})}, options);
    ASSERT_TRUE(e.ok()) << e.status().message();
    events.push_back(*e);
  }
  for (int i = 0; i < 8; ++i) {
    StatusOr<ExecutionResult> r = events[i].Wait();
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{float(i), 0, 0, 1}));
    EXPECT_EQ(Read<float>(r->outputs[1]), (std::vector<float>{2, 2, 0, 0}));
    ASSERT_EQ(r->profile.thunks.size(), 4u);
    EXPECT_EQ(r->profile.thunks[2].name, "memset.3");
    EXPECT_EQ(r->profile.thunks[2].kind, ThunkKind::kMemset);
    EXPECT_EQ(r->profile.thunks[3].stream, i % 2);
    for (const ThunkProfileEntry& e : r->profile.thunks) {
      EXPECT_GE(e.duration.count(), 0);
      EXPECT_GE(e.start.count(), 0);
    }
  }
}

TEST(CudaExec, WhileReadsThePredicateOrRunsKnownTripCount) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  auto module = MustParse(kWhileModule);
  ASSERT_NE(module, nullptr);
  std::optional<codegen::CudaImage> image =
      CompileCuda({{"body_add", module->FindComputation("body")},
                   {"cond_lt", module->FindComputation("cond")}});
  ASSERT_TRUE(image.has_value());
  auto exe = MustLoad(*device, CompiledArtifact(WhileProgramFor(*image, std::nullopt), &*image));
  ASSERT_NE(exe, nullptr);
  // Counts up to 10: 3 -> 10 (7 iterations), 12 -> 12 (none), -5 -> 10 (15).
  for (auto [init, want, iterations] :
       std::vector<std::tuple<int32_t, int32_t, int>>{{3, 10, 7}, {12, 12, 0}, {-5, 10, 15}}) {
    StatusOr<ExecutionResult> r =
        exe->ExecuteSync({MakeBuffer<int32_t>(ElementType::kS32, {}, {init})});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Read<int32_t>(r->outputs[0]), std::vector<int32_t>{want}) << "init " << init;
    // copy.in, per iteration lt + add + copy.back, the final lt, the while.
    EXPECT_EQ(static_cast<int>(r->profile.thunks.size()), 3 + 3 * iterations);
    EXPECT_EQ(r->profile.thunks.back().kind, ThunkKind::kWhile);
  }
  // Known trip count 4: four increments from 100 regardless of the condition.
  auto known = MustLoad(*device, CompiledArtifact(WhileProgramFor(*image, 4), &*image));
  ASSERT_NE(known, nullptr);
  StatusOr<ExecutionResult> r =
      known->ExecuteSync({MakeBuffer<int32_t>(ElementType::kS32, {}, {100})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<int32_t>(r->outputs[0]), std::vector<int32_t>{104});
}

TEST(CudaExec, KnownTripCountWithOverlappingCopy) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  auto exe = MustLoad(*device, CompiledArtifact(ShiftWhileProgram()));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r = exe->ExecuteSync({});
  ASSERT_TRUE(r.ok()) << r.status().message();
  // [0,0,0,0] -> [1,0,0,0] -> [1,1,0,0] -> [1,1,1,0].
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{1, 1, 1, 0}));
  ASSERT_EQ(r->profile.thunks.size(), 7u);
  EXPECT_EQ(r->profile.thunks[6].name, "while.1");
}

TEST(CudaExec, ConditionalIndexAndPred) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  auto index = MustLoad(*device, CompiledArtifact(ConditionalProgram(false)));
  ASSERT_NE(index, nullptr);
  // index -> branch: 0->0 (10), 1->1 (20), 2->2 (30), 7->last (30), -1->last (30).
  for (auto [i, want] :
       std::vector<std::pair<int32_t, int32_t>>{{0, 10}, {1, 20}, {2, 30}, {7, 30}, {-1, 30}}) {
    StatusOr<ExecutionResult> r =
        index->ExecuteSync({MakeBuffer<int32_t>(ElementType::kS32, {}, {i})});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Read<int32_t>(r->outputs[0]), std::vector<int32_t>{want}) << "index " << i;
  }
  auto pred = MustLoad(*device, CompiledArtifact(ConditionalProgram(true)));
  ASSERT_NE(pred, nullptr);
  StatusOr<ExecutionResult> t =
      pred->ExecuteSync({MakeBuffer<uint8_t>(ElementType::kPred, {}, {1})});
  StatusOr<ExecutionResult> f =
      pred->ExecuteSync({MakeBuffer<uint8_t>(ElementType::kPred, {}, {0})});
  ASSERT_TRUE(t.ok() && f.ok());
  EXPECT_EQ(Read<int32_t>(t->outputs[0]), std::vector<int32_t>{10});
  EXPECT_EQ(Read<int32_t>(f->outputs[0]), std::vector<int32_t>{20});
  ASSERT_EQ(t->profile.thunks.size(), 2u);
  EXPECT_EQ(t->profile.thunks[0].name, "memset.b0");
  EXPECT_EQ(t->profile.thunks[0].depth, 2);
  EXPECT_EQ(t->profile.thunks[1].kind, ThunkKind::kConditional);
}

TEST(CudaExec, DonationUpdatesTheArgumentInPlace) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  // a0: parameter 0 f32[4], also the output; memset a0[0:4] to 1.0f.
  auto exe = MustLoad(*device, CompiledArtifact(AliasProgram(false)));
  ASSERT_NE(exe, nullptr);
  Buffer kept = MakeBuffer<float>(ElementType::kF32, {4}, {5, 6, 7, 8});
  StatusOr<ExecutionResult> r = exe->ExecuteSync({kept});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<float>(r->outputs[0]), (std::vector<float>{1, 6, 7, 8}));
  EXPECT_EQ(Read<float>(kept), (std::vector<float>{5, 6, 7, 8}));
  Buffer donated = MakeBuffer<float>(ElementType::kF32, {4}, {5, 6, 7, 8});
  ExecuteOptions options;
  options.donate = {true};
  options.host_outputs = true;  // a donated host argument is updated in place
  StatusOr<ExecutionResult> d = exe->ExecuteSync({donated}, options);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->outputs[0].SharesMemoryWith(donated));
  EXPECT_EQ(Read<float>(donated), (std::vector<float>{1, 6, 7, 8}));
}

TEST(CudaExec, UnsupportedThunkKindIsAClearError) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  auto exe = MustLoad(*device, CompiledArtifact(UnsupportedProgram()));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r = exe->ExecuteSync({});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "thunk 'custom-call.1': not supported on cuda yet: custom-call");
  // The stream is still usable after the error.
  auto gemm = MustLoad(*device, CompiledArtifact(GemmProgram(ElementType::kF32, ElementType::kF32)));
  ASSERT_NE(gemm, nullptr);
  StatusOr<ExecutionResult> g =
      gemm->ExecuteSync({MakeBuffer<float>(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(Read<float>(g->outputs[0]), (std::vector<float>{58, 64, 139, 154}));
}

TEST(CudaExec, FftAndIfftOnTwoStreams) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 2);
  auto fft = MustLoad(*device, CompiledArtifact(FftProgram(th::FftType::kFft)));
  auto ifft = MustLoad(*device, CompiledArtifact(FftProgram(th::FftType::kIfft)));
  ASSERT_NE(fft, nullptr);
  ASSERT_NE(ifft, nullptr);
  for (int stream = 0; stream < 2; ++stream) {  // one cuFFT plan per stream
    ExecuteOptions options;
    options.stream = stream;
    options.profile = true;
    StatusOr<Event> f = fft->Execute({ComplexBuffer(EightOnes())}, options);
    ASSERT_TRUE(f.ok()) << f.status().message();
    StatusOr<ExecutionResult> r = f->Wait();
    ASSERT_TRUE(r.ok()) << r.status().message();
    ExpectNear(Read<float>(r->outputs[0]), EightAtZero());
    ASSERT_EQ(r->profile.thunks.size(), 1u);
    EXPECT_EQ(r->profile.thunks[0].kind, ThunkKind::kFft);
    // IFFT: cuFFT's unnormalized inverse, then cuBLAS scales by 1/8.
    StatusOr<Event> i = ifft->Execute({ComplexBuffer(EightAtZero())}, options);
    ASSERT_TRUE(i.ok()) << i.status().message();
    r = i->Wait();
    ASSERT_TRUE(r.ok()) << r.status().message();
    ExpectNear(Read<float>(r->outputs[0]), EightOnes());
  }
}

TEST(CudaExec, FftWithTheSameInputAndOutputSlice) {
  KILN_CUDA_DEVICE_OR_SKIP(device, 1);
  auto exe = MustLoad(*device, CompiledArtifact(FftProgram(th::FftType::kFft, /*in_place=*/true)));
  ASSERT_NE(exe, nullptr);
  StatusOr<ExecutionResult> r = exe->ExecuteSync({ComplexBuffer(EightOnes())});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectNear(Read<float>(r->outputs[0]), EightAtZero());
}

TEST(CudaExecInputs, ArtifactsAreValidWithoutADevice) {
  auto module = MustParse(kWhileModule);
  ASSERT_NE(module, nullptr);
  std::optional<codegen::CudaImage> image =
      CompileCuda({{"body_add", module->FindComputation("body")},
                   {"cond_lt", module->FindComputation("cond")}});
  ASSERT_TRUE(image.has_value());
  EXPECT_EQ(image->arch, "sm_90");
  EXPECT_FALSE(image->ptx.empty());
  th::LaunchDims l = Launch(*image, "body_add");
  EXPECT_EQ(l.grid.x, 1);  // one element: one block
  EXPECT_EQ(l.block.x, 256);
  for (const bef::Artifact& a :
       {CompiledArtifact(WhileProgramFor(*image, std::nullopt), &*image),
        CompiledArtifact(WhileProgramFor(*image, std::nullopt), &*image, false),
        CompiledArtifact(GemmProgram(ElementType::kF32, ElementType::kF32)),
        CompiledArtifact(GemmProgram(ElementType::kF64, ElementType::kF64)), CompiledArtifact(CopyMemsetProgram()),
        CompiledArtifact(ConditionalProgram(true)), CompiledArtifact(ConditionalProgram(false))}) {
    Status s = bef::ValidateArtifact(a);
    EXPECT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(a.kernel_images.size(), 1u);
    EXPECT_EQ(a.kernel_images[0].kind, bef::TargetKind::kCuda);
  }
  bef::Artifact with_cubin = CompiledArtifact(WhileProgramFor(*image, std::nullopt), &*image);
  if (!image->cubin.empty()) {
    ASSERT_EQ(with_cubin.kernel_images[0].cubins.size(), 1u);
    EXPECT_EQ(with_cubin.kernel_images[0].cubins[0].sm_arch, 90);
  }
}

}  // namespace
}  // namespace kiln::runtime::testing
