// CUDA kernels from kiln_codegen: the PTX must define each kernel as an
// .entry taking one pointer per buffer, and, when ptxas is installed,
// ptxas -arch=sm_90 must accept it (non-empty cubin). Without a GPU the
// numerical results are checked by the host tests, which share the kernel IR.
#include <unistd.h>

#include "tests/codegen/codegen_test_util.h"

namespace kiln::codegen::testing {
namespace {

bool HavePtxas() { return access("/usr/local/cuda/bin/ptxas", X_OK) == 0; }

// The launch each case must get, by the documented heuristics: a loop
// kernel runs blocks of 256 threads, each thread computing 16 bytes of the
// narrowest output's consecutive innermost elements (at most 8, halved until
// the innermost dimension divides); a reduction kernel runs blocks of 32
// lanes x W warps (reduction_emitter.cc).
struct Case {
  const char* name;
  const char* text;
  int num_args;
  int64_t grid;
  int64_t block_x;
  int64_t block_y;
};

const Case kCases[] = {
    {"chain", R"(
HloModule chain
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[4,8] parameter(1)
  s = f32[4,8] add(a, b)
  x = f32[4,8] exponential(s)
  m = f32[4,8] multiply(x, a)
  ROOT t = f32[4,8] tanh(m)
})", 3, 1, 256, 1},  // f32[4,8]: 4 per thread, 8 threads
    {"bcast_add", R"(
HloModule bcast
ENTRY e {
  v = f32[3] parameter(0)
  m = f32[2,3] parameter(1)
  b = f32[2,3] broadcast(v), dimensions={1}
  k = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  s = f32[2,3] add(m, b)
  ROOT r = f32[2,3] multiply(s, k)
})", 3, 1, 256, 1},  // f32[2,3]: 1 per thread
    {"moves", R"(
HloModule moves
ENTRY e {
  a = f32[4,6] parameter(0)
  t = f32[6,4] transpose(a), dimensions={1,0}
  s = f32[3,4] slice(t), slice={[1:6:2], [0:4]}
  r = f32[2,6] reshape(s)
  v = f32[2,6] reverse(r), dimensions={1}
  i = s32[2,3] iota(), iota_dimension=1
  f = f32[2,3] convert(i)
  ROOT c = f32[2,9] concatenate(v, f), dimensions={1}
})", 2, 1, 256, 1},
    {"scalar_out", R"(
HloModule red0
max {
  x = s64[] parameter(0)
  y = s64[] parameter(1)
  ROOT m = s64[] maximum(x, y)
}
ENTRY e {
  x = s64[7,9] parameter(0)
  lo = s64[] constant(-9223372036854775808)
  ROOT r = s64[] reduce(x, lo), dimensions={0,1}, to_apply=max
})", 2, 1, 32, 8},  // 63 elements, 1 per load: 16 lanes per row
    {"to_bf16", R"(
HloModule cvt
ENTRY e {
  x = f32[1000] parameter(0)
  y = f64[1000] parameter(1)
  a = bf16[1000] convert(x)
  b = bf16[1000] convert(y)
  ROOT r = bf16[1000] add(a, b)
})", 3, 1, 256, 1},  // bf16[1000]: 8 per thread, 125 threads
    {"select_cmp", R"(
HloModule sel
ENTRY e {
  a = f32[6] parameter(0)
  b = f32[6] parameter(1)
  lt = pred[6] compare(a, b), direction=LT
  ROOT r = f32[6] select(lt, a, b)
})", 3, 1, 256, 1},
    {"row_sum", R"(
HloModule red
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  x = f32[4,16] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4] reduce(x, zero), dimensions={1}, to_apply=add
})", 2, 1, 32, 8},  // rows of 4 vectors of 4: one lane per row
    {"int_ops", R"(
HloModule ints
ENTRY e {
  a = s32[300] parameter(0)
  b = s32[300] parameter(1)
  q = s32[300] divide(a, b)
  r = s32[300] remainder(a, b)
  f = f32[300] convert(q)
  fr = f32[300] convert(r)
  g = f32[300] remainder(f, fr)
  ROOT o = s32[300] convert(g)
})", 3, 1, 256, 1},
};

TEST(CudaKernelsTest, HugeLoopKernelGetsACappedGridStrideLaunch) {
  // f32[8192,8192]: 16M threads of 4 elements would be 65536 blocks; the
  // grid stops at 4 full-occupancy waves of the H100 (132 SMs x 8 blocks).
  std::unique_ptr<hlo::HloModule> module = MustParse(R"(
HloModule big
ENTRY e {
  a = f32[8192,8192] parameter(0)
  ROOT n = f32[8192,8192] negate(a)
})");
  ASSERT_TRUE(module);
  CodegenOptions options;
  options.host = false;
  options.cuda = true;
  StatusOr<CodegenResult> r = CompileKernels({{"big", module->entry()}}, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const LaunchDims& l = r->cuda->kernels[0].launch;
  EXPECT_EQ(l.grid[0], 132 * 8 * 4);
  EXPECT_EQ(l.block[0], 256);
  EXPECT_NE(r->cuda->ptx.find("%nctaid.x"), std::string::npos);
}

TEST(CudaKernelsTest, PtxDefinesEntriesAndAssemblesForSm90) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<hlo::HloModule> module = MustParse(c.text);
    ASSERT_TRUE(module);
    CodegenOptions options;
    options.host = false;
    options.cuda = true;
    StatusOr<CodegenResult> r = CompileKernels({{c.name, module->entry()}}, options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->host.has_value());
    ASSERT_TRUE(r->cuda.has_value());
    const CudaImage& image = *r->cuda;
    EXPECT_EQ(image.arch, "sm_90");
    EXPECT_NE(image.ptx.find(std::string(".entry ") + c.name), std::string::npos) << image.ptx;
    EXPECT_NE(image.ptx.find(".target sm_90"), std::string::npos);
    // One .param per buffer: parameters then the result.
    EXPECT_NE(image.ptx.find(std::string(c.name) + "_param_" + std::to_string(c.num_args - 1)),
              std::string::npos);
    EXPECT_EQ(image.ptx.find(std::string(c.name) + "_param_" + std::to_string(c.num_args)),
              std::string::npos);
    if (HavePtxas()) EXPECT_FALSE(image.cubin.empty());
    ASSERT_EQ(image.kernels.size(), 1u);
    const LaunchDims& l = image.kernels[0].launch;
    EXPECT_EQ(l.grid[0], c.grid);
    EXPECT_EQ(l.block[0], c.block_x);
    EXPECT_EQ(l.block[1], c.block_y);
    EXPECT_EQ(l.grid[1] * l.grid[2] * l.block[2], 1);
    EXPECT_EQ(image.kernels[0].num_args, c.num_args);
  }
}

TEST(CudaKernelsTest, TranscendentalsUseLibdeviceAndBothTargetsAtOnce) {
  std::unique_ptr<hlo::HloModule> module = MustParse(R"(
HloModule t
ENTRY e {
  x = f64[64] parameter(0)
  y = f32[64] parameter(1)
  a = f64[64] log-plus-one(x)
  b = f32[64] erf(y)
  c = f64[64] convert(b)
  ROOT r = f64[64] atan2(a, c)
})");
  ASSERT_TRUE(module);
  CodegenOptions options;
  options.cuda = true;  // and host
  StatusOr<CodegenResult> r = CompileKernels({{"trans", module->entry()}}, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->host && r->cuda);
  // libdevice is linked and inlined: no calls to external __nv_ functions.
  EXPECT_EQ(r->cuda->ptx.find(".extern .func"), std::string::npos);
  if (HavePtxas()) EXPECT_FALSE(r->cuda->cubin.empty());
  EXPECT_FALSE(r->host->shared_object.empty());
}

}  // namespace
}  // namespace kiln::codegen::testing
