// x86-64 levels and cpuid feature checks (common/x86_cpu.h), against GCC's
// own CPU detection (__builtin_cpu_supports, which also checks the OS's
// AVX and AVX-512 register state) as the independent source.
#include "common/x86_cpu.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kiln {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(X86Cpu, LevelsNestAndAreKnown) {
  std::vector<std::string> below;
  for (const std::string& level : DefaultX86Levels()) {
    std::optional<std::vector<std::string>> features = X86LevelFeatures(level);
    ASSERT_TRUE(features) << level;
    for (const std::string& f : below) EXPECT_TRUE(Contains(*features, f)) << level << " lacks " << f;
    for (const std::string& f : *features) EXPECT_TRUE(Contains(KnownX86Features(), f)) << f;
    EXPECT_GT(features->size(), below.size());
    below = *features;
  }
  EXPECT_FALSE(X86LevelFeatures("x86-64-v5"));
  EXPECT_FALSE(X86LevelFeatures("native"));
  EXPECT_FALSE(HostCpuHasFeature("no-such-feature"));
}

#if defined(__x86_64__)
TEST(X86Cpu, AgreesWithTheCompilersDetection) {
  __builtin_cpu_init();
  EXPECT_EQ(HostCpuHasFeature("sse3"), static_cast<bool>(__builtin_cpu_supports("sse3")));
  EXPECT_EQ(HostCpuHasFeature("ssse3"), static_cast<bool>(__builtin_cpu_supports("ssse3")));
  EXPECT_EQ(HostCpuHasFeature("sse4.1"), static_cast<bool>(__builtin_cpu_supports("sse4.1")));
  EXPECT_EQ(HostCpuHasFeature("sse4.2"), static_cast<bool>(__builtin_cpu_supports("sse4.2")));
  EXPECT_EQ(HostCpuHasFeature("popcnt"), static_cast<bool>(__builtin_cpu_supports("popcnt")));
  EXPECT_EQ(HostCpuHasFeature("avx"), static_cast<bool>(__builtin_cpu_supports("avx")));
  EXPECT_EQ(HostCpuHasFeature("avx2"), static_cast<bool>(__builtin_cpu_supports("avx2")));
  EXPECT_EQ(HostCpuHasFeature("fma"), static_cast<bool>(__builtin_cpu_supports("fma")));
  EXPECT_EQ(HostCpuHasFeature("bmi"), static_cast<bool>(__builtin_cpu_supports("bmi")));
  EXPECT_EQ(HostCpuHasFeature("bmi2"), static_cast<bool>(__builtin_cpu_supports("bmi2")));
  EXPECT_EQ(HostCpuHasFeature("avx512f"), static_cast<bool>(__builtin_cpu_supports("avx512f")));
  EXPECT_EQ(HostCpuHasFeature("avx512bw"), static_cast<bool>(__builtin_cpu_supports("avx512bw")));
  EXPECT_EQ(HostCpuHasFeature("avx512dq"), static_cast<bool>(__builtin_cpu_supports("avx512dq")));
  EXPECT_EQ(HostCpuHasFeature("avx512vl"), static_cast<bool>(__builtin_cpu_supports("avx512vl")));
  EXPECT_EQ(HostCpuHasFeature("avx512cd"), static_cast<bool>(__builtin_cpu_supports("avx512cd")));
  EXPECT_EQ(HostCpuHasFeature("avx512vnni"), static_cast<bool>(__builtin_cpu_supports("avx512vnni")));
  EXPECT_EQ(HostCpuHasFeature("gfni"), static_cast<bool>(__builtin_cpu_supports("gfni")));
  // GCC's levels are LLVM's (both follow the x86-64 psABI).
  std::string expected;
  if (__builtin_cpu_supports("x86-64-v2")) expected = "x86-64-v2";
  if (__builtin_cpu_supports("x86-64-v3")) expected = "x86-64-v3";
  if (__builtin_cpu_supports("x86-64-v4")) expected = "x86-64-v4";
  EXPECT_EQ(HostX86Level(), expected);
}
#endif

}  // namespace
}  // namespace kiln
