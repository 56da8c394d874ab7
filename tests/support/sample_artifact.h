// Hand-built thunk programs and artifacts for the thunks/serialization tests
// and the .bef load benchmark.
//
// SampleArtifact() uses every thunk kind, tuple parameters and results, an
// input/output alias, a constant and two kernel images, and passes
// ValidateArtifact; every size below is written out by hand from the shapes
// (e.g. f32[4,4] = 16 elements x 4 bytes = 64 bytes) so the tests do not
// depend on the code under test to build their inputs.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "serialization/artifact.h"

namespace kiln::testing {

namespace th = ::kiln::thunks;

inline th::Thunk MakeThunk(std::string name, th::ThunkBody body,
                           std::vector<th::HloInstructionRef> hlo = {}) {
  th::Thunk t;
  t.info.profile_name = std::move(name);
  t.info.hlo = std::move(hlo);
  t.body = std::move(body);
  return t;
}

// The artifact's .bef bytes (empty, with the test failed, if it does not
// serialize).
inline std::vector<uint8_t> Serialize(const bef::Artifact& a) {
  StatusOr<std::vector<uint8_t>> bytes = bef::SerializeArtifact(a);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

// The loader's error for `bytes`, or "OK".
inline std::string LoadError(const std::vector<uint8_t>& bytes) {
  StatusOr<bef::Artifact> a = bef::LoadArtifact(bytes);
  return a.ok() ? "OK" : a.status().message();
}

inline th::BufferSlice S(int32_t allocation, int64_t offset, int64_t size) {
  return th::BufferSlice{allocation, offset, size};
}

// A parameter, a temporary and an output, for programs whose thunks say
// which allocation is read before it is written: a0 parameter 0 (64 bytes),
// a1 temp (128 bytes), a2 output (64 bytes), the result leaf a2[0:64]; all
// f32[16] to the caller. `thunks` make up the root.
inline th::ThunkProgram ParameterTempOutputProgram(std::vector<th::Thunk> thunks) {
  th::ThunkProgram p;
  p.allocations = {
      {64, 64, th::ParameterRef{0, {}}, std::nullopt, std::nullopt},
      {128, 64, std::nullopt, std::nullopt, std::nullopt},
      {64, 64, std::nullopt, ShapeIndex{}, std::nullopt},
  };
  Shape f32(ElementType::kF32, {16});
  p.signature.parameters = {f32};
  p.signature.result = f32;
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 64)}};
  p.signature.result_leaves = {{{}, S(2, 0, 64)}};
  p.root.thunks = std::move(thunks);
  return p;
}

inline std::vector<uint8_t> FloatBytes(std::vector<float> values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Allocations of the sample program:
//   a0  64 bytes  parameter 0 {}            f32[4,4]
//   a1  32 bytes  parameter 1 {0}, output {1} (aliased)  f32[8]
//   a2   4 bytes  parameter 1 {1}           s32[]
//   a3  64 bytes  output {0}                f32[4,4]
//   a4  16 bytes  constant 0                f32[4] {1,2,3,4}
//   a5 4096 bytes temp
inline th::ThunkProgram SampleProgram() {
  th::ThunkProgram p;
  auto param = [](int64_t n, ShapeIndex i) { return th::ParameterRef{n, std::move(i)}; };
  p.allocations = {
      {64, 64, param(0, {}), std::nullopt, std::nullopt},
      {32, 64, param(1, {0}), ShapeIndex{1}, std::nullopt},
      {4, 64, param(1, {1}), std::nullopt, std::nullopt},
      {64, 64, std::nullopt, ShapeIndex{0}, std::nullopt},
      {16, 64, std::nullopt, std::nullopt, 0},
      {4096, 64, std::nullopt, std::nullopt, std::nullopt},
  };
  p.constants = {{"constant.1", FloatBytes({1, 2, 3, 4})}};

  th::Signature& sig = p.signature;
  Shape f32_4x4(ElementType::kF32, {4, 4});
  f32_4x4.set_layout(Layout{{1, 0}, {}, 0, 0, ""});
  Shape f32_8(ElementType::kF32, {8});
  sig.parameters = {f32_4x4, Shape::Tuple({f32_8, Shape::Scalar(ElementType::kS32)})};
  sig.result = Shape::Tuple({f32_4x4, f32_8});
  sig.aliases = {{{1}, 1, {0}, false}};
  sig.parameter_leaves = {{0, {}, S(0, 0, 64)}, {1, {0}, S(1, 0, 32)}, {1, {1}, S(2, 0, 4)}};
  sig.result_leaves = {{{0}, S(3, 0, 64)}, {{1}, S(1, 0, 32)}};

  std::vector<th::Thunk>& root = p.root.thunks;

  th::KernelThunk kernel{"fusion_3",
                         {{S(0, 0, 64), false}, {S(4, 0, 16), false}, {S(5, 0, 64), true}},
                         {{1, 1, 1}, {64, 1, 1}, 0}};
  th::Thunk fusion = MakeThunk("fusion.3", kernel,
                               {{"add.1", "add", "jit(f)/add"}, {"multiply.2", "multiply", ""}});
  fusion.info.cost = {32, 0, 144, 64};
  root.push_back(fusion);

  // 4x4 by 4x4 f32: every operand 16 elements = 64 bytes, leading dims 4.
  th::GemmThunk gemm;
  gemm.lhs = S(0, 0, 64);
  gemm.rhs = S(5, 0, 64);
  gemm.out = S(3, 0, 64);
  gemm.workspace = S(5, 1024, 1024);
  gemm.m = gemm.n = gemm.k = 4;
  gemm.lhs_leading_dim = gemm.rhs_leading_dim = gemm.out_leading_dim = 4;
  gemm.rhs_transposed = true;
  gemm.beta = 0.5;
  gemm.tf32 = true;
  root.push_back(MakeThunk("dot.4", gemm, {{"dot.4", "dot", ""}}));

  // NHWC f32[1,4,4,1] (64 bytes) with an HWIO f32[3,3,1,1] filter (36 bytes),
  // 3x3 window padded 1 on each side: b01f_01io->b01f.
  th::ConvolutionThunk conv;
  conv.operands = {S(5, 0, 64), S(5, 64, 36)};
  conv.operand_shapes = {Shape(ElementType::kF32, {1, 4, 4, 1}),
                         Shape(ElementType::kF32, {3, 3, 1, 1})};
  conv.result = S(5, 128, 64);
  conv.result_shape = Shape(ElementType::kF32, {1, 4, 4, 1});
  conv.scratch = S(5, 3072, 512);
  conv.dimensions = {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  conv.window = {{3, 1, 1, 1, 1, 1, false}, {3, 1, 1, 1, 1, 1, false}};
  root.push_back(MakeThunk("convolution.5", conv));

  // c64[8]: 8 elements x 8 bytes = 64 bytes each way.
  th::FftThunk fft{th::FftType::kFft, {8}, S(5, 256, 64), S(5, 320, 64),
                   Shape(ElementType::kC64, {8}), Shape(ElementType::kC64, {8})};
  root.push_back(MakeThunk("fft.6", fft));

  root.push_back(MakeThunk("copy.7", th::CopyThunk{S(0, 0, 64), S(5, 512, 64)}));
  root.push_back(MakeThunk("memset.8", th::MemsetThunk{S(5, 576, 64), 0x3f800000u}));

  th::SequenceThunk nested;
  nested.thunks.push_back(MakeThunk("copy.13", th::CopyThunk{S(5, 0, 16), S(5, 16, 16)}));
  root.push_back(MakeThunk("call.12", nested));

  th::WhileThunk loop;
  loop.condition.thunks.push_back(MakeThunk(
      "compare.20", th::KernelThunk{"compare_20", {{S(2, 0, 4), false}, {S(5, 700, 1), true}},
                                    {{1, 1, 1}, {1, 1, 1}, 0}}));
  loop.predicate = S(5, 700, 1);
  loop.body.thunks.push_back(MakeThunk(
      "add.21", th::KernelThunk{"add_21", {{S(5, 704, 4), true}}, {{1, 1, 1}, {1, 1, 1}, 16}}));
  loop.trip_count = 10;
  root.push_back(MakeThunk("while.9", loop));

  th::ConditionalThunk cond;
  cond.branch_index = S(2, 0, 4);
  for (uint32_t b = 0; b < 3; ++b) {
    th::SequenceThunk branch;
    branch.thunks.push_back(
        MakeThunk("memset.b" + std::to_string(b), th::MemsetThunk{S(5, 800, 4), b}));
    cond.branches.push_back(branch);
  }
  root.push_back(MakeThunk("conditional.10", cond));

  // Collectives on a grid of 4 replicas; the all-reduce starts async id 0,
  // which the collective-done at the end completes.
  p.replica_count = 4;
  th::CollectiveConfig groups;
  groups.replica_groups = {{0, 1}, {2, 3}};
  groups.channel_id = 1;
  groups.device_groups = {{0, 1}, {2, 3}};
  th::CollectiveConfig async_groups = groups;
  async_groups.async_id = 0;
  root.push_back(MakeThunk(
      "all-reduce.11",
      th::AllReduceThunk{async_groups, th::ReductionKind::kMax,
                         {{S(3, 0, 64), S(5, 1024, 64), ElementType::kF32, 16, {16}}}}));
  root.push_back(MakeThunk(
      "all-gather.14",
      th::AllGatherThunk{groups, 0, {{S(5, 0, 16), S(5, 2048, 32), ElementType::kF32, 4, {4}}}}));
  th::CollectiveConfig everyone;
  everyone.replica_groups = {{0, 1, 2, 3}};
  everyone.use_global_device_ids = true;
  everyone.device_groups = {{0, 1, 2, 3}};
  root.push_back(MakeThunk("reduce-scatter.15",
                           th::ReduceScatterThunk{everyone,
                                                  th::ReductionKind::kSum,
                                                  0,
                                                  {{S(5, 0, 64), S(5, 2112, 16), ElementType::kF32, 16, {16}}}}));
  root.push_back(MakeThunk(
      "all-to-all.16",
      th::AllToAllThunk{groups, 0, {{S(5, 0, 64), S(5, 2200, 64), ElementType::kS32, 16, {16}}}}));
  th::CollectiveConfig permute;
  permute.channel_id = 2;
  root.push_back(MakeThunk("collective-permute.17",
                           th::CollectivePermuteThunk{permute,
                                                      {{0, 1}, {1, 0}},
                                                      {S(5, 0, 64), S(5, 2300, 64), ElementType::kBF16, 32, {32}},
                                                      {{0, 1}, {1, 0}, {2, 3}, {3, 2}}}));
  root.push_back(MakeThunk("custom-call.18",
                           th::CustomCallThunk{"my_target",
                                               {S(0, 0, 64)},
                                               {S(5, 3000, 64)},
                                               std::string("{\"k\": 1}\0\x01\xff", 11),
                                               2}));
  root.push_back(MakeThunk("rng-get-and-update-state.19",
                           th::RngGetAndUpdateStateThunk{S(5, 3100, 16), -131072}));
  // One f32[4,4] (64 bytes) factored in place, its s32 status (4 bytes).
  th::CholeskyThunk chol{S(5, 3200, 64), S(5, 3264, 4), ElementType::kF32, 4, 1, true};
  root.push_back(MakeThunk("cholesky.19", chol));
  // Two f64 systems: a [2,2,2] (64 bytes), b [2,2,3] (96 bytes), left side.
  th::TriangularSolveThunk solve{S(5, 3328, 64), S(5, 3392, 96), ElementType::kF64, 2, 3, 2, true, false, true,
                                 th::TriangularSolveTranspose::kAdjoint};
  root.push_back(MakeThunk("triangular-solve.22", solve));
  // gesdd of one f32[3,2] (24 bytes), reduced: s [2], u [3,2], vt [2,2], info.
  th::LinalgThunk svd{th::LinalgOp::kGesdd, ElementType::kF32, 3, 2, 0, 1, true, 'S', S(5, 3584, 24), {},
                      {S(5, 3616, 8), S(5, 3632, 24), S(5, 3664, 16), S(5, 3680, 4)}};
  root.push_back(MakeThunk("svd.23", svd));
  // Two rows of 8 bf16 keys (32 bytes) descending, with s32 payloads (64).
  th::RadixSortThunk sort{S(5, 3712, 32), S(5, 3744, 32), S(5, 3776, 64), S(5, 3840, 64), ElementType::kBF16,
                          ElementType::kS32, 2, 8, th::RadixKeyOrder::kFloatNumpy, true};
  root.push_back(MakeThunk("sort.24", sort));
  root.push_back(MakeThunk("collective-broadcast.25",
                           th::CollectiveBroadcastThunk{
                               groups, {{S(5, 3904, 16), S(5, 3920, 16), ElementType::kU8, 16, {4, 4}}}}));
  root.push_back(MakeThunk("all-reduce-done.26", th::CollectiveDoneThunk{0}));
  root.push_back(MakeThunk("replica-id.27", th::DeviceIdThunk{th::DeviceIdKind::kPartition, S(5, 3936, 4)}));
  return p;
}

inline bef::Artifact SampleArtifact() {
  bef::Artifact a;
  a.producer = "kiln-test 0.1";
  a.targets = {"cuda", "host-x86_64"};
  const std::vector<std::string> kernels = {"fusion_3", "compare_20", "add_21"};
  bef::KernelImage cuda;
  cuda.target = "cuda";
  cuda.kind = bef::TargetKind::kCuda;
  cuda.cubins = {{90, {0x7f, 'E', 'L', 'F', 1, 2, 3}}, {80, {0x7f, 'E', 'L', 'F', 4}}};
  cuda.ptx = ".version 8.0\n.target sm_90\n";
  bef::KernelImage host;
  host.target = "host-x86_64";
  host.kind = bef::TargetKind::kHost;
  host.shared_object = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  for (const std::string& k : kernels) {
    cuda.kernels.push_back({k, {{1, 1, 1}, {64, 1, 1}, 0}});
    host.kernels.push_back({k, {}});
  }
  a.kernel_images = {cuda, host};
  a.program = SampleProgram();
  a.hlo_text = "HloModule sample\n\nENTRY main {\n  ROOT p = f32[4,4] parameter(0)\n}\n";
  return a;
}

// An artifact for one target only: `program`, and one kernel image of
// `kind` (target "host" or "cuda") that lists `kernels`; the caller fills in
// the image's code.
inline bef::Artifact SingleTargetArtifact(bef::TargetKind kind, th::ThunkProgram program,
                                          const std::vector<std::string>& kernels) {
  bef::Artifact a;
  a.producer = "kiln-test";
  std::string target = kind == bef::TargetKind::kHost ? "host" : "cuda";
  a.targets = {target};
  bef::KernelImage image;
  image.target = target;
  image.kind = kind;
  for (const std::string& k : kernels) image.kernels.push_back({k, {}});
  a.kernel_images = {image};
  a.program = std::move(program);
  return a;
}

// An artifact for the host target only: `program`, and a host image whose
// shared object is `so` and which lists `kernels`.
inline bef::Artifact HostArtifact(th::ThunkProgram program, std::vector<std::string> kernels = {},
                                  std::vector<uint8_t> so = {}) {
  bef::Artifact a = SingleTargetArtifact(bef::TargetKind::kHost, std::move(program), kernels);
  a.kernel_images[0].shared_object = std::move(so);
  return a;
}

// An artifact for the CUDA target only: `program`, and a CUDA image with
// `ptx` and `cubins` which lists `kernels`.
inline bef::Artifact CudaArtifact(th::ThunkProgram program, std::vector<std::string> kernels = {},
                                  std::string ptx = "", std::vector<bef::CubinImage> cubins = {}) {
  bef::Artifact a = SingleTargetArtifact(bef::TargetKind::kCuda, std::move(program), kernels);
  a.kernel_images[0].ptx = std::move(ptx);
  a.kernel_images[0].cubins = std::move(cubins);
  return a;
}

// One parameter, one constant, one kernel: small enough to try every
// truncation length.
inline bef::Artifact SmallArtifact() {
  bef::Artifact a = HostArtifact({}, {"k0"}, {0x7f, 'E', 'L', 'F'});
  th::ThunkProgram& p = a.program;
  p.allocations = {{16, 64, th::ParameterRef{0, {}}, std::nullopt, std::nullopt},
                   {16, 64, std::nullopt, ShapeIndex{}, std::nullopt},
                   {16, 64, std::nullopt, std::nullopt, 0}};
  p.constants = {{"c", FloatBytes({1, 2, 3, 4})}};
  p.signature.parameters = {Shape(ElementType::kF32, {4})};
  p.signature.result = Shape(ElementType::kF32, {4});
  p.signature.parameter_leaves = {{0, {}, S(0, 0, 16)}};
  p.signature.result_leaves = {{{}, S(1, 0, 16)}};
  p.root.thunks.push_back(MakeThunk(
      "add", th::KernelThunk{"k0", {{S(0, 0, 16), false}, {S(2, 0, 16), false}, {S(1, 0, 16), true}},
                             {{1, 1, 1}, {4, 1, 1}, 0}}));
  return a;
}

}  // namespace kiln::testing
