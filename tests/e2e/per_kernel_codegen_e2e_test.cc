// Per-kernel compilation units (compiler/codegen/kernel_object.h) end to
// end: kernels compiled each in a module of its own and joined into one
// image still run correctly together, also when several of them pull in
// the same libdevice tables and helpers (sin, cos and tan share the
// argument reduction), which each kernel's module defines under its own
// prefix. Results against the reference evaluator, on the host and on CUDA
// under the emulator (tests/CMakeLists.txt runs this test a second time
// with KILN_E2E_DEVICE=cuda).
#include <gtest/gtest.h>

#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

// Three kernels of different shapes (nothing fuses them), each with a
// trigonometric function of large arguments, so the PTX takes libdevice's
// slow argument reduction with its table.
constexpr char kTrigKernels[] = R"(
HloModule trig
ENTRY e {
  a = f32[64] parameter(0)
  b = f32[32] parameter(1)
  c = f32[16] parameter(2)
  k = f32[] constant(1e6)
  ka = f32[64] broadcast(k), dimensions={}
  kb = f32[32] broadcast(k), dimensions={}
  kc = f32[16] broadcast(k), dimensions={}
  ma = f32[64] multiply(a, ka)
  mb = f32[32] multiply(b, kb)
  mc = f32[16] multiply(c, kc)
  sa = f32[64] sine(ma)
  sb = f32[32] cosine(mb)
  sc = f32[16] tan(mc)
  ROOT t = (f32[64], f32[32], f32[16]) tuple(sa, sb, sc)
})";

using PerKernelCodegenTest = E2EDeviceTest;

TEST_F(PerKernelCodegenTest, SeparatelyCompiledKernelsRunTogether) {
  ExpectMatchesEvaluator(kTrigKernels, *device_, 7, CompareOptions{.atol = 1e-5, .rtol = 1e-5});
}

TEST(PerKernelCodegenPtxTest, OneModuleHeaderAndPerKernelLibdeviceSymbols) {
  std::string ptx;
  std::vector<std::array<int64_t, 3>> launches = CudaLaunches(kTrigKernels, &ptx);
  ASSERT_EQ(launches.size(), 3u);
  size_t versions = 0;
  for (size_t at = ptx.find(".version"); at != std::string::npos; at = ptx.find(".version", at + 1)) ++versions;
  EXPECT_EQ(versions, 1u) << ptx;
  // Each kernel's copy of libdevice's table is its own symbol.
  size_t tables = 0;
  for (size_t at = ptx.find("$__cudart_i2opi_f["); at != std::string::npos;
       at = ptx.find("$__cudart_i2opi_f[", at + 1))
    ++tables;
  EXPECT_EQ(tables, 3u) << ptx;
}

}  // namespace
}  // namespace kiln::testing
