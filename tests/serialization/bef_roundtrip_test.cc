// Round trips of the .bef format: serialize -> load gives back an equal
// artifact for every thunk kind and every optional/default field, bytes are
// deterministic, constants sit 64-byte aligned in the file, and the file
// helpers work. Expected values are stated by hand (sample program in
// tests/support/sample_artifact.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "serialization/artifact.h"
#include "tests/support/sample_artifact.h"
#include "thunks/program_text.h"

namespace kiln::bef {
namespace {

using ::kiln::testing::FloatBytes;
using ::kiln::testing::SampleArtifact;
using ::kiln::testing::Serialize;
namespace th = ::kiln::thunks;

Artifact Load(const std::vector<uint8_t>& bytes) {
  StatusOr<Artifact> a = LoadArtifact(bytes);
  EXPECT_TRUE(a.ok()) << a.status().message();
  return a.ok() ? *a : Artifact{};
}

TEST(BefRoundTrip, SampleWithEveryThunkKind) {
  const Artifact original = SampleArtifact();
  const Artifact loaded = Load(Serialize(original));
  EXPECT_TRUE(loaded == original);
  // Field-group checks so a failure says where the difference is.
  EXPECT_EQ(loaded.producer, "kiln-test 0.1");
  EXPECT_EQ(loaded.targets, (std::vector<std::string>{"cuda", "host-x86_64"}));
  EXPECT_TRUE(loaded.kernel_images == original.kernel_images);
  EXPECT_TRUE(loaded.program.allocations == original.program.allocations);
  EXPECT_TRUE(loaded.program.constants == original.program.constants);
  EXPECT_TRUE(loaded.program.signature == original.program.signature);
  EXPECT_EQ(loaded.program.replica_count, 4);
  EXPECT_EQ(loaded.program.num_partitions, 1);
  ASSERT_EQ(loaded.program.root.thunks.size(), 23u);
  for (size_t i = 0; i < 23; ++i) {
    EXPECT_TRUE(loaded.program.root.thunks[i] == original.program.root.thunks[i])
        << "thunk " << i << ": " << th::ThunkLine(loaded.program.root.thunks[i]);
  }
  EXPECT_EQ(loaded.hlo_text, original.hlo_text);
  EXPECT_EQ(th::ProgramToText(loaded.program), th::ProgramToText(original.program));
}

TEST(BefRoundTrip, OptionalFieldsAbsentAndNonDefaultValues) {
  Artifact a = SampleArtifact();
  th::ThunkProgram& p = a.program;
  // Clear every optional and move every field with a schema default off it.
  p.allocations[5].alignment = 256;
  auto& gemm = *p.root.thunks[1].As<th::GemmThunk>();
  gemm.workspace.reset();
  gemm.alpha_real = 2.5;
  gemm.alpha_imag = -1.0;
  gemm.lhs_type = gemm.rhs_type = ElementType::kBF16;  // 64-byte slices now over-sized: fine
  gemm.tf32 = false;  // TF32 applies to f32 GEMMs only
  auto& conv = *p.root.thunks[2].As<th::ConvolutionThunk>();
  conv.scratch.reset();
  conv.kind = th::ConvolutionKind::kBackwardFilter;
  conv.feature_group_count = 1;
  conv.batch_group_count = 1;
  conv.window[0].reversal = true;
  auto& fft = *p.root.thunks[3].As<th::FftThunk>();
  fft.type = th::FftType::kIrfft;
  p.root.thunks[7].As<th::WhileThunk>()->trip_count.reset();
  p.root.thunks[9].As<th::AllReduceThunk>()->config.channel_id.reset();
  // The tuple form on groups of one device (one buffer each).
  auto& a2a = *p.root.thunks[12].As<th::AllToAllThunk>();
  a2a.split_dimension.reset();
  a2a.config.device_groups = {{0}, {1}, {2}, {3}};
  p.root.thunks[14].As<th::CustomCallThunk>()->backend_config.clear();
  p.root.thunks[15].As<th::RngGetAndUpdateStateThunk>()->delta = 0;
  auto& chol = *p.root.thunks[16].As<th::CholeskyThunk>();
  chol.lower = false;
  chol.batch = 0;
  chol.type = ElementType::kC128;
  auto& solve = *p.root.thunks[17].As<th::TriangularSolveThunk>();
  solve.transpose_a = th::TriangularSolveTranspose::kNoTranspose;
  solve.batch = 1;
  solve.left_side = false;
  solve.m = 3;
  solve.n = 2;
  // orgqr carries tau, which the other routines leave out.
  auto& linalg = *p.root.thunks[18].As<th::LinalgThunk>();
  linalg.op = th::LinalgOp::kOrgqr;
  linalg.type = ElementType::kF64;
  linalg.k = 1;
  linalg.batch = 0;
  linalg.lower = false;
  linalg.mode = 0;
  linalg.tau = th::BufferSlice{5, 3700, 8};
  linalg.results.clear();
  auto& sort = *p.root.thunks[19].As<th::RadixSortThunk>();
  sort.values.reset();  // keys only
  sort.values_out.reset();
  sort.order = th::RadixKeyOrder::kFloatTotal;
  sort.descending = false;
  p.root.thunks[0].info = {};  // no name, no HLO, zero cost
  a.hlo_text.clear();
  a.producer.clear();
  EXPECT_TRUE(Load(Serialize(a)) == a);

  // Zero-valued optionals are distinct from absent ones.
  p.root.thunks[7].As<th::WhileThunk>()->trip_count = 0;
  p.root.thunks[9].As<th::AllReduceThunk>()->config.channel_id = 0;
  p.root.thunks[12].As<th::AllToAllThunk>()->split_dimension = 0;
  const Artifact loaded = Load(Serialize(a));
  EXPECT_EQ(loaded.program.root.thunks[7].As<th::WhileThunk>()->trip_count, 0);
  EXPECT_EQ(loaded.program.root.thunks[9].As<th::AllReduceThunk>()->config.channel_id, 0);
  EXPECT_EQ(loaded.program.root.thunks[12].As<th::AllToAllThunk>()->split_dimension, 0);
}

TEST(BefRoundTrip, ShapesKeepLayoutsAndDynamicDimensions) {
  Artifact a = SampleArtifact();
  auto& conv = *a.program.root.thunks[2].As<th::ConvolutionThunk>();
  Layout tiled{{3, 2, 1, 0}, {Tile{{8, 128}}, Tile{{2, Tile::kCombined}}}, 16, 1, "#(s32)"};
  conv.result_shape.set_layout(tiled);
  auto& fft = *a.program.root.thunks[3].As<th::FftThunk>();
  fft.input_shape = Shape(ElementType::kC64, {8});
  fft.input_shape.set_dynamic_dim(0, true);
  // A nested tuple result with a token leaf (which needs no slice).
  Shape& result = a.program.signature.result;
  result = Shape::Tuple({result.tuple_shape(0), Shape::Tuple({result.tuple_shape(1), Shape::Token()})});
  a.program.signature.result_leaves[1].index = {1, 0};
  a.program.signature.aliases[0].output_index = {1, 0};
  a.program.allocations[1].output = ShapeIndex{1, 0};
  const Artifact loaded = Load(Serialize(a));
  EXPECT_TRUE(loaded == a);
  const auto& loaded_conv = *loaded.program.root.thunks[2].As<th::ConvolutionThunk>();
  EXPECT_EQ(loaded_conv.result_shape.ToString(), "f32[1,4,4,1]{3,2,1,0:T(8,128)(2,*)#(s32)E(16)S(1)}");
  EXPECT_EQ(loaded.program.root.thunks[3].As<th::FftThunk>()->input_shape.ToString(), "c64[<=8]");
  EXPECT_EQ(loaded.program.signature.result.ToString(), "(f32[4,4]{1,0}, (f32[8], token[]))");
}

TEST(BefDeterminism, SameArtifactSameBytes) {
  const Artifact a = SampleArtifact();
  const std::vector<uint8_t> first = Serialize(a);
  const Artifact copy = a;  // different heap addresses, same value
  EXPECT_EQ(Serialize(copy), first);
  EXPECT_EQ(Serialize(SampleArtifact()), first);
  // Loading and writing again reproduces the file exactly.
  EXPECT_EQ(Serialize(Load(first)), first);
  // And the bytes do depend on the content.
  Artifact changed = a;
  changed.program.root.thunks[4].As<th::CopyThunk>()->destination.offset = 520;
  EXPECT_NE(Serialize(changed), first);
}

TEST(BefLayout, IdentifierSizeAndConstantAlignment) {
  const std::vector<uint8_t> bytes = Serialize(SampleArtifact());
  ASSERT_GT(bytes.size(), 64u);
  EXPECT_EQ(std::string(bytes.begin() + 4, bytes.begin() + 8), "KBEF");
  // A 64-byte aligned vector raises the buffer's alignment to 64, so the
  // whole file is padded to a multiple of 64.
  EXPECT_EQ(bytes.size() % 64, 0u);
  // The constant's 16 bytes (1.0f..4.0f) occur once, at a 64-aligned offset.
  const std::vector<uint8_t> constant = FloatBytes({1, 2, 3, 4});
  auto it = std::search(bytes.begin(), bytes.end(), constant.begin(), constant.end());
  ASSERT_NE(it, bytes.end());
  EXPECT_EQ((it - bytes.begin()) % 64, 0);
  EXPECT_EQ(std::search(it + 1, bytes.end(), constant.begin(), constant.end()), bytes.end());
}

TEST(BefLoad, UnalignedInputMemory) {
  const std::vector<uint8_t> bytes = Serialize(SampleArtifact());
  std::vector<uint8_t> shifted(bytes.size() + 3);
  std::memcpy(shifted.data() + 3, bytes.data(), bytes.size());
  StatusOr<Artifact> a = LoadArtifact(std::span<const uint8_t>(shifted.data() + 3, bytes.size()));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_TRUE(*a == SampleArtifact());
}

TEST(BefSerialize, RefusesInvalidArtifacts) {
  Artifact a = SampleArtifact();
  a.program.root.thunks[4].As<th::CopyThunk>()->source.allocation = 9;
  StatusOr<std::vector<uint8_t>> bytes = SerializeArtifact(a);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(),
            "cannot serialize artifact: copy thunk 'copy.7': source slice refers to allocation 9 "
            "but the program has 6");

  a = SampleArtifact();
  a.kernel_images[1].kernels.pop_back();  // host image loses add_21
  bytes = SerializeArtifact(a);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(),
            "cannot serialize artifact: kernel 'add_21' of kernel thunk 'add.21' is missing from "
            "the kernel image for 'host-x86_64'");

  a = SampleArtifact();
  a.targets.push_back("rocm");
  bytes = SerializeArtifact(a);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(), "cannot serialize artifact: target 'rocm' has no kernel image");
}

// A host kernel entry counts work units and iterations per unit in int64,
// past any CUDA grid bound (a reduction of 2^32 elements is one unit of
// 2^32); a CUDA entry keeps the driver's bounds.
TEST(BefSerialize, HostWorkUnitsAreNotCudaLaunchDimensions) {
  Artifact a = SampleArtifact();
  KernelImage& host = a.kernel_images[1];
  ASSERT_EQ(host.kind, TargetKind::kHost);
  host.kernels[0].launch.grid.x = int64_t{3} << 31;  // units
  host.kernels[1].launch.block.x = int64_t{1} << 32;  // iterations of one unit
  StatusOr<std::vector<uint8_t>> bytes = SerializeArtifact(a);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  StatusOr<Artifact> loaded = LoadArtifact(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->kernel_images[1].kernels[0].launch.grid.x, int64_t{3} << 31);
  EXPECT_EQ(loaded->kernel_images[1].kernels[1].launch.block.x, int64_t{1} << 32);

  host.kernels[0].launch.grid.x = 0;
  bytes = SerializeArtifact(a);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(),
            "cannot serialize artifact: host kernel image 'host-x86_64' kernel 'fusion_3': invalid "
            "host work units 0 of 1 iterations");

  a = SampleArtifact();
  a.kernel_images[0].kernels[2].launch.grid.x = int64_t{3} << 31;
  bytes = SerializeArtifact(a);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(),
            "cannot serialize artifact: cuda kernel image 'cuda' kernel 'add_21': invalid launch "
            "dimensions (6442450944,1,1)");
}

TEST(BefFile, WriteAndLoad) {
  const std::string path = ::testing::TempDir() + "/bef_roundtrip_test.bef";
  ASSERT_TRUE(WriteArtifactFile(SampleArtifact(), path).ok());
  StatusOr<Artifact> a = LoadArtifactFile(path);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_TRUE(*a == SampleArtifact());
  std::remove(path.c_str());

  StatusOr<Artifact> missing = LoadArtifactFile(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot open " + path + ": No such file or directory");
}

}  // namespace
}  // namespace kiln::bef
