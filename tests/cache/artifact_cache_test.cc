// The artifact level of the compile cache through the compiler driver
// (CompileModuleToBef / CompileModule with CompileOptions::cache_dir): a
// warm compile returns the bytes an uncached compile writes; every option
// that shapes the output misses; damaged entries are recompiled and
// repaired; concurrent compiles share one directory. The reference bytes
// always come from a compile without any cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <thread>

#include "compiler/codegen/codegen_identity.h"
#include "compiler/driver/artifact_cache_key.h"
#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "tests/cache/cache_test_util.h"

namespace kiln::compiler {
namespace {

namespace fs = std::filesystem;

// A GEMM (tf32 on CUDA), a fused elementwise kernel and a sort (a radix
// sort on CUDA where the build has one).
constexpr char kModule[] = R"(HloModule cached
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,32] parameter(1)
  d = f32[8,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[] constant(0.5)
  cb = f32[8,32] broadcast(c), dimensions={}
  m = f32[8,32] multiply(d, cb)
  e = f32[8,32] exponential(m)
  flat = f32[256] reshape(e)
  ROOT s = f32[256] sort(flat), dimensions={0}, to_apply=less
})";

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

using cache::testing::ReadFile;
using cache::testing::WriteFile;

class ArtifactCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = cache::testing::TestCacheDir();
    fs::remove_all(dir_);
    module_ = Parse(kModule);
    ASSERT_NE(module_, nullptr);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CompileOptions Cached(CompileOptions options = {}) const {
    options.cache_dir = dir_;
    return options;
  }

  // The .bef bytes of a compile without a cache.
  static std::vector<uint8_t> Uncached(const hlo::HloModule& module, CompileOptions options) {
    options.cache_dir.clear();
    StatusOr<std::vector<uint8_t>> bytes = CompileModuleToBef(module, options);
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    return bytes.ok() ? *bytes : std::vector<uint8_t>{};
  }

  static std::vector<uint8_t> Compile(const hlo::HloModule& module, const CompileOptions& options,
                                      CompileStats& stats) {
    StatusOr<std::vector<uint8_t>> bytes = CompileModuleToBef(module, options, &stats);
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    return bytes.ok() ? *bytes : std::vector<uint8_t>{};
  }

  std::string EntryPath(const hlo::HloModule& module, const CompileOptions& options) const {
    StatusOr<std::unique_ptr<cache::CompileCache>> cache = cache::CompileCache::Open(dir_, options.cache_max_bytes);
    EXPECT_TRUE(cache.ok());
    return (*cache)->EntryPath(ArtifactCacheKey(module, options, codegen::CodegenIdentity()));
  }

  std::string dir_;
  std::unique_ptr<hlo::HloModule> module_;
};

TEST_F(ArtifactCacheTest, WarmCompileReturnsTheUncachedBytes) {
  const std::vector<uint8_t> reference = Uncached(*module_, {});
  CompileStats cold, warm;
  EXPECT_EQ(Compile(*module_, Cached(), cold), reference);
  EXPECT_EQ(cold.artifact_cache_misses, 1);
  EXPECT_EQ(cold.artifact_cache_hits, 0);
  EXPECT_EQ(Compile(*module_, Cached(), warm), reference);
  EXPECT_EQ(warm.artifact_cache_hits, 1);
  EXPECT_EQ(warm.artifact_cache_misses, 0);
  EXPECT_EQ(warm.kernels_compiled, 0);
  // The Artifact API takes the same cache.
  CompileStats api;
  StatusOr<bef::Artifact> artifact = CompileModule(*module_, Cached(), &api);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  EXPECT_EQ(api.artifact_cache_hits, 1);
  EXPECT_EQ(bef::SerializeArtifact(*artifact).value(), reference);
}

TEST_F(ArtifactCacheTest, WithoutCacheDirNothingIsCachedAndDumpsBypassIt) {
  CompileStats none;
  Compile(*module_, {}, none);
  EXPECT_EQ(none.artifact_cache_hits + none.artifact_cache_misses, 0);
  EXPECT_FALSE(fs::exists(dir_));
  CompileStats dumped;
  CompileOptions with_dump = Cached();
  with_dump.dump_dir = dir_ + "-dump";
  Compile(*module_, with_dump, dumped);
  fs::remove_all(with_dump.dump_dir);
  EXPECT_EQ(dumped.artifact_cache_hits + dumped.artifact_cache_misses, 0);
}

// One case per option that changes the artifact: after a compile with the
// base options, a compile with that option changed is a miss and writes what
// an uncached compile with it writes.
TEST_F(ArtifactCacheTest, EachOptionThatShapesTheOutputIsAMiss) {
  CompileOptions base;
  base.host = base.cuda = true;
  struct Case {
    const char* option;
    std::function<void(CompileOptions&)> change;
    bool output_differs;  // known to change the bytes for this module
  };
  const std::vector<Case> cases = {
      {"targets host only", [](CompileOptions& o) { o.cuda = false; }, true},
      {"targets cuda only", [](CompileOptions& o) { o.host = false; }, true},
      {"cuda arch", [](CompileOptions& o) { o.cuda_arch = "sm_80"; }, true},
      {"tf32", [](CompileOptions& o) { o.tf32 = false; }, true},
      {"radix sort", [](CompileOptions& o) { o.radix_sort = false; }, false},
      {"streams", [](CompileOptions& o) { o.streams = 4; }, false},
      {"producer", [](CompileOptions& o) { o.producer = "kiln test"; }, true},
      {"host cpus", [](CompileOptions& o) { o.host_cpus = {"x86-64-v2"}; }, true},
  };
  const std::vector<uint8_t> base_bytes = Uncached(*module_, base);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.option);
    CompileStats warm;
    EXPECT_EQ(Compile(*module_, Cached(base), warm), base_bytes);
    EXPECT_EQ(warm.artifact_cache_hits + warm.artifact_cache_misses, 1);
    CompileOptions changed = base;
    c.change(changed);
    const std::vector<uint8_t> reference = Uncached(*module_, changed);
    if (c.output_differs) EXPECT_NE(reference, base_bytes);
    CompileStats stats;
    EXPECT_EQ(Compile(*module_, Cached(changed), stats), reference);
    EXPECT_EQ(stats.artifact_cache_misses, 1);
  }
  // The module: one constant changed.
  std::string text = kModule;
  text.replace(text.find("constant(0.5)"), 13, "constant(0.25)");
  std::unique_ptr<hlo::HloModule> changed = Parse(text);
  const std::vector<uint8_t> reference = Uncached(*changed, base);
  EXPECT_NE(reference, base_bytes);
  CompileStats stats;
  EXPECT_EQ(Compile(*changed, Cached(base), stats), reference);
  EXPECT_EQ(stats.artifact_cache_misses, 1);
}

// What does not change the output does not miss: the verifier's schedule,
// and the input's formatting (the key is the module's canonical text).
TEST_F(ArtifactCacheTest, WhatDoesNotShapeTheOutputIsAHit) {
  CompileStats cold;
  const std::vector<uint8_t> reference = Compile(*module_, Cached(), cold);
  CompileOptions verify = Cached();
  verify.verify_each_pass = true;
  CompileStats verified;
  EXPECT_EQ(Compile(*module_, verify, verified), reference);
  EXPECT_EQ(verified.artifact_cache_hits, 1);
  std::string text = kModule;
  text.replace(text.find("ENTRY"), 5, "// a comment\n\nENTRY ");
  CompileStats reformatted;
  EXPECT_EQ(Compile(*Parse(text), Cached(), reformatted), reference);
  EXPECT_EQ(reformatted.artifact_cache_hits, 1);
}

TEST_F(ArtifactCacheTest, DamagedEntriesAreRecompiledAndRepaired) {
  const std::vector<uint8_t> reference = Uncached(*module_, {});
  CompileStats cold;
  Compile(*module_, Cached(), cold);
  const std::string path = EntryPath(*module_, Cached());
  ASSERT_TRUE(fs::exists(path));
  const std::vector<uint8_t> good = ReadFile(path);
  struct Damage {
    const char* what;
    std::function<void(std::vector<uint8_t>&)> apply;
  };
  const Damage damages[] = {
      {"corrupted", [](std::vector<uint8_t>& e) { e[e.size() / 2 + 7] ^= 0x40; }},
      {"truncated", [](std::vector<uint8_t>& e) { e.resize(e.size() * 2 / 3); }},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    std::vector<uint8_t> damaged = good;
    d.apply(damaged);
    WriteFile(path, damaged);
    CompileStats recompiled, repaired;
    EXPECT_EQ(Compile(*module_, Cached(), recompiled), reference);
    EXPECT_EQ(recompiled.artifact_cache_misses, 1);
    EXPECT_EQ(ReadFile(path), good);
    EXPECT_EQ(Compile(*module_, Cached(), repaired), reference);
    EXPECT_EQ(repaired.artifact_cache_hits, 1);
  }
}

// Compiles of several modules under a bound of about one artifact: the
// directory stays within it, and the newest artifact is still there.
TEST_F(ArtifactCacheTest, SmallBoundEvictsTheLeastRecentlyUsed) {
  CompileStats stats;
  Compile(*module_, Cached(), stats);
  int64_t one = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_)) one += static_cast<int64_t>(e.file_size());
  CompileOptions bounded = Cached();
  bounded.cache_max_bytes = one * 3 / 2;
  std::vector<std::unique_ptr<hlo::HloModule>> modules;
  for (const char* scale : {"0.125", "0.375", "0.625", "0.875"}) {
    std::string text = kModule;
    text.replace(text.find("constant(0.5)"), 13, std::string("constant(") + scale + ")");
    modules.push_back(Parse(text));
    CompileStats s;
    Compile(*modules.back(), bounded, s);
    EXPECT_EQ(s.artifact_cache_misses, 1);
  }
  int64_t total = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_))
    if (e.path().extension() == ".kce") total += static_cast<int64_t>(e.file_size());
  EXPECT_LE(total, bounded.cache_max_bytes);
  CompileStats first, last;
  Compile(*modules.back(), bounded, last);
  EXPECT_EQ(last.artifact_cache_hits, 1);
  Compile(*module_, bounded, first);
  EXPECT_EQ(first.artifact_cache_misses, 1);  // evicted long ago
}

TEST_F(ArtifactCacheTest, ConcurrentCompilesShareOneCache) {
  CompileOptions options;
  options.host = options.cuda = true;
  const std::vector<uint8_t> reference = Uncached(*module_, options);
  std::vector<uint8_t> results[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      CompileStats s;
      results[t] = Compile(*module_, Cached(options), s);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(results[0], reference);
  EXPECT_EQ(results[1], reference);
  CompileStats warm;
  EXPECT_EQ(Compile(*module_, Cached(options), warm), reference);
  EXPECT_EQ(warm.artifact_cache_hits, 1);
}

}  // namespace
}  // namespace kiln::compiler
