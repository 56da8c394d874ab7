// The tiled transpose through the whole pipeline: a module whose root is a
// large enough transpose of a fused elementwise expression compiles (fusion,
// codegen) into a tiled kernel — on CUDA one 32x8 block per 32x32 tile with
// the padded tile as dynamic shared memory, in PTX that ptxas accepts — and
// runs on the host runtime to the reference evaluator's result.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/driver/compiler.h"
#include "serialization/artifact.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

bool HavePtxas() {
  const char* home = std::getenv("CUDA_HOME");
  return (home && std::filesystem::exists(std::string(home) + "/bin/ptxas")) ||
         std::filesystem::exists("/usr/local/cuda/bin/ptxas");
}

// transpose(exp(x) + y): X = 200, Y = 96 -> 7 * 3 = 21 tiles.
constexpr char kModule[] = R"(HloModule tiled_e2e
ENTRY e {
  x = f32[200,96] parameter(0)
  y = f32[200,96] parameter(1)
  ex = f32[200,96] exponential(x)
  s = f32[200,96] add(ex, y)
  ROOT t = f32[96,200] transpose(s), dimensions={1,0}
})";

TEST(TiledTransposeE2ETest, CudaArtifactLaunchesOneBlockPerTile) {
  auto module = hlo::ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status().message();
  compiler::CompileOptions options;
  options.cuda = true;
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  const bef::KernelImage* cuda = nullptr;
  for (const bef::KernelImage& image : artifact->kernel_images)
    if (image.kind == bef::TargetKind::kCuda) cuda = &image;
  ASSERT_NE(cuda, nullptr);
  EXPECT_NE(cuda->ptx.find("bar.sync"), std::string::npos);
  if (HavePtxas()) {
    EXPECT_FALSE(cuda->cubins.empty());
  }
  // Exactly one kernel: the producers fused into the transpose.
  ASSERT_EQ(cuda->kernels.size(), 1u);
  const thunks::LaunchDims& l = cuda->kernels[0].launch;
  EXPECT_EQ(l.grid.x, 21);
  EXPECT_EQ(l.block.x, 32);
  EXPECT_EQ(l.block.y, 8);
  EXPECT_EQ(l.shared_memory_bytes, 32 * 33 * 4);
}

TEST(TiledTransposeE2ETest, HostResultMatchesEvaluator) {
  auto device = runtime::Device::Create(runtime::DeviceKind::kHost);
  ASSERT_TRUE(device.ok()) << device.status().message();
  // expf vs the evaluator's f64 exp, plus one rounding of the sum.
  CompareOptions tol;
  tol.rtol = 1e-6;
  tol.atol = 1e-6;
  ExpectMatchesEvaluator(kModule, **device, /*seed=*/3, tol);
  // [2,1,0] with a batch group in the middle and ragged tiles on both sides.
  ExpectMatchesEvaluator(R"(HloModule tiled_e2e_210
ENTRY e {
  x = s8[17,5,40] parameter(0)
  y = s8[17,5,40] parameter(1)
  m = s8[17,5,40] multiply(x, y)
  ROOT t = s8[40,5,17] transpose(m), dimensions={2,1,0}
})",
                         **device, /*seed=*/4);
}

}  // namespace
}  // namespace kiln::testing
