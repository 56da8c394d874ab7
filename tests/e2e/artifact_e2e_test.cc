// Properties of the artifacts bef-compile produces: deterministic bytes,
// PTX that ptxas accepts for sm_90, lossless .bef round trips, and
// one-line errors for modules outside the supported op set.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "compiler/passes/row_normalization.h"
#include "serialization/artifact.h"
#include "tests/e2e/e2e_test_util.h"
#include "tests/support/corpus_files.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

std::string CorpusPath(const std::string& stem) {
  for (const std::string& f : test_support::CorpusFiles())
    if (fs::path(f).stem().string() == stem) return f;
  return "";
}

std::unique_ptr<hlo::HloModule> MustParseFile(const std::string& path) {
  auto module = hlo::ParseHloModuleFile(path);
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

bool HavePtxas() {
  const char* home = std::getenv("CUDA_HOME");
  return (home && fs::exists(std::string(home) + "/bin/ptxas")) || fs::exists("/usr/local/cuda/bin/ptxas");
}

const char* const kModules[] = {"layer_norm_1x4096x768_bf16", "mha_block_1x12x128x64_bf16",
                                "while_with_known_trip_count", "case_conditional.1"};

TEST(ArtifactE2ETest, SameInputGivesByteIdenticalBef) {
  for (const char* stem : kModules) {
    SCOPED_TRACE(stem);
    std::string path = CorpusPath(stem);
    if (path.empty()) GTEST_SKIP() << "corpus not found";
    compiler::CompileOptions options;
    options.cuda = HavePtxas();
    // Two independent parses: nothing may depend on pointer values.
    auto first = MustParseFile(path);
    auto second = MustParseFile(path);
    ASSERT_TRUE(first && second);
    auto a = compiler::CompileModule(*first, options);
    auto b = compiler::CompileModule(*second, options);
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    auto bytes_a = bef::SerializeArtifact(*a);
    auto bytes_b = bef::SerializeArtifact(*b);
    ASSERT_TRUE(bytes_a.ok() && bytes_b.ok());
    EXPECT_EQ(*bytes_a, *bytes_b);
    // And the file round-trips to the same artifact.
    auto loaded = bef::LoadArtifact(*bytes_a);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    EXPECT_TRUE(*loaded == *a);
  }
}

TEST(ArtifactE2ETest, EveryGeneratedPtxAssemblesForSm90) {
  if (!HavePtxas()) GTEST_SKIP() << "ptxas not installed";
  for (const char* stem : kModules) {
    SCOPED_TRACE(stem);
    std::string path = CorpusPath(stem);
    if (path.empty()) GTEST_SKIP() << "corpus not found";
    auto module = MustParseFile(path);
    ASSERT_TRUE(module);
    compiler::CompileOptions options;
    options.host = false;
    options.cuda = true;
    options.cuda_arch = "sm_90";
    auto artifact = compiler::CompileModule(*module, options);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    ASSERT_EQ(artifact->kernel_images.size(), 1u);
    const bef::KernelImage& image = artifact->kernel_images[0];
    EXPECT_EQ(image.kind, bef::TargetKind::kCuda);
    EXPECT_NE(image.ptx.find(".target sm_90"), std::string::npos);
    // The compiler ran ptxas -arch=sm_90 on the PTX: a cubin means it passed.
    ASSERT_EQ(image.cubins.size(), 1u);
    EXPECT_EQ(image.cubins[0].sm_arch, 90);
    EXPECT_GT(image.cubins[0].data.size(), 0u);
    // The kernels of row-normalization fusions: the kernels their thunks
    // launch (a kernel is named after what it computes, not its fusion).
    std::set<std::string> row_normalization_fusions, row_normalizations;
    auto optimized = hlo::ParseHloModule(artifact->hlo_text);
    ASSERT_TRUE(optimized.ok()) << optimized.status().message();
    for (const hlo::HloInstruction* inst : (*optimized)->entry()->instructions())
      if (passes::IsRowNormalizationFusion(*inst)) row_normalization_fusions.insert(inst->name());
    thunks::ForEachThunk(artifact->program.root, [&](const thunks::Thunk& t, int) {
      const auto* k = t.As<thunks::KernelThunk>();
      if (k && row_normalization_fusions.count(t.info.profile_name)) row_normalizations.insert(k->kernel_name);
    });
    for (const bef::KernelEntry& k : image.kernels) {
      EXPECT_NE(image.ptx.find(".entry " + k.name), std::string::npos) << k.name;
      EXPECT_GE(k.launch.grid.x, 1);
      // Flat kernels: 256 threads per block, no shared memory. Tiled
      // transposes: 32x8 threads sharing one 32x33 tile (dynamic shared
      // memory). Reductions and row normalizations: 32 lanes x 1..32 warps,
      // static shared memory.
      bool tiled = k.launch.shared_memory_bytes > 0;
      bool reduction = k.name.find("reduce") != std::string::npos || row_normalizations.count(k.name);
      if (reduction) {
        EXPECT_EQ(k.launch.block.x, 32) << k.name;
        EXPECT_LE(k.launch.block.x * k.launch.block.y, 1024) << k.name;
        continue;
      }
      EXPECT_EQ(k.launch.block.x, tiled ? 32 : 256) << k.name;
      EXPECT_EQ(k.launch.block.y, tiled ? 8 : 1) << k.name;
      if (tiled) EXPECT_EQ(k.launch.shared_memory_bytes % (32 * 33), 0) << k.name;
    }
  }
}

TEST(ArtifactE2ETest, UnsupportedOpIsNamedWithItsLocation) {
  auto module = hlo::ParseHloModule(R"(HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[4,4] parameter(0)
  ROOT srt = f32[4,4] custom-call(x), custom_call_target="kiln_test_unknown"
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto artifact = compiler::CompileModule(**module, {});
  ASSERT_FALSE(artifact.ok());
  const std::string message = artifact.status().message();
  EXPECT_NE(message.find("%srt"), std::string::npos) << message;
  EXPECT_NE(message.find(":9:"), std::string::npos) << message;
  EXPECT_NE(message.find("custom-call target 'kiln_test_unknown'"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(ArtifactE2ETest, ThunksRecordTheirHloAndCost) {
  auto module = hlo::ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[8,16] parameter(0)
  b = f32[16,4] parameter(1)
  d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[8,4] tanh(d)
  ROOT s = f32[8,4] add(t, d)
}
)");
  ASSERT_TRUE(module.ok());
  auto artifact = compiler::CompileModule(**module, {});
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  const auto& thunks = artifact->program.root.thunks;
  ASSERT_EQ(thunks.size(), 2u);  // the GEMM, then one kernel for tanh + add
  EXPECT_EQ(thunks[0].kind(), thunks::ThunkKind::kGemm);
  EXPECT_EQ(thunks[0].info.cost.flops, 2 * 8 * 4 * 16);
  EXPECT_EQ(thunks[0].info.cost.bytes_read, (8 * 16 + 16 * 4) * 4);
  EXPECT_EQ(thunks[1].kind(), thunks::ThunkKind::kKernel);
  std::vector<std::string> names;
  for (const auto& ref : thunks[1].info.hlo) names.push_back(ref.name);
  // The reshape restoring the dot's shape from the [1,8,4] GEMM output fuses too.
  EXPECT_EQ(names, (std::vector<std::string>{"d.result", "t", "s"}));
  EXPECT_EQ(thunks[1].info.cost.flops, 8 * 4);           // the add
  EXPECT_EQ(thunks[1].info.cost.transcendentals, 8 * 4);  // the tanh
}

TEST(ArtifactE2ETest, SiblingsReadingOneBufferBecomeOneKernel) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  y = f32[64,64] parameter(1)
  a = f32[64,64] exponential(x)
  b = f32[64,64] add(x, y)
  c = f32[64,64] multiply(b, b)
  ROOT t = (f32[64,64], f32[64,64]) tuple(a, c)
}
)";
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok());
  auto artifact = compiler::CompileModule(**module, {});
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  // exp(x) and (x+y)^2 both read x: one kernel writes both outputs.
  const auto& thunks = artifact->program.root.thunks;
  ASSERT_EQ(thunks.size(), 1u);
  const auto* kernel = thunks[0].As<thunks::KernelThunk>();
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->args.size(), 4u);  // x, y, then two outputs
  EXPECT_TRUE(kernel->args[2].written && kernel->args[3].written);
  // And it computes what the evaluator computes.
  auto device = runtime::Device::Create(runtime::DeviceKind::kHost);
  ASSERT_TRUE(device.ok());
  EXPECT_EQ(CompareWithEvaluator(**module, **device, RandomArgs(**module, 5)), "");
}

}  // namespace
}  // namespace kiln::testing
