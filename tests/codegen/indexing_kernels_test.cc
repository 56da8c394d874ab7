// Kernels of the indexing and windowed ops through the codegen API alone:
// in-place dynamic-update-slice and scatter (the output buffer is pre-filled
// with operand 0's value, as the buffer assignment guarantees, and the
// kernel must not read parameter 0 at all), the elemental ops, variadic
// reduce and reduce-window; and their PTX assembling with ptxas for sm_90.
// Expected values come from the reference evaluator and from hand
// computation (in comments).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "tests/codegen/codegen_test_util.h"

namespace kiln::codegen::testing {
namespace {

Literal Values(ElementType t, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  Literal lit{Shape(t, dims)};
  for (size_t i = 0; i < values.size(); ++i) lit.SetF64(i, values[i]);
  return lit;
}

Literal Scalar(ElementType t, double v) { return Values(t, {}, {v}); }

// Runs an in-place kernel: parameter 0's buffer holds NaN/garbage (the
// kernel must not read it), the output starts as a copy of args[0].
Literal RunInPlace(const std::string& text, const std::vector<Literal>& args) {
  std::unique_ptr<hlo::HloModule> module = MustParse(text);
  if (!module) return Literal();
  StatusOr<CodegenResult> compiled = CompileKernels({{"kernel", module->entry()}}, {});
  EXPECT_TRUE(compiled.ok()) << compiled.status().message();
  if (!compiled.ok()) return Literal();
  auto lib = LoadedLibrary::Load(compiled->host->shared_object);
  EXPECT_TRUE(lib.ok()) << lib.status().message();
  if (!lib.ok()) return Literal();
  KernelFn fn = FindKernel(**lib, *compiled->host, "kernel");
  EXPECT_NE(fn, nullptr);
  if (!fn) return Literal();
  Literal out = args[0];
  Literal poison(args[0].shape());
  std::memset(poison.raw(), 0xff, poison.raw_size());  // NaN for floats, -1 for ints
  std::vector<void*> buffers{poison.raw()};
  for (size_t i = 1; i < args.size(); ++i) buffers.push_back(const_cast<uint8_t*>(args[i].raw()));
  buffers.push_back(out.raw());
  fn(buffers.data());
  return out;
}

// The in-place result equals `want` (by hand) and the evaluator's.
void ExpectInPlace(const std::string& text, const std::vector<Literal>& args, const Literal& want) {
  Literal got = RunInPlace(text, args);
  EXPECT_EQ(got, want) << got.ToString();
  EXPECT_EQ(got, Evaluate(text, args));
}

// The iteration count an in-place kernel reports (its CUDA thread count).
int64_t CudaThreads(const std::string& text) {
  std::unique_ptr<hlo::HloModule> module = MustParse(text);
  CodegenOptions options;
  options.host = false;
  options.cuda = true;
  StatusOr<CodegenResult> compiled = CompileKernels({{"kernel", module->entry()}}, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status().message();
  if (!compiled.ok()) return -1;
  const LaunchDims& l = compiled->cuda->kernels[0].launch;
  return l.grid[0] * l.block[0];
}

const char kAddF32[] = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

TEST(IndexingKernelsTest, InPlaceDynamicUpdateSliceClampsAndWritesOnlyTheWindow) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[5,4] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  n = f32[2,3] negate(u)
  ROOT d = f32[5,4] dynamic-update-slice(x, n, i, j)
})";
  std::vector<double> xs(20);
  for (int k = 0; k < 20; ++k) xs[k] = k;
  // Starts (7, -3) clamp to (5 - 2, 0) = (3, 0).
  std::vector<Literal> args = {Values(ElementType::kF32, {5, 4}, xs),
                               Values(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                               Scalar(ElementType::kS32, 7), Scalar(ElementType::kS32, -3)};
  // Rows 3 and 4, columns 0..2, become -u; everything else keeps x.
  ExpectInPlace(text, args, Values(ElementType::kF32, {5, 4},
                                   {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -1, -2, -3, 15, -4, -5, -6, 19}));
  // One CUDA thread per update element, rounded up to a 256-thread block.
  EXPECT_EQ(CudaThreads(text), 256);
}

TEST(IndexingKernelsTest, ElementalDynamicUpdateSliceWhenTheOperandIsComputed) {
  // The operand is not a parameter: every output element is computed.
  const std::string text = R"(HloModule m
ENTRY e {
  x = s32[6] parameter(0)
  u = s32[2] parameter(1)
  i = u8[] parameter(2)
  y = s32[6] multiply(x, x)
  ROOT d = s32[6] dynamic-update-slice(y, u, i)
})";
  std::vector<Literal> args = {Values(ElementType::kS32, {6}, {1, 2, 3, 4, 5, 6}),
                               Values(ElementType::kS32, {2}, {-7, -8}), Scalar(ElementType::kU8, 200)};
  // Start 200 clamps to 4: {1, 4, 9, 16, -7, -8}.
  Literal got = CompileAndRun(text, args);
  EXPECT_EQ(got, Values(ElementType::kS32, {6}, {1, 4, 9, 16, -7, -8})) << got.ToString();
}

TEST(IndexingKernelsTest, ScatterAddCombinesDuplicateIndicesAndSkipsOutOfBounds) {
  const std::string text = std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  x = f32[5,2] parameter(0)
  idx = s32[4,1] parameter(1)
  upd = f32[4,2] parameter(2)
  ROOT s = f32[5,2] scatter(x, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";
  std::vector<Literal> args = {Values(ElementType::kF32, {5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                               Values(ElementType::kS32, {4, 1}, {1, 3, 1, 5}),
                               Values(ElementType::kF32, {4, 2}, {10, 20, 30, 40, 50, 60, 70, 80})};
  // Row 1 gets 10+50 and 20+60, row 3 gets 30 and 40; index 5 is skipped.
  Literal want = Values(ElementType::kF32, {5, 2}, {0, 1, 62, 83, 4, 5, 36, 47, 8, 9});
  ExpectInPlace(text, args, want);
}

TEST(IndexingKernelsTest, ScatterWithGeneralCombinerAndWindows) {
  // Non-atomic-friendly combiner (multiply on bf16 -> compare-and-swap
  // loop), 2-d index vectors, a window along dimension 1, and one window
  // that would overrun the operand (start column 3 + 3 > 5): skipped whole.
  const std::string text = R"(HloModule m
mul {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] multiply(a, b)
}
ENTRY e {
  x = bf16[4,5] parameter(0)
  idx = s64[3,2] parameter(1)
  upd = bf16[3,3] parameter(2)
  ROOT s = bf16[4,5] scatter(x, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=mul
})";
  std::vector<double> xs(20, 1.0);
  std::vector<Literal> args = {Values(ElementType::kBF16, {4, 5}, xs),
                               Values(ElementType::kS64, {3, 2}, {1, 2, 2, 3, 1, 0}),
                               Values(ElementType::kBF16, {3, 3}, {2, 3, 4, 5, 6, 7, 0.5, 0.25, 8})};
  // Row 1: columns 2..4 times {2,3,4}, columns 0..2 times {0.5,0.25,8}:
  // {0.5, 0.25, 16, 3, 4}; row 2 untouched (window at column 3 overruns).
  Literal want = Values(ElementType::kBF16, {4, 5},
                        {1, 1, 1, 1, 1, 0.5, 0.25, 16, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  ExpectInPlace(text, args, want);
}

TEST(IndexingKernelsTest, ScatterMaxOnIntegersWithBatchingDims) {
  // Operand [2,4] batched along dimension 0 with the indices' dimension 0.
  const std::string text = R"(HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[2,4] parameter(0)
  idx = s32[2,3] parameter(1)
  upd = s32[2,3] parameter(2)
  ROOT s = s32[2,4] scatter(x, idx, upd), update_window_dims={}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=max
})";
  std::vector<Literal> args = {Values(ElementType::kS32, {2, 4}, {0, 0, 0, 0, 5, 5, 5, 5}),
                               Values(ElementType::kS32, {2, 3}, {0, 3, 0, 1, 1, 2}),
                               Values(ElementType::kS32, {2, 3}, {7, -1, 9, 3, 8, 6})};
  // Batch 0: x[0][0] = max(0,7,9) = 9, x[0][3] = max(0,-1) = 0.
  // Batch 1: x[1][1] = max(5,3,8) = 8, x[1][2] = max(5,6) = 6.
  Literal want = Values(ElementType::kS32, {2, 4}, {9, 0, 0, 0, 5, 8, 6, 5});
  ExpectInPlace(text, args, want);
}

TEST(IndexingKernelsTest, PadGatherDynamicSliceMatchEvaluator) {
  const std::string pad = R"(HloModule m
ENTRY e {
  x = f32[3,4] parameter(0)
  v = f32[] parameter(1)
  ROOT p = f32[6,5] pad(x, v), padding=1_0_1x-1_-1_1
})";
  // Rows: low 1, interior 1 -> 1 + 3 + 2 = 6; columns: 4 + 3 interior = 7,
  // cropped by one on each side -> 5.
  std::vector<Literal> args = {Values(ElementType::kF32, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
                               Scalar(ElementType::kF32, -1)};
  Literal got = CompileAndRun(pad, args);
  Literal want = Values(ElementType::kF32, {6, 5},
                        {-1, -1, -1, -1, -1, -1, 2, -1, 3, -1, -1, -1, -1, -1, -1,
                         -1, 6, -1, 7, -1, -1, -1, -1, -1, -1, -1, 10, -1, 11, -1});
  EXPECT_EQ(got, want) << got.ToString();
  EXPECT_EQ(got, Evaluate(pad, args));

  const std::string gather = R"(HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = f32[2,2,2] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}
})";
  // Starts (3, -1) clamp to (2, 0); (1, 1) is in range.
  args = {Values(ElementType::kF32, {4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
          Values(ElementType::kS32, {2, 2}, {3, -1, 1, 1})};
  got = CompileAndRun(gather, args);
  EXPECT_EQ(got, Values(ElementType::kF32, {2, 2, 2}, {6, 7, 9, 10, 4, 5, 7, 8})) << got.ToString();
  EXPECT_EQ(got, Evaluate(gather, args));

  const std::string ds = R"(HloModule m
ENTRY e {
  x = s32[3,5] parameter(0)
  i = s64[] parameter(1)
  j = s64[] parameter(2)
  ROOT d = s32[2,2] dynamic-slice(x, i, j), dynamic_slice_sizes={2,2}
})";
  // Starts (-4, 9) clamp to (0, 3).
  args = {Values(ElementType::kS32, {3, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}),
          Scalar(ElementType::kS64, -4), Scalar(ElementType::kS64, 9)};
  got = CompileAndRun(ds, args);
  EXPECT_EQ(got, Values(ElementType::kS32, {2, 2}, {3, 4, 8, 9})) << got.ToString();
}

TEST(IndexingKernelsTest, VariadicArgmaxReduceWritesBothOutputs) {
  const std::string text = R"(HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] parameter(0)
  io = s32[2,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, io, ninf, zero), dimensions={1}, to_apply=argmax
})";
  std::unique_ptr<hlo::HloModule> module = MustParse(text);
  ASSERT_TRUE(module);
  StatusOr<CodegenResult> compiled = CompileKernels({{"kernel", module->entry()}}, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  auto lib = LoadedLibrary::Load(compiled->host->shared_object);
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  KernelFn fn = FindKernel(**lib, *compiled->host, "kernel");
  ASSERT_NE(fn, nullptr);
  Literal x = Values(ElementType::kF32, {2, 4}, {1, 7, 3, 7, -2, -5, -1, -3});
  Literal values{Shape(ElementType::kF32, {2})}, indices{Shape(ElementType::kS32, {2})};
  std::vector<void*> buffers{x.raw(), values.raw(), indices.raw()};
  fn(buffers.data());
  // Row 0: max 7, first at 1; row 1: max -1 at 2.
  EXPECT_EQ(values, Values(ElementType::kF32, {2}, {7, -1})) << values.ToString();
  EXPECT_EQ(indices, Values(ElementType::kS32, {2}, {1, 2})) << indices.ToString();
}

TEST(IndexingKernelsTest, ReduceWindowWithPaddingAndDilationsMatchesEvaluator) {
  const std::string text = std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  x = f32[5,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5,3] reduce-window(x, z), window={size=2x3 stride=2x2 pad=1_1x1_2 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=add
})";
  std::vector<double> xs(30);
  for (int k = 0; k < 30; ++k) xs[k] = k;
  std::vector<Literal> args = {Values(ElementType::kF32, {5, 6}, xs)};
  Literal want = Evaluate(text, args);
  Literal got = CompileAndRun(text, args);
  EXPECT_EQ(got, want) << got.ToString() << " vs " << want.ToString();
  // Element (0, 0): rows -1 and 0 of the dilated operand (only 0 is real,
  // original row 0), columns -1, 1, 3 (1 and 3 real): x[0][1] + x[0][3] = 4.
  EXPECT_EQ(got.GetF64(0), 4);
}

bool HavePtxas() {
  const char* home = std::getenv("CUDA_HOME");
  return (home && std::filesystem::exists(std::string(home) + "/bin/ptxas")) ||
         std::filesystem::exists("/usr/local/cuda/bin/ptxas");
}

TEST(IndexingKernelsTest, PtxAssemblesForSm90) {
  if (!HavePtxas()) GTEST_SKIP() << "ptxas not installed";
  const std::string computations = std::string(kAddF32) + R"(
mul {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] multiply(a, b)
}
pred_or {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT o = pred[] or(a, b)
}
)";
  const std::string scatter_dims =
      "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1";
  // One kernel per op; parameters stay parameters, so the scatters and the
  // dynamic-update-slice are in place.
  const std::vector<std::pair<std::string, std::string>> kernels = {
      {"scatter_add_f32", "  x = f32[8,6] parameter(0)\n  idx = s32[5,1] parameter(1)\n  u = f32[5,6] parameter(2)\n"
                          "  ROOT s = f32[8,6] scatter(x, idx, u), " + scatter_dims + ", to_apply=add\n"},
      {"scatter_mul_bf16", "  x = bf16[8,6] parameter(0)\n  idx = s32[5,1] parameter(1)\n  u = bf16[5,6] parameter(2)\n"
                           "  ROOT s = bf16[8,6] scatter(x, idx, u), " + scatter_dims + ", to_apply=mul\n"},
      {"scatter_or_pred", "  x = pred[8,6] parameter(0)\n  idx = s32[5,1] parameter(1)\n  u = pred[5,6] parameter(2)\n"
                          "  ROOT s = pred[8,6] scatter(x, idx, u), " + scatter_dims + ", to_apply=pred_or\n"},
      {"dus", "  x = f32[8,6] parameter(0)\n  u = f32[5,6] parameter(1)\n  i = s32[] parameter(2)\n"
              "  ROOT d = f32[8,6] dynamic-update-slice(x, u, i, i)\n"},
      {"gather", "  x = f32[8,6] parameter(0)\n  idx = s32[5,1] parameter(1)\n"
                 "  ROOT g = f32[5,6] gather(x, idx), offset_dims={1}, collapsed_slice_dims={0}, "
                 "start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}\n"},
      {"pad_ds", "  x = f32[8,6] parameter(0)\n  v = f32[] parameter(1)\n  i = u32[] parameter(2)\n"
                 "  p = f32[11,9] pad(x, v), padding=1_2_0x-1_0_1\n"
                 "  ROOT d = f32[4,4] dynamic-slice(p, i, i), dynamic_slice_sizes={4,4}\n"},
      {"reduce_window", "  x = f32[8,6] parameter(0)\n  z = f32[] constant(0)\n"
                        "  ROOT r = f32[4,3] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=add\n"},
  };
  std::vector<std::unique_ptr<hlo::HloModule>> modules;
  std::vector<KernelSpec> specs;
  for (const auto& [name, body] : kernels) {
    modules.push_back(MustParse("HloModule m\n" + computations + "ENTRY e {\n" + body + "}\n"));
    ASSERT_TRUE(modules.back()) << name;
    specs.push_back({name, modules.back()->entry()});
  }
  CodegenOptions options;
  options.cuda = true;
  options.cuda_arch = "sm_90";
  StatusOr<CodegenResult> compiled = CompileKernels(specs, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  const CudaImage& image = *compiled->cuda;
  EXPECT_NE(image.ptx.find(".target sm_90"), std::string::npos);
  // The compiler ran ptxas -arch=sm_90 on the PTX: a cubin means it passed.
  EXPECT_GT(image.cubin.size(), 0u);
  // The f32 add scatter uses a native atomic add; the others a CAS loop.
  EXPECT_NE(image.ptx.find(".add.f32"), std::string::npos);
  EXPECT_NE(image.ptx.find(".cas.b"), std::string::npos);
  for (const CompiledKernel& k : image.kernels) EXPECT_NE(image.ptx.find(".entry " + k.name), std::string::npos);
  // In-place kernels run one thread per update element: 30 -> one block.
  EXPECT_EQ(image.kernels[0].launch.grid[0], 1);
}

}  // namespace
}  // namespace kiln::codegen::testing
