// The kernel level of the compile cache through the compiler driver: each
// distinct kernel's code for each target is cached on its own, so a
// compile whose artifact misses takes the unchanged kernels from the
// cache, and a model with one changed layer compiles only that layer's
// changed kernel. Every compile's bytes are compared with a compile
// without any cache.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/codegen/codegen_identity.h"
#include "compiler/driver/artifact_cache_key.h"
#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "tests/cache/cache_test_util.h"
#include "tests/support/corpus_files.h"

namespace kiln::compiler {
namespace {

namespace fs = std::filesystem;

// A vision transformer of 12 unrolled encoder blocks (182 kernels, 17
// distinct): each block's kernels are the same kernels.
const std::string kVit = std::string(test_support::kCorpusDir) +
                         "/jax_models_rocm_perf_tools/vision_diffusion/"
                         "vit__inference_1gpu__module_2294.jit_predict_step.before_optimizations.txt";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

// The layer norm epsilon of the first LayerNorm of encoder block 5 becomes
// 2e-6 instead of the 1e-6 that all blocks share: the line
//   %add.N = f32[32,196,1]{2,1,0} add(%x, %broadcast.15), metadata={...encoderblock_5/LayerNorm_0/add...}
// adds its own broadcast of a constant of its own.
std::string EditOneLayer(std::string text, int block = 5, int layer_norm = 0) {
  const std::string marker =
      "encoderblock_" + std::to_string(block) + "/LayerNorm_" + std::to_string(layer_norm) + "/add\"";
  size_t at = text.find(marker);
  for (; at != std::string::npos; at = text.find(marker, at + 1)) {
    size_t line = text.rfind('\n', at) + 1;
    std::string head = text.substr(line, at - line);
    size_t eps = head.find(", %broadcast.15)");
    if (eps == std::string::npos) continue;
    text.replace(line + eps, 16, ", %edited_eps)");
    text.insert(line,
                "  %edited_eps_value = f32[] constant(2e-06)\n"
                "  %edited_eps = f32[32,196,1]{2,1,0} broadcast(%edited_eps_value), dimensions={}\n");
    return text;
  }
  ADD_FAILURE() << "no layer norm epsilon add in encoderblock_" << block << "/LayerNorm_" << layer_norm;
  return text;
}

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = cache::testing::TestCacheDir();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::vector<uint8_t> Compile(const hlo::HloModule& module, const CompileOptions& options,
                                      CompileStats* stats = nullptr) {
    StatusOr<std::vector<uint8_t>> bytes = CompileModuleToBef(module, options, stats);
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    return bytes.ok() ? *bytes : std::vector<uint8_t>{};
  }

  // One host CPU level keeps these compiles of a large model short; the
  // levels are cached apart (HostCpuLevelsAreCachedApart).
  static CompileOptions Base() {
    CompileOptions options;
    options.host_cpus = {"x86-64-v2"};
    return options;
  }

  CompileOptions Cached(CompileOptions options = Base()) const {
    options.cache_dir = dir_;
    return options;
  }

  std::string dir_;
};

TEST_F(KernelCacheTest, ArtifactMissTakesUnchangedKernelsFromTheCache) {
  const std::string text = ReadText(kVit);
  ASSERT_FALSE(text.empty()) << "missing corpus module " << kVit;
  std::unique_ptr<hlo::HloModule> vit = Parse(text);
  CompileOptions both = Base();
  both.host = both.cuda = true;
  CompileStats cold;
  EXPECT_EQ(Compile(*vit, Cached(both), &cold), Compile(*vit, both));
  EXPECT_EQ(cold.kernels_compiled, 2 * cold.distinct_kernels);
  EXPECT_EQ(cold.kernels_from_cache, 0);
  // Another producer string changes the artifact but no kernel.
  CompileOptions producer = both;
  producer.producer = "kiln kernel cache test";
  CompileStats renamed;
  EXPECT_EQ(Compile(*vit, Cached(producer), &renamed), Compile(*vit, producer));
  EXPECT_EQ(renamed.artifact_cache_misses, 1);
  EXPECT_EQ(renamed.kernels_compiled, 0);
  EXPECT_EQ(renamed.kernels_from_cache, 2 * renamed.distinct_kernels);
  // Another CUDA architecture recompiles the CUDA kernels only.
  CompileOptions sm80 = both;
  sm80.cuda_arch = "sm_80";
  CompileStats arch;
  EXPECT_EQ(Compile(*vit, Cached(sm80), &arch), Compile(*vit, sm80));
  EXPECT_EQ(arch.kernels_compiled, arch.distinct_kernels);
  EXPECT_EQ(arch.kernels_from_cache, arch.distinct_kernels);
}

// Damaged kernel entries are recompiled, never used, and repaired. The
// artifact's entry is removed before each compile so that the kernel level
// is asked.
TEST_F(KernelCacheTest, DamagedKernelEntriesAreRecompiledAndRepaired) {
  std::unique_ptr<hlo::HloModule> vit = Parse(ReadText(kVit));
  ASSERT_NE(vit, nullptr);
  const std::vector<uint8_t> reference = Compile(*vit, Base());
  CompileStats cold;
  EXPECT_EQ(Compile(*vit, Cached(), &cold), reference);
  StatusOr<std::unique_ptr<cache::CompileCache>> cache = cache::CompileCache::Open(dir_, cache::kDefaultCacheMaxBytes);
  ASSERT_TRUE(cache.ok());
  const std::string artifact = (*cache)->EntryPath(ArtifactCacheKey(*vit, Cached(), codegen::CodegenIdentity()));
  ASSERT_TRUE(fs::remove(artifact));
  int damaged = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
    if (e.path().extension() != ".kce") continue;
    std::vector<uint8_t> bytes = cache::testing::ReadFile(e.path());
    // Alternately a flipped byte in the object code and a truncation.
    if (damaged++ % 2) bytes[bytes.size() - 100] ^= 0x01;
    else bytes.resize(bytes.size() / 2);
    cache::testing::WriteFile(e.path(), bytes);
  }
  EXPECT_EQ(damaged, cold.distinct_kernels);
  CompileStats recompiled, repaired;
  EXPECT_EQ(Compile(*vit, Cached(), &recompiled), reference);
  EXPECT_EQ(recompiled.kernels_compiled, cold.distinct_kernels);
  EXPECT_EQ(recompiled.kernels_from_cache, 0);
  ASSERT_TRUE(fs::remove(artifact));
  EXPECT_EQ(Compile(*vit, Cached(), &repaired), reference);
  EXPECT_EQ(repaired.kernels_compiled, 0);
  EXPECT_EQ(repaired.kernels_from_cache, cold.distinct_kernels);
}

// The target: one changed layer recompiles only what it changed.
// Block 5's first layer norm (its epsilon) is one distinct kernel that no
// other block shares any more; every other kernel is the same as before.
TEST_F(KernelCacheTest, OneChangedLayerCompilesOnlyItsKernel) {
  const std::string text = ReadText(kVit);
  ASSERT_FALSE(text.empty()) << "missing corpus module " << kVit;
  std::unique_ptr<hlo::HloModule> vit = Parse(text);
  std::unique_ptr<hlo::HloModule> edited = Parse(EditOneLayer(text));
  ASSERT_NE(edited, nullptr);
  CompileStats original, changed;
  Compile(*vit, Cached(), &original);
  EXPECT_EQ(original.kernels_compiled, original.distinct_kernels);
  EXPECT_EQ(Compile(*edited, Cached(), &changed), Compile(*edited, Base()));
  EXPECT_EQ(changed.artifact_cache_misses, 1);
  EXPECT_EQ(changed.distinct_kernels, original.distinct_kernels + 1);
  EXPECT_EQ(changed.kernels_compiled, 1);
  EXPECT_EQ(changed.kernels_from_cache, changed.distinct_kernels - 1);
}

// The same for block 0's second layer norm, the first user of the layer-norm
// kernel that the later blocks share: the shared kernel is named after what
// it computes, not after its first user, so it keeps its name (and cache
// entry) when that user changes and another becomes the first. (Named after
// its first user, it was compiled again under the new one's name: 2
// kernels.)
TEST_F(KernelCacheTest, ChangedFirstUserCompilesOnlyItsKernel) {
  const std::string text = ReadText(kVit);
  ASSERT_FALSE(text.empty()) << "missing corpus module " << kVit;
  std::unique_ptr<hlo::HloModule> vit = Parse(text);
  std::unique_ptr<hlo::HloModule> edited = Parse(EditOneLayer(text, 0, 1));
  ASSERT_NE(edited, nullptr);
  CompileStats original, changed;
  Compile(*vit, Cached(), &original);
  EXPECT_EQ(Compile(*edited, Cached(), &changed), Compile(*edited, Base()));
  EXPECT_EQ(changed.distinct_kernels, original.distinct_kernels + 1);
  EXPECT_EQ(changed.kernels_compiled, 1);
  EXPECT_EQ(changed.kernels_from_cache, changed.distinct_kernels - 1);
}

// Each host CPU level is a target of its own: adding a level compiles only
// that level's kernels (those that gain from it; the others reuse the
// lower level's cached object), and the artifact is what an uncached
// compile of the same levels writes.
TEST_F(KernelCacheTest, HostCpuLevelsAreCachedApart) {
  std::unique_ptr<hlo::HloModule> vit = Parse(ReadText(kVit));
  ASSERT_NE(vit, nullptr);
  CompileStats v2, both;
  Compile(*vit, Cached(), &v2);
  EXPECT_EQ(v2.kernels_compiled, v2.distinct_kernels);
  CompileOptions levels = Base();
  levels.host_cpus = {"x86-64-v2", "x86-64-v3"};
  EXPECT_EQ(Compile(*vit, Cached(levels), &both), Compile(*vit, levels));
  EXPECT_EQ(both.artifact_cache_misses, 1);
  EXPECT_EQ(both.kernels_from_cache, both.distinct_kernels);
  EXPECT_GT(both.kernels_compiled, 0);
  EXPECT_EQ(both.kernels_compiled + both.host_objects_shared, both.distinct_kernels);
}

}  // namespace
}  // namespace kiln::compiler
