// Host kernels per x86-64 level, shared where no level gains: a kernel of
// data movement and cheap arithmetic is compiled once, for the lowest level
// of the request, and that object serves every level above it; a reduction
// of cheap arithmetic, a division or a square root is compiled for the
// levels up to AVX2, whose object serves the AVX-512 levels; kernels that
// compute with transcendentals or narrow floats get one object per level. Every level's image
// still holds every kernel and computes the right values.
#include <cmath>

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "common/x86_cpu.h"
#include "compiler/codegen/host_level_policy.h"
#include "tests/codegen/codegen_test_util.h"

namespace kiln::codegen::testing {
namespace {

WiderIsaGain Gain(const std::string& text) {
  std::unique_ptr<hlo::HloModule> module = MustParse(text);
  return WiderIsaGainOf({"k", module->entry(), {}});
}

bool Gains(const std::string& text) { return Gain(text) == WiderIsaGain::kEveryLevel; }

// The row sums of `op`(a, a) over an f32[4,16].
std::string RowReduction(const std::string& op) {
  return R"(HloModule rows
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  a = f32[4,16] parameter(0)
  m = f32[4,16] )" + op + R"((a, a)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(m, z), dimensions={1}, to_apply=add
})";
}

TEST(HostLevelPolicyTest, DataMovementAndCheapArithmeticGainNothing) {
  EXPECT_FALSE(Gains(R"(HloModule m
ENTRY e {
  a = f32[8,4] parameter(0)
  b = f32[4,8] parameter(1)
  t = f32[4,8] transpose(a), dimensions={1,0}
  s = f32[4,8] add(t, b)
  z = f32[] constant(0)
  zb = f32[4,8] broadcast(z), dimensions={}
  ROOT r = f32[4,8] maximum(s, zb)
})"));
  EXPECT_FALSE(Gains(R"(HloModule m
ENTRY e {
  a = s32[16] parameter(0)
  c = f32[16] convert(a)
  ROOT s = f32[8] slice(c), slice={[0:8]}
})"));
}

TEST(HostLevelPolicyTest, ComputeAndNarrowFloatsGain) {
  EXPECT_TRUE(Gains(R"(HloModule m
ENTRY e {
  a = f32[16] parameter(0)
  ROOT x = f32[16] exponential(a)
})"));
  EXPECT_TRUE(Gains(R"(HloModule m
ENTRY e {
  a = f32[16] parameter(0)
  b = f32[16] parameter(1)
  d = f32[16] divide(a, b)
  ROOT x = f32[16] exponential(d)
})"));  // a division does not lower an exponential's gain
  // Only a conversion, but to bf16: AVX-512 converts in one instruction.
  EXPECT_TRUE(Gains(R"(HloModule m
ENTRY e {
  a = f32[16] parameter(0)
  ROOT c = bf16[16] convert(a)
})"));
}

TEST(HostLevelPolicyTest, ReductionsOfCheapArithmeticGainUpToAvx2) {
  EXPECT_EQ(Gain(RowReduction("multiply")), WiderIsaGain::kUpToAvx2);
}

TEST(HostLevelPolicyTest, DivisionsAndSquareRootsGainUpToAvx2) {
  EXPECT_EQ(Gain(R"(HloModule m
ENTRY e {
  a = f32[16] parameter(0)
  b = f32[16] parameter(1)
  ROOT d = f32[16] divide(a, b)
})"), WiderIsaGain::kUpToAvx2);
  EXPECT_EQ(Gain(RowReduction("divide")), WiderIsaGain::kUpToAvx2);  // a reduction with a division in it
  EXPECT_EQ(Gain(R"(HloModule m
ENTRY e {
  v = f32[8] parameter(0)
  x = f32[4,8] parameter(1)
  s = f32[8] sqrt(v)
  r = f32[8] rsqrt(v)
  q = f32[8] multiply(s, r)
  b = f32[4,8] broadcast(q), dimensions={1}
  ROOT y = f32[4,8] multiply(x, b)
})"), WiderIsaGain::kUpToAvx2);
  // In f16 the conversions still gain from every level.
  EXPECT_EQ(Gain(R"(HloModule m
ENTRY e {
  a = f16[16] parameter(0)
  ROOT s = f16[16] sqrt(a)
})"), WiderIsaGain::kEveryLevel);
}

HostCpu Cpu(const std::string& level) {
  StatusOr<HostCpu> cpu = ResolveHostCpu(level);
  EXPECT_TRUE(cpu.ok()) << cpu.status().message();
  return cpu.ok() ? *cpu : BaselineHostCpu();
}

TEST(HostLevelPolicyTest, ObjectSourcesAreTheLowestLevelEachLevelCanRun) {
  const std::vector<HostCpu> levels = {Cpu("x86-64-v2"), Cpu("x86-64-v3"), Cpu("x86-64-v4")};
  const WiderIsaGain none = WiderIsaGain::kNone;
  EXPECT_EQ(HostObjectSources(levels, WiderIsaGain::kEveryLevel), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(HostObjectSources(levels, none), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(HostObjectSources({Cpu("x86-64-v3"), Cpu("x86-64-v4")}, none), (std::vector<int>{0, 0}));
  if (HostCpuHasFeatures(*X86LevelFeatures("x86-64-v2")))
    EXPECT_EQ(HostObjectSources({Cpu("x86-64-v2"), Cpu("native")}, none), (std::vector<int>{0, 0}));
}

TEST(HostLevelPolicyTest, Avx512LevelsTakeTheAvx2LevelsObject) {
  const HostCpu v2 = Cpu("x86-64-v2"), v3 = Cpu("x86-64-v3"), v4 = Cpu("x86-64-v4");
  const WiderIsaGain avx2 = WiderIsaGain::kUpToAvx2;
  EXPECT_EQ(HostObjectSources({v2, v3, v4}, avx2), (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(HostObjectSources({v3, v4}, avx2), (std::vector<int>{0, 0}));
  // Without an AVX2 level in the request, v4 keeps its own code rather
  // than running v2's.
  EXPECT_EQ(HostObjectSources({v2, v4}, avx2), (std::vector<int>{0, 1}));
  EXPECT_EQ(HostObjectSources({v2, v3}, avx2), (std::vector<int>{0, 1}));
}

constexpr char kTwoKernels[] = R"(
HloModule two
ENTRY e {
  a = f32[64] parameter(0)
  ROOT n = f32[64] negate(a)
})";

constexpr char kExp[] = R"(
HloModule exp
ENTRY e {
  a = f32[64] parameter(0)
  ROOT x = f32[64] exponential(a)
})";

TEST(HostLevelPolicyTest, SharedObjectsServeEveryLevelAndRun) {
  std::unique_ptr<hlo::HloModule> neg = MustParse(kTwoKernels);
  std::unique_ptr<hlo::HloModule> exp = MustParse(kExp);
  CodegenOptions options;
  options.host_cpus = {Cpu("x86-64-v2"), Cpu("x86-64-v3"), Cpu("x86-64-v4")};
  StatusOr<CodegenResult> compiled =
      CompileKernels({{"neg", neg->entry(), {}}, {"exp", exp->entry(), {}}}, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  // negate: one object for the three levels; exp: one per level.
  EXPECT_EQ(compiled->kernels_compiled, 1 + 3);
  EXPECT_EQ(compiled->host_objects_shared, 2);
  ASSERT_EQ(compiled->more_host_images.size(), 2u);
  Literal a = Ramp(ElementType::kF32, {64}, -4, 4);
  for (const HostImage* image : RunnableImages(*compiled)) {
    auto lib = LoadedLibrary::Load(image->shared_object);
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    KernelFn neg_fn = FindKernel(**lib, *image, "neg");
    KernelFn exp_fn = FindKernel(**lib, *image, "exp");
    ASSERT_NE(neg_fn, nullptr) << image->cpu.level;
    ASSERT_NE(exp_fn, nullptr) << image->cpu.level;
    Literal n = RunKernel(neg_fn, {a}, Shape(ElementType::kF32, {64}));
    Literal x = RunKernel(exp_fn, {a}, Shape(ElementType::kF32, {64}));
    for (int64_t i = 0; i < 64; ++i) {
      EXPECT_EQ(n.GetF64(i), -a.GetF64(i)) << image->cpu.level;
      EXPECT_NEAR(x.GetF64(i), std::exp(a.GetF64(i)), 4e-7 * std::exp(a.GetF64(i))) << image->cpu.level;
    }
  }
}

constexpr char kSoftsign[] = R"(
HloModule softsign
ENTRY e {
  x = f32[64] parameter(0)
  one = f32[] constant(1)
  o = f32[64] broadcast(one), dimensions={}
  a = f32[64] abs(x)
  d = f32[64] add(a, o)
  ROOT s = f32[64] divide(x, d)
})";

TEST(HostLevelPolicyTest, ReductionAndDivisionObjectsServeEveryLevelAndRun) {
  std::unique_ptr<hlo::HloModule> sumsq = MustParse(RowReduction("multiply"));
  std::unique_ptr<hlo::HloModule> softsign = MustParse(kSoftsign);
  CodegenOptions options;
  options.host_cpus = {Cpu("x86-64-v2"), Cpu("x86-64-v3"), Cpu("x86-64-v4")};
  StatusOr<CodegenResult> compiled =
      CompileKernels({{"sumsq", sumsq->entry(), {}}, {"softsign", softsign->entry(), {}}}, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  EXPECT_EQ(compiled->kernels_compiled, 2 + 2);  // each for v2 and v3; v4 runs v3's
  EXPECT_EQ(compiled->host_objects_shared, 2);
  Literal x = Ramp(ElementType::kF32, {64}, -4, 4);
  ASSERT_EQ(compiled->more_host_images.size(), 2u);
  Literal a = Ramp(ElementType::kF32, {4, 16}, -2, 2);
  for (const HostImage* image : RunnableImages(*compiled)) {
    auto lib = LoadedLibrary::Load(image->shared_object);
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    KernelFn fn = FindKernel(**lib, *image, "sumsq");
    ASSERT_NE(fn, nullptr) << image->cpu.level;
    Literal r = RunKernel(fn, {a}, Shape(ElementType::kF32, {4}));
    for (int64_t row = 0; row < 4; ++row) {
      double want = 0;  // the sum of squares in double
      for (int64_t k = 0; k < 16; ++k) want += a.GetF64(row * 16 + k) * a.GetF64(row * 16 + k);
      EXPECT_NEAR(r.GetF64(row), want, 1e-5 * want) << image->cpu.level << " row " << row;
    }
    KernelFn divide = FindKernel(**lib, *image, "softsign");
    ASSERT_NE(divide, nullptr) << image->cpu.level;
    Literal s = RunKernel(divide, {x}, Shape(ElementType::kF32, {64}));
    for (int64_t i = 0; i < 64; ++i) {
      float v = static_cast<float>(x.GetF64(i));  // in f32 on the test's own CPU
      EXPECT_FLOAT_EQ(static_cast<float>(s.GetF64(i)), v / (1.0f + std::fabs(v))) << image->cpu.level << " element " << i;
    }
  }
}

// sin, cos, tan, cbrt, pow and atan2 in a loop become calls of glibc's
// vector variants of each level's width (llvm_backend.cc): the 4-lane SSE
// ones at x86-64-v2, the 8-lane AVX2 ones at v3; v4 has both (and the
// 16-lane AVX-512 ones). Each image names them as dynamic symbols.
TEST(HostLevelPolicyTest, LoopsOfLibraryMathCallVectorVariants) {
  std::unique_ptr<hlo::HloModule> sine = MustParse(R"(HloModule m
ENTRY e {
  a = f32[1024] parameter(0)
  b = f32[1024] parameter(1)
  s = f32[1024] sine(a)
  p = f32[1024] power(s, b)
  ROOT t = f32[1024] atan2(p, a)
})");
  CodegenOptions options;
  options.host_cpus = {Cpu("x86-64-v2"), Cpu("x86-64-v3"), Cpu("x86-64-v4")};
  StatusOr<CodegenResult> compiled = CompileKernels({{"k", sine->entry(), {}}}, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  std::map<std::string, std::string> images;
  images[compiled->host->cpu.level] = std::string(compiled->host->shared_object.begin(), compiled->host->shared_object.end());
  for (const HostImage& image : compiled->more_host_images)
    images[image.cpu.level] = std::string(image.shared_object.begin(), image.shared_object.end());
  ASSERT_EQ(images.size(), 3u);
  for (const char* f : {"v_sinf", "vv_powf", "vv_atan2f"}) {
    EXPECT_NE(images["x86-64-v2"].find(std::string("_ZGVbN4") + f), std::string::npos) << f;
    EXPECT_EQ(images["x86-64-v2"].find(std::string("_ZGVdN8") + f), std::string::npos) << f;
    EXPECT_NE(images["x86-64-v3"].find(std::string("_ZGVdN8") + f), std::string::npos) << f;
    EXPECT_EQ(images["x86-64-v3"].find(std::string("_ZGVeN16") + f), std::string::npos) << f;
  }
  // And they compute: every runnable level against libm in double.
  Literal a = Ramp(ElementType::kF32, {1024}, 0.5, 3.0);
  Literal b = Ramp(ElementType::kF32, {1024}, -2.0, 2.0);
  for (const HostImage* image : RunnableImages(*compiled)) {
    auto lib = LoadedLibrary::Load(image->shared_object);
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    KernelFn fn = FindKernel(**lib, *image, "k");
    ASSERT_NE(fn, nullptr) << image->cpu.level;
    Literal r = RunKernel(fn, {a, b}, Shape(ElementType::kF32, {1024}));
    for (int64_t i = 0; i < 1024; ++i) {
      const double x = static_cast<float>(a.GetF64(i));
      const double want = std::atan2(std::pow(std::sin(x), b.GetF64(i)), x);
      EXPECT_NEAR(r.GetF64(i), want, 1e-5 * std::fabs(want) + 1e-6) << image->cpu.level << " at " << i;
    }
  }
}

}  // namespace
}  // namespace kiln::codegen::testing
