// Host kernels per x86-64 level: an artifact carries one host image per
// level (x86-64-v2, v3, v4 by default, "native" on request), the runtime
// runs the best one this CPU supports, and every level this machine can run
// (forced with KILN_HOST_CPU_LEVEL) computes what the reference evaluator
// does, so one .bef runs correctly on any x86-64 machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "common/x86_cpu.h"
#include "serialization/host_image.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

// Transcendentals (erf GELU, exp softmax, rsqrt layer norm, tanh, log1p)
// whose loops vectorize differently per level.
constexpr char kModule[] = R"(HloModule levels
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[48,200] parameter(0)
  half = f32[] constant(0.5)
  one = f32[] constant(1)
  rsqrt2 = f32[] constant(0.70710678)
  h = f32[48,200] broadcast(half), dimensions={}
  o = f32[48,200] broadcast(one), dimensions={}
  r2 = f32[48,200] broadcast(rsqrt2), dimensions={}
  xs = f32[48,200] multiply(x, r2)
  erf = f32[48,200] erf(xs)
  e1 = f32[48,200] add(erf, o)
  hx = f32[48,200] multiply(x, h)
  gelu = f32[48,200] multiply(hx, e1)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  rmax = f32[48] reduce(gelu, ninf), dimensions={1}, to_apply=max
  bmax = f32[48,200] broadcast(rmax), dimensions={0}
  shifted = f32[48,200] subtract(gelu, bmax)
  ex = f32[48,200] exponential(shifted)
  sum = f32[48] reduce(ex, zero), dimensions={1}, to_apply=add
  bsum = f32[48,200] broadcast(sum), dimensions={0}
  softmax = f32[48,200] divide(ex, bsum)
  sq = f32[48,200] multiply(x, x)
  ssq = f32[48] reduce(sq, zero), dimensions={1}, to_apply=add
  n = f32[] constant(200)
  bn = f32[48] broadcast(n), dimensions={}
  var = f32[48] divide(ssq, bn)
  eps = f32[] constant(1e-5)
  beps = f32[48] broadcast(eps), dimensions={}
  ve = f32[48] add(var, beps)
  rs = f32[48] rsqrt(ve)
  brs = f32[48,200] broadcast(rs), dimensions={0}
  norm = f32[48,200] multiply(x, brs)
  t = f32[48,200] tanh(norm)
  ax = f32[48,200] abs(x)
  l = f32[48,200] log-plus-one(ax)
  tl = f32[48,200] add(t, l)
  ROOT out = (f32[48,200], f32[48,200]) tuple(softmax, tl)
})";

class HostCpuLevels : public ::testing::Test {
 protected:
  void SetUp() override {
    auto module = hlo::ParseHloModule(kModule);
    ASSERT_TRUE(module.ok()) << module.status().message();
    module_ = std::move(*module);
    args_ = RandomArgs(*module_, 7);
    auto expected = hlo::Evaluator().Evaluate(*module_, args_);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    expected_ = std::move(*expected);
    auto device = runtime::Device::Create(runtime::DeviceKind::kHost);
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }
  void TearDown() override { unsetenv("KILN_HOST_CPU_LEVEL"); }

  bef::Artifact Compile(const std::vector<std::string>& levels) {
    compiler::CompileOptions options;
    options.host_cpus = levels;
    StatusOr<bef::Artifact> artifact = compiler::CompileModule(*module_, options);
    EXPECT_TRUE(artifact.ok()) << artifact.status().message();
    return artifact.ok() ? std::move(*artifact) : bef::Artifact();
  }

  // Runs `artifact` with KILN_HOST_CPU_LEVEL=level ("" unset) and returns
  // the error ("" when the results match the evaluator's).
  std::string RunAt(const bef::Artifact& artifact, const std::string& level) {
    if (level.empty())
      unsetenv("KILN_HOST_CPU_LEVEL");
    else
      setenv("KILN_HOST_CPU_LEVEL", level.c_str(), 1);
    StatusOr<tools::DeviceRunResult> r = tools::RunArtifact(artifact, args_, *device_);
    if (!r.ok()) return r.status().message();
    Status s = CompareValues(r->result, expected_, "result", CompareOptions{1e-5, 1e-5});
    return s.ok() ? "" : s.message();
  }

  std::unique_ptr<hlo::HloModule> module_;
  std::vector<Literal> args_;
  Literal expected_;
  std::unique_ptr<runtime::Device> device_;
};

std::vector<const bef::KernelImage*> HostImages(const bef::Artifact& a) {
  std::vector<const bef::KernelImage*> images;
  for (const bef::KernelImage& image : a.kernel_images)
    if (image.kind == bef::TargetKind::kHost) images.push_back(&image);
  return images;
}

TEST_F(HostCpuLevels, OneImagePerLevelWithItsFeatures) {
  bef::Artifact artifact = Compile(DefaultX86Levels());
  std::vector<const bef::KernelImage*> images = HostImages(artifact);
  ASSERT_EQ(images.size(), 3u);
  EXPECT_EQ(artifact.targets, std::vector<std::string>{"host-x86_64"});
  const std::vector<std::string> levels = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  for (size_t i = 0; i < images.size(); ++i) {
    EXPECT_EQ(images[i]->cpu_level, levels[i]);
    EXPECT_EQ(images[i]->cpu_features, *X86LevelFeatures(levels[i]));
    EXPECT_EQ(images[i]->kernels, images[0]->kernels);  // the same kernels, other code
    EXPECT_FALSE(images[i]->shared_object.empty());
  }
  EXPECT_NE(images[0]->shared_object, images[2]->shared_object);
  std::vector<std::string> v4 = *X86LevelFeatures("x86-64-v4");
  EXPECT_NE(std::find(v4.begin(), v4.end(), "avx512f"), v4.end());
  std::vector<std::string> v3 = *X86LevelFeatures("x86-64-v3");
  EXPECT_NE(std::find(v3.begin(), v3.end(), "fma"), v3.end());

  // The levels survive the .bef format.
  StatusOr<std::vector<uint8_t>> bytes = bef::SerializeArtifact(artifact);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  StatusOr<bef::Artifact> loaded = bef::LoadArtifact(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(*loaded, artifact);
}

TEST_F(HostCpuLevels, EveryLevelThisCpuRunsMatchesTheEvaluator) {
  bef::Artifact artifact = Compile(DefaultX86Levels());
  int ran = 0;
  for (const std::string& level : DefaultX86Levels()) {
    if (!HostCpuHasFeatures(*X86LevelFeatures(level))) continue;
    EXPECT_EQ(RunAt(artifact, level), "") << level;
    ++ran;
  }
  EXPECT_GE(ran, 1);  // every x86-64 CPU kiln runs on has x86-64-v2
  // Unforced: the best level, the one bef-run and bef-dump name.
  EXPECT_EQ(RunAt(artifact, ""), "");
  StatusOr<const bef::KernelImage*> best = bef::SelectHostImage(artifact);
  ASSERT_TRUE(best.ok()) << best.status().message();
  EXPECT_EQ((*best)->cpu_level, HostX86Level());
}

TEST_F(HostCpuLevels, ForcingALevelTheArtifactLacksIsAnError) {
  bef::Artifact artifact = Compile({"x86-64-v2"});
  EXPECT_EQ(RunAt(artifact, "x86-64-v2"), "");
  std::string error = RunAt(artifact, "x86-64-v3");
  EXPECT_NE(error.find("KILN_HOST_CPU_LEVEL=x86-64-v3: the artifact has host kernels for x86-64-v2 only"),
            std::string::npos)
      << error;
}

TEST_F(HostCpuLevels, NativeImageRunsHere) {
  bef::Artifact artifact = Compile({"native", "x86-64-v2"});
  std::vector<const bef::KernelImage*> images = HostImages(artifact);
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images[0]->cpu_level, "x86-64-v2");  // lowest first, whatever the request's order
  EXPECT_EQ(images[1]->cpu_level, "native");
  // Native includes this machine's level and adds only features it has.
  const std::vector<std::string> here = *X86LevelFeatures(HostX86Level());
  for (const std::string& f : here)
    EXPECT_NE(std::find(images[1]->cpu_features.begin(), images[1]->cpu_features.end(), f),
              images[1]->cpu_features.end())
        << f;
  EXPECT_TRUE(HostCpuHasFeatures(images[1]->cpu_features));
  StatusOr<const bef::KernelImage*> best = bef::SelectHostImage(artifact);
  ASSERT_TRUE(best.ok()) << best.status().message();
  EXPECT_EQ(*best, images[1]);
  EXPECT_EQ(RunAt(artifact, ""), "");
  EXPECT_EQ(RunAt(artifact, "x86-64-v2"), "");
}

TEST_F(HostCpuLevels, UnknownLevelIsRejected) {
  compiler::CompileOptions options;
  EXPECT_FALSE(compiler::ParseHostCpus("x86-64-v2,x86-64-v9", options).ok());
  ASSERT_TRUE(compiler::ParseHostCpus("native,x86-64-v4,x86-64-v2,x86-64-v4", options).ok());
  EXPECT_EQ(options.host_cpus, (std::vector<std::string>{"x86-64-v2", "x86-64-v4", "native"}));
  options.host_cpus = {"pentium"};
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(*module_, options);
  ASSERT_FALSE(artifact.ok());
  EXPECT_NE(artifact.status().message().find("unknown host CPU level 'pentium'"), std::string::npos)
      << artifact.status().message();
}

}  // namespace
}  // namespace kiln::testing
