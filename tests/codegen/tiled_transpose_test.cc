// The tiled transpose kernel (compiler/codegen/transpose_emitter.cc): host
// kernels for the three normalized forms ([1,0], [0,2,1], [2,1,0]), with
// and without a fused elementwise producer, in f32, f16 and s8, against the
// reference evaluator (pure data movement must match bit for bit); edges
// that are not multiples of the tile size; and the CUDA lowering: PTX that
// uses shared memory and bar.sync, that ptxas accepts for sm_90, and the
// launch (one 32x8 block per 32x32 tile, the padded tile as dynamic shared
// memory) computed by hand. Heroes followed by an elementwise epilogue, with
// other operands read at the output index, against the evaluator too.
#include <unistd.h>

#include "tests/codegen/codegen_test_util.h"

namespace kiln::codegen::testing {
namespace {

bool HavePtxas() { return access("/usr/local/cuda/bin/ptxas", X_OK) == 0; }

std::string Dims(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s;
}

std::string ShapeText(ElementType type, const std::vector<int64_t>& dims) {
  return std::string(ElementTypeName(type)) + "[" + Dims(dims) + "]";
}

// ROOT t = transpose(producer) with permutation `perm`; the producer is
// exp(x) + y for floats, x * y + x for integers, or just x when !fused.
std::string TransposeModule(ElementType type, const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& perm, bool fused) {
  std::vector<int64_t> out;
  for (int64_t d : perm) out.push_back(dims[d]);
  std::string in = ShapeText(type, dims);
  std::string text = "HloModule transpose\nENTRY e {\n  x = " + in + " parameter(0)\n";
  std::string operand = "x";
  if (fused) {
    text += "  y = " + in + " parameter(1)\n";
    if (IsInteger(type)) {
      text += "  m = " + in + " multiply(x, y)\n  s = " + in + " add(m, x)\n";
    } else {
      text += "  ex = " + in + " exponential(x)\n  s = " + in + " add(ex, y)\n";
    }
    operand = "s";
  }
  text += "  ROOT t = " + ShapeText(type, out) + " transpose(" + operand + "), dimensions={" +
          Dims(perm) + "}\n}\n";
  return text;
}

struct Case {
  std::vector<int64_t> dims;
  std::vector<int64_t> perm;
};

// [1,0], [0,2,1], [2,1,0]; sizes on and off multiples of 32; one with
// size-1 dimensions and multi-dimension groups (normalizes to [1,0] of
// 32x36), one [0,2,1] whose batch and swapped groups span two dimensions.
const Case kCases[] = {
    {{100, 70}, {1, 0}},         {{64, 64}, {1, 0}},          {{33, 1000}, {1, 0}},
    {{3, 40, 50}, {0, 2, 1}},    {{17, 5, 40}, {2, 1, 0}},    {{4, 8, 1, 36}, {2, 3, 0, 1}},
    {{2, 3, 20, 24}, {0, 1, 3, 2}},
};

// Whether the kernel of `text` takes the tiled form (kernel IR only: no
// lowering).
bool IsTiled(const std::string& text) {
  std::unique_ptr<hlo::HloModule> module = MustParse(text);
  if (!module) return false;
  CodegenOptions ir_only;
  ir_only.host = false;
  StatusOr<CodegenResult> r = CompileKernels({{"kernel", module->entry()}}, ir_only);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() && r->mlir_text.find("kiln.tiles") != std::string::npos;
}

// Compiles for the host and runs, after checking the kernel is tiled.
Literal CompileTiledAndRun(const std::string& text, const std::vector<Literal>& args) {
  EXPECT_TRUE(IsTiled(text));
  return CompileAndRun(text, args);
}

std::vector<Literal> Args(ElementType type, const std::vector<int64_t>& dims, bool fused) {
  // Integers wrap in s8 (as in the evaluator); floats keep exp moderate.
  std::vector<Literal> args = {Ramp(type, dims, -3, 3)};
  if (fused) args.push_back(Ramp(type, dims, 5, -5));
  return args;
}

// Every case in every element type against the evaluator. Data movement
// and wrapping integer arithmetic are exact; exp is not.
void CheckAllCases(bool fused) {
  for (ElementType type : {ElementType::kF32, ElementType::kF16, ElementType::kS8}) {
    for (const Case& c : kCases) {
      std::string text = TransposeModule(type, c.dims, c.perm, fused);
      SCOPED_TRACE(text);
      std::vector<Literal> args = Args(type, c.dims, fused);
      Literal got = CompileTiledAndRun(text, args);
      Literal want = Evaluate(text, args);
      if (!fused || type == ElementType::kS8) {
        EXPECT_EQ(got, want);
      } else if (type == ElementType::kF32) {
        ExpectNear(got, want, 4e-7, 1e-6);  // expf within ~1 ulp
      } else {
        // f16: exp in f32 then rounded to f16 may be one f16 ulp off the
        // evaluator's f64 rounding, and the sum rounds again.
        ExpectNear(got, want, 2e-3, 2e-3);
      }
    }
  }
}

TEST(TiledTransposeTest, PureTransposeMatchesEvaluatorExactly) { CheckAllCases(/*fused=*/false); }

TEST(TiledTransposeTest, FusedProducerMatchesEvaluator) { CheckAllCases(/*fused=*/true); }

TEST(TiledTransposeTest, HandComputedCorners) {
  // x[i][j] = 1000 * i + j, 33x40 -> t[j][i]: the corners of the ragged
  // last tiles (i = 32, j = 39) must land at t[39][32].
  const std::string text = TransposeModule(ElementType::kF32, {33, 40}, {1, 0}, false);
  Literal x{Shape(ElementType::kF32, {33, 40})};
  for (int64_t i = 0; i < 33; ++i)
    for (int64_t j = 0; j < 40; ++j) x.SetF64(i * 40 + j, 1000.0 * i + j);
  Literal got = CompileTiledAndRun(text, {x});
  ASSERT_EQ(got.element_count(), 33 * 40);
  EXPECT_EQ(got.GetF64(0), 0);                 // t[0][0] = x[0][0]
  EXPECT_EQ(got.GetF64(1), 1000);              // t[0][1] = x[1][0]
  EXPECT_EQ(got.GetF64(32), 32000);            // t[0][32] = x[32][0]
  EXPECT_EQ(got.GetF64(33), 1);                // t[1][0] = x[0][1]
  EXPECT_EQ(got.GetF64(39 * 33 + 32), 32039);  // t[39][32] = x[32][39]
  EXPECT_EQ(got.GetF64(31 * 33 + 31), 31031);  // t[31][31] = x[31][31]
}

TEST(TiledTransposeTest, SmallTransposesStayFlat) {
  // 8 < kMinTiledTransposeDim: the flat one-thread-per-element kernel.
  EXPECT_FALSE(IsTiled(TransposeModule(ElementType::kF32, {8, 100}, {1, 0}, false)));
  // [1,0,2] keeps the minor dimension: nothing to tile.
  EXPECT_FALSE(IsTiled(TransposeModule(ElementType::kF32, {40, 50, 60}, {1, 0, 2}, false)));
}

// Hero transposes followed by an elementwise epilogue (the hero is not the
// root): the tile holds the hero's values, the store phase applies the
// epilogue with its other operands read at the output index. Shapes off
// multiples of 32, each normalized form, a second operand of the output's
// shape, a broadcast operand, a type change after the hero, the hero used
// twice and a reshape keeping the hero's groups; against the evaluator.
struct EpilogueCase {
  const char* text;
  std::vector<Literal> args;
  bool exact;
};

std::vector<EpilogueCase> EpilogueCases() {
  std::vector<EpilogueCase> cases;
  // [1,0] 100x70, f32 hero, multiply by a second operand, add a constant,
  // convert to f16. Each op rounds once, as the evaluator's (an f16 product
  // of f16s is exact in f32): exact, as is the reshape case below.
  cases.push_back({R"(HloModule epilogue_10
ENTRY e {
  x = f32[100,70] parameter(0)
  y = f32[70,100] parameter(1)
  t = f32[70,100] transpose(x), dimensions={1,0}
  m = f32[70,100] multiply(t, y)
  k = f32[] constant(0.5)
  kb = f32[70,100] broadcast(k), dimensions={}
  a = f32[70,100] add(m, kb)
  ROOT c = f16[70,100] convert(a)
})",
                   {}, true});
  cases.back().args.push_back(Ramp(ElementType::kF32, {100, 70}, -3, 3));
  cases.back().args.push_back(Ramp(ElementType::kF32, {70, 100}, 5, -5));
  // [0,2,1] 3x40x50 in f16 with a fused producer (exp), converted to f32 and
  // scaled per batch by a broadcast vector.
  cases.push_back({R"(HloModule epilogue_021
ENTRY e {
  x = f16[3,40,50] parameter(0)
  s = f32[3] parameter(1)
  ex = f16[3,40,50] exponential(x)
  t = f16[3,50,40] transpose(ex), dimensions={0,2,1}
  c = f32[3,50,40] convert(t)
  sb = f32[3,50,40] broadcast(s), dimensions={0}
  ROOT m = f32[3,50,40] multiply(c, sb)
})",
                   {}, false});
  cases.back().args.push_back(Ramp(ElementType::kF16, {3, 40, 50}, -3, 3));
  cases.back().args.push_back(Ramp(ElementType::kF32, {3}, -2, 7));
  // [2,1,0] 17x5x40 in s8: (t + y) * t, wrapping.
  cases.push_back({R"(HloModule epilogue_210
ENTRY e {
  x = s8[17,5,40] parameter(0)
  y = s8[40,5,17] parameter(1)
  t = s8[40,5,17] transpose(x), dimensions={2,1,0}
  a = s8[40,5,17] add(t, y)
  ROOT m = s8[40,5,17] multiply(a, t)
})",
                   {}, true});
  cases.back().args.push_back(Ramp(ElementType::kS8, {17, 5, 40}, -100, 100));
  cases.back().args.push_back(Ramp(ElementType::kS8, {40, 5, 17}, 50, -50));
  // Result groups (50, 60) through a reshape that keeps them ([50,1,20,3]
  // -> [50,60], as before a GEMM), with an operand on either side of it.
  cases.push_back({R"(HloModule epilogue_reshape
ENTRY e {
  x = f32[1,20,3,50] parameter(0)
  z = f32[50,1,20,3] parameter(1)
  y = f32[50,60] parameter(2)
  t = f32[50,1,20,3] transpose(x), dimensions={3,0,1,2}
  a = f32[50,1,20,3] add(t, z)
  r = f32[50,60] reshape(a)
  c = f16[50,60] convert(r)
  yc = f16[50,60] convert(y)
  ROOT m = f16[50,60] multiply(c, yc)
})",
                   {}, true});
  cases.back().args.push_back(Ramp(ElementType::kF32, {1, 20, 3, 50}, -3, 3));
  cases.back().args.push_back(Ramp(ElementType::kF32, {50, 1, 20, 3}, 2, -2));
  cases.back().args.push_back(Ramp(ElementType::kF32, {50, 60}, -4, 4));
  return cases;
}

TEST(TiledTransposeTest, EpilogueMatchesEvaluator) {
  for (const EpilogueCase& c : EpilogueCases()) {
    SCOPED_TRACE(c.text);
    Literal got = CompileTiledAndRun(c.text, c.args);
    Literal want = Evaluate(c.text, c.args);
    if (c.exact) {
      EXPECT_EQ(got, want);
    } else {
      // exp in f32 rounded to f16 may be one f16 ulp off the evaluator's.
      ExpectNear(got, want, 2e-3, 2e-3);
    }
  }
}

TEST(TiledTransposeTest, HandComputedEpilogue) {
  // t[j][i] = x[i][j] = 1000 * i + j over 33x40, then t * y + 1 with
  // y[j][i] = 2: the ragged last tiles' corner t[39][32] = 2 * 32039 + 1.
  const std::string text = R"(HloModule epilogue_corner
ENTRY e {
  x = f32[33,40] parameter(0)
  y = f32[40,33] parameter(1)
  t = f32[40,33] transpose(x), dimensions={1,0}
  m = f32[40,33] multiply(t, y)
  one = f32[] constant(1)
  ob = f32[40,33] broadcast(one), dimensions={}
  ROOT a = f32[40,33] add(m, ob)
})";
  Literal x{Shape(ElementType::kF32, {33, 40})};
  for (int64_t i = 0; i < 33; ++i)
    for (int64_t j = 0; j < 40; ++j) x.SetF64(i * 40 + j, 1000.0 * i + j);
  Literal y{Shape(ElementType::kF32, {40, 33})};
  for (int64_t i = 0; i < 40 * 33; ++i) y.SetF64(i, 2);
  Literal got = CompileTiledAndRun(text, {x, y});
  ASSERT_EQ(got.element_count(), 33 * 40);
  EXPECT_EQ(got.GetF64(0), 1);                      // 2 * x[0][0] + 1
  EXPECT_EQ(got.GetF64(1), 2001);                   // 2 * x[1][0] + 1
  EXPECT_EQ(got.GetF64(33), 3);                     // 2 * x[0][1] + 1
  EXPECT_EQ(got.GetF64(39 * 33 + 32), 64079);       // 2 * x[32][39] + 1
}

TEST(TiledTransposeTest, HeroReadAtOtherIndicesIsNotTiled) {
  // reverse(t) reads the hero at another index than it writes: no tiled
  // kernel (the flat kernel computes it elementally).
  EXPECT_FALSE(IsTiled(R"(HloModule reversed
ENTRY e {
  x = f32[64,96] parameter(0)
  t = f32[96,64] transpose(x), dimensions={1,0}
  r = f32[96,64] reverse(t), dimensions={0}
  ROOT a = f32[96,64] add(t, r)
})"));
}

struct PtxCase {
  ElementType type;
  std::vector<int64_t> dims;
  std::vector<int64_t> perm;
  int64_t tiles;  // by hand: batch * ceil(X/32) * ceil(Y/32)
  int64_t element_bytes;
};

TEST(TiledTransposeTest, PtxUsesSharedMemoryAndBarrierAndAssembles) {
  const PtxCase cases[] = {
      {ElementType::kF32, {100, 70}, {1, 0}, 4 * 3, 4},             // X=100, Y=70
      {ElementType::kF16, {3, 40, 50}, {0, 2, 1}, 3 * 2 * 2, 2},    // P=3, X=40, Y=50
      {ElementType::kS8, {17, 5, 40}, {2, 1, 0}, 5 * 1 * 2, 1},     // X=17, Q=5, Y=40
      {ElementType::kF32, {64, 64}, {1, 0}, 2 * 2, 4},
  };
  for (const PtxCase& c : cases) {
    std::string text = TransposeModule(c.type, c.dims, c.perm, /*fused=*/true);
    SCOPED_TRACE(text);
    std::unique_ptr<hlo::HloModule> module = MustParse(text);
    ASSERT_TRUE(module);
    CodegenOptions options;
    options.host = false;
    options.cuda = true;
    StatusOr<CodegenResult> r = CompileKernels({{"tiled", module->entry()}}, options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const CudaImage& image = *r->cuda;
    EXPECT_NE(image.ptx.find(".entry tiled"), std::string::npos);
    EXPECT_NE(image.ptx.find(".shared"), std::string::npos) << image.ptx;
    EXPECT_NE(image.ptx.find("bar.sync"), std::string::npos) << image.ptx;
    EXPECT_NE(image.ptx.find("%tid.y"), std::string::npos);
    EXPECT_NE(image.ptx.find("%ctaid.x"), std::string::npos);
    if (HavePtxas()) {
      EXPECT_FALSE(image.cubin.empty());
    }
    ASSERT_EQ(image.kernels.size(), 1u);
    const LaunchDims& l = image.kernels[0].launch;
    EXPECT_EQ(l.grid[0], c.tiles);
    EXPECT_EQ(l.grid[1], 1);
    EXPECT_EQ(l.grid[2], 1);
    EXPECT_EQ(l.block[0], 32);
    EXPECT_EQ(l.block[1], 8);
    EXPECT_EQ(l.block[2], 1);
    EXPECT_EQ(l.shared_mem_bytes, 32 * 33 * c.element_bytes);
  }
}

TEST(TiledTransposeTest, EpiloguePtxSizesTheTileByTheHero) {
  // An f16 hero with an f32 epilogue: the tile holds f16 (2 bytes).
  std::vector<EpilogueCase> cases = EpilogueCases();
  std::unique_ptr<hlo::HloModule> module = MustParse(cases[1].text);
  ASSERT_TRUE(module);
  CodegenOptions options;
  options.host = false;
  options.cuda = true;
  StatusOr<CodegenResult> r = CompileKernels({{"tiled", module->entry()}}, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const CudaImage& image = *r->cuda;
  EXPECT_NE(image.ptx.find("bar.sync"), std::string::npos) << image.ptx;
  if (HavePtxas()) {
    EXPECT_FALSE(image.cubin.empty());
  }
  ASSERT_EQ(image.kernels.size(), 1u);
  const LaunchDims& l = image.kernels[0].launch;
  EXPECT_EQ(l.grid[0], 3 * 2 * 2);  // P = 3, X = 40, Y = 50
  EXPECT_EQ(l.shared_mem_bytes, 32 * 33 * 2);
}

TEST(TiledTransposeTest, MixedModuleKeepsFlatLaunchForOtherKernels) {
  // One tiled and one flat kernel in the same PTX module: the flat one
  // keeps 256-thread blocks (4 elements per thread).
  std::unique_ptr<hlo::HloModule> tiled = MustParse(TransposeModule(ElementType::kF32, {64, 96}, {1, 0}, false));
  std::unique_ptr<hlo::HloModule> flat = MustParse(R"(
HloModule flat
ENTRY e {
  a = f32[300] parameter(0)
  ROOT n = f32[300] negate(a)
})");
  ASSERT_TRUE(tiled && flat);
  CodegenOptions options;
  options.cuda = true;
  StatusOr<CodegenResult> r =
      CompileKernels({{"tiled", tiled->entry()}, {"flat", flat->entry()}}, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cuda->kernels.size(), 2u);
  EXPECT_EQ(r->cuda->kernels[0].launch.grid[0], 2 * 3);
  EXPECT_EQ(r->cuda->kernels[0].launch.block[1], 8);
  EXPECT_EQ(r->cuda->kernels[1].launch.grid[0], 1);  // 75 threads of 4 elements
  EXPECT_EQ(r->cuda->kernels[1].launch.block[0], 256);
  EXPECT_EQ(r->cuda->kernels[1].launch.shared_mem_bytes, 0);
  if (HavePtxas()) {
    EXPECT_FALSE(r->cuda->cubin.empty());
  }
  // Host launches count units (CompiledKernel::launch): the 6 tiles of
  // 32x32 elements, and the 300 elements of the flat kernel.
  ASSERT_TRUE(r->host.has_value());
  EXPECT_EQ(r->host->kernels[0].launch.grid[0], 2 * 3);
  EXPECT_EQ(r->host->kernels[0].launch.block[0], 32 * 32);
  EXPECT_EQ(r->host->kernels[0].launch.shared_mem_bytes, 0);
  EXPECT_EQ(r->host->kernels[1].launch.grid[0], 300);
  EXPECT_EQ(r->host->kernels[1].launch.block[0], 1);
}

}  // namespace
}  // namespace kiln::codegen::testing
