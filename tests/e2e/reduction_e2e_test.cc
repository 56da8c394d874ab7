// Reductions through the whole pipeline, against the reference evaluator:
// every shape class of the GPU reduction emitter (packed rows, a warp per
// row, a block per row, columns, split full and column reductions),
// epilogues, multi-output and variadic (argmax) reductions, and every
// accumulator width the warp shuffles handle (8, 16, 32, 64 bits, pred).
// Registered twice (tests/CMakeLists.txt): on the host and on the CUDA
// emulator with its memcheck and race checks on. The launch tests check
// the documented launch heuristic (reduction_emitter.cc) on the CUDA
// artifact.
#include <gtest/gtest.h>

#include "compiler/driver/compiler.h"
#include "serialization/artifact.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
})";

std::string SumModule(const std::string& name, const std::string& in, const std::string& out,
                      const std::string& dims) {
  return "HloModule " + name + "\n" + kAdd + "\nENTRY e {\n  x = f32[" + in +
         "] parameter(0)\n  zero = f32[] constant(0)\n  ROOT r = f32[" + out +
         "] reduce(x, zero), dimensions={" + dims + "}, to_apply=add\n}\n";
}

// Sums of up to 200000 random values in another order than the evaluator's.
CompareOptions SumTolerance() {
  CompareOptions tol;
  tol.rtol = 1e-4;
  tol.atol = 2e-3;
  return tol;
}

using ReductionE2ETest = E2EDeviceTest;

TEST_F(ReductionE2ETest, RowReductionsOfEveryWidth) {
  // Rows of 10 (8 lanes per row, ragged vectors), 300 (one warp), 5000 (one
  // block of 512 threads, ragged), and 37 rows (ragged packed blocks).
  for (auto [in, out] : {std::pair{"100,10", "100"}, {"37,300", "37"}, {"5,5000", "5"}, {"2,3,1,7", "2,3"}}) {
    SCOPED_TRACE(in);
    std::string dims = std::string(in) == "2,3,1,7" ? "2,3" : "1";
    ExpectMatchesEvaluator(SumModule("rows", in, out, dims), *device_, /*seed=*/11, SumTolerance());
  }
}

TEST_F(ReductionE2ETest, ColumnReductions) {
  // Ragged 32-column tiles, a kept major dimension, and a split column
  // reduction ([4096, 64]: 2 tiles -> 64 partial rows per column).
  ExpectMatchesEvaluator(SumModule("cols", "300,70", "70", "0"), *device_, 12, SumTolerance());
  ExpectMatchesEvaluator(SumModule("cols_batch", "3,200,50", "3,50", "1"), *device_, 13, SumTolerance());
  ExpectMatchesEvaluator(SumModule("cols_split", "4096,64", "64", "0"), *device_, 14, SumTolerance());
}

TEST_F(ReductionE2ETest, FullReductionIsSplitAndExact) {
  ExpectMatchesEvaluator(SumModule("full", "200000", "", "0"), *device_, 15, SumTolerance());
  // Integers: the split must not change the exact result.
  ExpectMatchesEvaluator(R"(HloModule full_s32
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[100000] parameter(0)
  zero = s32[] constant(0)
  ROOT r = s32[] reduce(x, zero), dimensions={0}, to_apply=add
})",
                         *device_, 16);
}

TEST_F(ReductionE2ETest, EpilogueAndNarrowSum) {
  // mean over rows of bf16, accumulated in f32 and rounded once.
  CompareOptions tol;
  tol.rtol = 1e-2;
  tol.atol = 1e-2;
  ExpectMatchesEvaluator(R"(HloModule bf16_mean
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[64,768] parameter(0)
  zero = bf16[] constant(0)
  s = bf16[64] reduce(x, zero), dimensions={1}, to_apply=add
  n = bf16[] constant(768)
  nb = bf16[64] broadcast(n), dimensions={}
  ROOT m = bf16[64] divide(s, nb)
})",
                         *device_, 17, tol);
}

TEST_F(ReductionE2ETest, MultiOutputAndVariadic) {
  ExpectMatchesEvaluator(std::string("HloModule two_sums\n") + kAdd + R"(
ENTRY e {
  x = f32[128,500] parameter(0)
  zero = f32[] constant(0)
  s = f32[128] reduce(x, zero), dimensions={1}, to_apply=add
  sq = f32[128,500] multiply(x, x)
  ss = f32[128] reduce(sq, zero), dimensions={1}, to_apply=add
  n = f32[] constant(500)
  nb = f32[128] broadcast(n), dimensions={}
  mean = f32[128] divide(s, nb)
  ROOT t = (f32[128], f32[128]) tuple(mean, ss)
})",
                         *device_, 18, SumTolerance());
  // argmax with the lowest index on ties: exact.
  const char* argmax = R"(HloModule argmax
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[%s] parameter(0)
  iota = s32[%s] iota(), iota_dimension=%d
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[%s], s32[%s]) reduce(x, iota, ninf, zero), dimensions={%d}, to_apply=argmax
})";
  char text[2048];
  std::snprintf(text, sizeof(text), argmax, "64,300", "64,300", 1, "64", "64", 1);
  ExpectMatchesEvaluator(text, *device_, 19);
  std::snprintf(text, sizeof(text), argmax, "300,40", "300,40", 0, "40", "40", 0);
  ExpectMatchesEvaluator(text, *device_, 20);
}

TEST_F(ReductionE2ETest, EveryAccumulatorWidth) {
  // s8 (shuffled in an i32), f16 (16 bits), f64 and s64 (two halves), pred.
  for (const char* type : {"s8", "f16", "f64", "s64"}) {
    SCOPED_TRACE(type);
    std::string t = type;
    ExpectMatchesEvaluator("HloModule w\nmx {\n  a = " + t + "[] parameter(0)\n  b = " + t +
                               "[] parameter(1)\n  ROOT m = " + t + "[] maximum(a, b)\n}\nENTRY e {\n  x = " +
                               t + "[40,333] parameter(0)\n  c = " + t + "[] constant(-100)\n  ROOT r = " + t +
                               "[40] reduce(x, c), dimensions={1}, to_apply=mx\n}\n",
                           *device_, 21);
  }
  ExpectMatchesEvaluator(R"(HloModule any
or {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT o = pred[] and(a, b)
}
ENTRY e {
  x = pred[50,40] parameter(0)
  t = pred[] constant(true)
  ROOT r = pred[40] reduce(x, t), dimensions={0}, to_apply=or
})",
                         *device_, 22);
}

// Complex values (ComplexReduceSplitter: a variadic reduction of the real
// and imaginary parts whose combiner calls the complex one): c64 sums of
// rows, columns, a row long enough to be split (20000) and all of it; a
// c128 product of columns (not a part-wise operation); a c64
// reduce-window sum with padding.
TEST_F(ReductionE2ETest, ComplexReductions) {
  const std::string combiners = R"(HloModule c
add {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT s = c64[] add(a, b)
}
mul {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  ROOT p = c128[] multiply(a, b)
}
)";
  ExpectMatchesEvaluator(combiners + R"(ENTRY e {
  x = c64[8,300] parameter(0)
  long = c64[2,20000] parameter(1)
  z = c64[] constant((0, 0))
  rows = c64[8] reduce(x, z), dimensions={1}, to_apply=add
  cols = c64[300] reduce(x, z), dimensions={0}, to_apply=add
  all = c64[] reduce(x, z), dimensions={0,1}, to_apply=add
  long_rows = c64[2] reduce(long, z), dimensions={1}, to_apply=add
  ROOT t = (c64[8], c64[300], c64[], c64[2]) tuple(rows, cols, all, long_rows)
}
)",
                         *device_, 31, SumTolerance());
  ExpectMatchesEvaluator(combiners + R"(ENTRY e {
  y = c128[5,6] parameter(0)
  one = c128[] constant((1, 0))
  ROOT prod = c128[6] reduce(y, one), dimensions={0}, to_apply=mul
}
)",
                         *device_, 32);
  ExpectMatchesEvaluator(combiners + R"(ENTRY e {
  x = c64[6,7] parameter(0)
  z = c64[] constant((0.5, -1))
  ROOT w = c64[6,4] reduce-window(x, z), window={size=3x2 stride=1x2 pad=1_1x0_1}, to_apply=add
}
)",
                         *device_, 33);
}

TEST(ReductionLaunchTest, FollowsTheDocumentedHeuristic) {
  std::string ptx;
  // [4096, 4096] rows: 1024 vectors of 4 per row -> 256 threads per row, one
  // block per row; 128-bit loads and a shuffle tree.
  EXPECT_EQ(CudaLaunches(SumModule("row", "4096,4096", "4096", "1"), &ptx),
            (std::vector<std::array<int64_t, 3>>{{4096, 32, 8}}));
  EXPECT_NE(ptx.find("ld.global.v4"), std::string::npos);
  EXPECT_NE(ptx.find("shfl.sync.down"), std::string::npos);
  // [4096, 768] bf16-like rows of f32: 192 vectors -> 64 threads per row.
  EXPECT_EQ(CudaLaunches(SumModule("row768", "4096,768", "4096", "1"), &ptx),
            (std::vector<std::array<int64_t, 3>>{{4096, 32, 2}}));
  // [4096, 16] rows: 4 vectors -> one lane per row, 256 rows per block.
  EXPECT_EQ(CudaLaunches(SumModule("row16", "4096,16", "4096", "1"), &ptx),
            (std::vector<std::array<int64_t, 3>>{{16, 32, 8}}));
  // [4096, 4096] columns: 128 tiles < 528, split 8 ways: [8, 512, 4096]
  // (16 warps, 8 * 128 blocks), then [8, 4096] (1 warp, 128 blocks).
  EXPECT_EQ(CudaLaunches(SumModule("col", "4096,4096", "4096", "0"), &ptx),
            (std::vector<std::array<int64_t, 3>>{{1024, 32, 16}, {128, 32, 1}}));
  // 16M elements: [4096, 4096] partial rows, then one row of 4096.
  EXPECT_EQ(CudaLaunches(SumModule("full", "16777216", "", "0"), &ptx),
            (std::vector<std::array<int64_t, 3>>{{4096, 32, 8}, {1, 32, 8}}));
}

}  // namespace
}  // namespace kiln::testing
