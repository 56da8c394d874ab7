// The tiled transpose through the whole pipeline: a module whose root is a
// large enough transpose of a fused elementwise expression compiles (fusion,
// codegen) into a tiled kernel — on CUDA one 32x8 block per 32x32 tile with
// the padded tile as dynamic shared memory, in PTX that ptxas accepts — and
// runs on the host runtime to the reference evaluator's result; likewise
// with an elementwise epilogue after the transpose (one kernel).
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

// Compiles `text` for CUDA and checks it became exactly one tiled kernel:
// a barrier in the PTX, a cubin when ptxas exists, `tiles` blocks of 32x8
// threads and a 32x33 tile of `element_bytes` in shared memory.
void ExpectOneTiledCudaKernel(const char* text, int64_t tiles, int64_t element_bytes) {
  auto module = hlo::ParseHloModule(text);
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
  ASSERT_EQ(cuda->kernels.size(), 1u);
  const thunks::LaunchDims& l = cuda->kernels[0].launch;
  EXPECT_EQ(l.grid.x, tiles);
  EXPECT_EQ(l.block.x, 32);
  EXPECT_EQ(l.block.y, 8);
  EXPECT_EQ(l.shared_memory_bytes, 32 * 33 * element_bytes);
}

// Exactly one kernel: the producers fused into the transpose.
TEST(TiledTransposeE2ETest, CudaArtifactLaunchesOneBlockPerTile) { ExpectOneTiledCudaKernel(kModule, 21, 4); }

TEST(TiledTransposeE2ETest, ResultMatchesEvaluator) {
  auto device = runtime::Device::Create(E2EDeviceKind());
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

// transpose(x) converted to f16, times y, plus a broadcast bias: the
// elementwise consumers fuse into the transpose's kernel as its epilogue.
// X = 200, Y = 70 -> 7 * 3 = 21 tiles of f32 (the hero's type).
constexpr char kEpilogueModule[] = R"(HloModule tiled_epilogue_e2e
ENTRY e {
  x = f32[200,70] parameter(0)
  y = f16[70,200] parameter(1)
  b = f16[200] parameter(2)
  t = f32[70,200] transpose(x), dimensions={1,0}
  c = f16[70,200] convert(t)
  m = f16[70,200] multiply(c, y)
  bb = f16[70,200] broadcast(b), dimensions={1}
  ROOT s = f16[70,200] add(m, bb)
})";

TEST(TiledTransposeE2ETest, EpilogueIsOneTiledKernel) { ExpectOneTiledCudaKernel(kEpilogueModule, 21, 4); }

TEST(TiledTransposeE2ETest, EpilogueResultMatchesEvaluator) {
  auto device = runtime::Device::Create(E2EDeviceKind());
  ASSERT_TRUE(device.ok()) << device.status().message();
  // f16 products and sums: within an f16 ulp of the evaluator's rounding.
  CompareOptions tol;
  tol.rtol = 2e-3;
  tol.atol = 2e-3;
  ExpectMatchesEvaluator(kEpilogueModule, **device, /*seed=*/5, tol);
  // [0,2,1], ragged on both sides, s32 epilogue (t + y) * t, exact.
  ExpectMatchesEvaluator(R"(HloModule tiled_epilogue_021
ENTRY e {
  x = s32[3,45,33] parameter(0)
  y = s32[3,33,45] parameter(1)
  t = s32[3,33,45] transpose(x), dimensions={0,2,1}
  a = s32[3,33,45] add(t, y)
  ROOT m = s32[3,33,45] multiply(a, t)
})",
                         **device, /*seed=*/6);
  // A reshape keeping the transpose's groups ([40,1,20,3] -> [40,60]) and a
  // convert, as before a GEMM, with an operand on either side.
  ExpectMatchesEvaluator(R"(HloModule tiled_epilogue_reshape
ENTRY e {
  x = f32[1,20,3,40] parameter(0)
  z = f32[40,1,20,3] parameter(1)
  y = f64[40,60] parameter(2)
  t = f32[40,1,20,3] transpose(x), dimensions={3,0,1,2}
  a = f32[40,1,20,3] add(t, z)
  r = f32[40,60] reshape(a)
  c = f64[40,60] convert(r)
  ROOT m = f64[40,60] multiply(c, y)
})",
                         **device, /*seed=*/7);
}

}  // namespace
}  // namespace kiln::testing
