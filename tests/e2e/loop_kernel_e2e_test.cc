// While loops of small scalar iterations compiled into one kernel that
// contains the loop (passes::WhileLoopKernelFusion, codegen's loop_ops.cc):
// each module is checked against the reference evaluator on seeded random
// inputs, and the compiled host program is checked to hold the loop as a
// kernel (no While thunk) or, for loops that do not qualify, as a thunk loop
// whose body updates the loop state in place where it can.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "compiler/passes/while_loop_kernel_fusion.h"
#include "tests/e2e/e2e_test_util.h"
#include "tests/e2e/process_test_util.h"

namespace kiln::testing {
namespace {

// `text` compiled for the host alone (nullopt, failing the test, if it does not compile).
std::optional<bef::Artifact> CompileForHost(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return std::nullopt;
  compiler::CompileOptions options;
  options.host_cpus = {"x86-64-v2"};
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return std::nullopt;
  return std::move(*artifact);
}

// Thunks of `kind` in `text` compiled for the host, at depth > `min_depth`
// (1: inside control flow); -1 if it does not compile.
int64_t CountThunks(const std::string& text, thunks::ThunkKind kind, int min_depth = 0) {
  std::optional<bef::Artifact> artifact = CompileForHost(text);
  if (!artifact) return -1;
  int64_t count = 0;
  thunks::ForEachThunk(artifact->program.root, [&](const thunks::Thunk& t, int depth) {
    count += depth > min_depth && t.kind() == kind;
  });
  return count;
}

class LoopKernelE2ETest : public E2EDeviceTest {
 protected:
  // Matches the evaluator on three seeds; on the host, `loops` While thunks remain.
  void Check(const std::string& text, int64_t loops) {
    for (uint64_t seed : {1, 2, 3}) ExpectMatchesEvaluator(text, *device_, seed);
    if (E2EDeviceKind() == runtime::DeviceKind::kHost) {
      EXPECT_EQ(CountThunks(text, thunks::ThunkKind::kWhile), loops) << text;
    }
  }
};

// The trip count depends on the input: n = p & 255 iterations of a
// multiply-add recurrence on s32 (wrapping) and an f32 accumulator.
constexpr char kDataDependentTripCount[] = R"(HloModule m
cond {
  s = (s32[], s32[], f32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=3
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], f32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  x = f32[] get-tuple-element(s), index=2
  n = s32[] get-tuple-element(s), index=3
  a = s32[] constant(1103515245)
  scaled = s32[] multiply(acc, a)
  acc2 = s32[] add(scaled, i)
  half = f32[] constant(0.5)
  fi = f32[] convert(i)
  x2 = f32[] multiply(x, half)
  x3 = f32[] add(x2, fi)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], s32[], f32[], s32[]) tuple(i2, acc2, x3, n)
}
ENTRY e {
  p = s32[] parameter(0)
  x = f32[] parameter(1)
  mask = s32[] constant(255)
  n = s32[] and(p, mask)
  zero = s32[] constant(0)
  init = (s32[], s32[], f32[], s32[]) tuple(zero, p, x, n)
  w = (s32[], s32[], f32[], s32[]) while(init), condition=cond, body=body
  acc = s32[] get-tuple-element(w), index=1
  xs = f32[] get-tuple-element(w), index=2
  ROOT r = (s32[], f32[]) tuple(acc, xs)
}
)";

TEST_F(LoopKernelE2ETest, DataDependentTripCount) { Check(kDataDependentTripCount, 0); }

TEST_F(LoopKernelE2ETest, ZeroIterations) {
  // The condition is false on entry: the state comes out as it went in.
  Check(R"(HloModule m
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  five = s32[] constant(5)
  ROOT lt = pred[] compare(i, five), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x2 = f32[] multiply(x, x)
  ROOT t = (s32[], f32[]) tuple(i2, x2)
}
ENTRY e {
  x = f32[] parameter(0)
  ten = s32[] constant(10)
  init = (s32[], f32[]) tuple(ten, x)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
}
)", 0);
}

TEST_F(LoopKernelE2ETest, TupleStateOfMixedTypes) {
  // pred, s64, f64 and bf16 leaves; the loop itself is the result.
  Check(R"(HloModule m
cond {
  s = (s32[], pred[], s64[], f64[], bf16[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(37)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], pred[], s64[], f64[], bf16[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  flag = pred[] get-tuple-element(s), index=1
  big = s64[] get-tuple-element(s), index=2
  y = f64[] get-tuple-element(s), index=3
  h = bf16[] get-tuple-element(s), index=4
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  flag2 = pred[] not(flag)
  wide = s64[] convert(i)
  big2 = s64[] add(big, wide)
  big3 = s64[] select(flag, big2, big)
  third = f64[] constant(0.3333333333)
  y2 = f64[] multiply(y, third)
  y3 = f64[] sine(y2)
  hb = bf16[] convert(y3)
  h2 = bf16[] add(h, hb)
  ROOT t = (s32[], pred[], s64[], f64[], bf16[]) tuple(i2, flag2, big3, y3, h2)
}
ENTRY e {
  flag = pred[] parameter(0)
  big = s64[] parameter(1)
  y = f64[] parameter(2)
  h = bf16[] parameter(3)
  zero = s32[] constant(0)
  init = (s32[], pred[], s64[], f64[], bf16[]) tuple(zero, flag, big, y, h)
  ROOT w = (s32[], pred[], s64[], f64[], bf16[]) while(init), condition=cond, body=body
}
)", 0);
}

TEST_F(LoopKernelE2ETest, PassThroughArrayIndexedByTheBody) {
  // The body reads table[i mod 4096] of a large state array it passes
  // through unchanged (jax's fori_loop over an array); the result returns
  // the array too.
  Check(R"(HloModule m
cond {
  s = (s32[], f32[], f32[4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[], f32[4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[] get-tuple-element(s), index=1
  table = f32[4096] get-tuple-element(s), index=2
  size = s32[] constant(4096)
  at = s32[] remainder(i, size)
  slice = f32[1] dynamic-slice(table, at), dynamic_slice_sizes={1}
  v = f32[] reshape(slice)
  acc2 = f32[] add(acc, v)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[], f32[4096]) tuple(i2, acc2, table)
}
ENTRY e {
  table = f32[4096] parameter(0)
  zero = s32[] constant(0)
  fz = f32[] constant(0)
  init = (s32[], f32[], f32[4096]) tuple(zero, fz, table)
  ROOT w = (s32[], f32[], f32[4096]) while(init), condition=cond, body=body
}
)", 0);
}

TEST_F(LoopKernelE2ETest, ConditionReadsPassThroughLeaf) {
  // The bound n is leaf 1 of the state and operand 1 of the condition's
  // compare: read by the condition although the body passes it through.
  Check(R"(HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(next, n)
}
ENTRY e {
  p = s32[] parameter(0)
  mask = s32[] constant(1023)
  n = s32[] and(p, mask)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  loop = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT i = s32[] get-tuple-element(loop), index=0
}
)", 0);
}

TEST_F(LoopKernelE2ETest, UnreadPassThroughLeaf) {
  // The loop carries an array it never reads: it is no kernel operand, and
  // the loop's result still holds the value it went in with.
  Check(R"(HloModule m
cond {
  s = (s32[], f32[2048], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(9)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2048], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  unread = f32[2048] get-tuple-element(s), index=1
  acc = s32[] get-tuple-element(s), index=2
  acc2 = s32[] multiply(acc, i)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[2048], s32[]) tuple(i2, unread, acc2)
}
ENTRY e {
  x = f32[2048] parameter(0)
  a = s32[] parameter(1)
  one = s32[] constant(1)
  init = (s32[], f32[2048], s32[]) tuple(one, x, a)
  ROOT w = (s32[], f32[2048], s32[]) while(init), condition=cond, body=body
}
)", 0);
}

TEST_F(LoopKernelE2ETest, NestedLoops) {
  // The inner loop becomes a kernel first, then the outer one takes it in:
  // the whole nest is one kernel.
  Check(R"(HloModule m
inner_cond {
  s = (s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(j, n), direction=LT
}
inner_body {
  s = (s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  three = s32[] constant(3)
  m = s32[] multiply(acc, three)
  acc2 = s32[] add(m, j)
  one = s32[] constant(1)
  j2 = s32[] add(j, one)
  ROOT t = (s32[], s32[]) tuple(j2, acc2)
}
outer_cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
outer_body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, acc)
  w = (s32[], s32[]) while(init), condition=inner_cond, body=inner_body
  acc2 = s32[] get-tuple-element(w), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(i2, acc2)
}
ENTRY e {
  p = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, p)
  w = (s32[], s32[]) while(init), condition=outer_cond, body=outer_body
  ROOT r = s32[] get-tuple-element(w), index=1
}
)", 0);
}

// An inner loop carrying an array, read by its outer loop at several
// indices (a reduce, a slice, the next outer state element by element).
constexpr char kNestedLoopsWithArrays[] = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
inner_cond {
  s = (s32[], f32[4], f32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(j, n), direction=LT
}
inner_body {
  s = (s32[], f32[4], f32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  v = f32[4] get-tuple-element(s), index=1
  x = f32[] get-tuple-element(s), index=2
  e = f32[1] dynamic-slice(v, j), dynamic_slice_sizes={1}
  es = f32[] reshape(e)
  fj = f32[] convert(j)
  m = f32[] multiply(es, x)
  n = f32[] add(m, fj)
  nb = f32[1] reshape(n)
  v2 = f32[4] dynamic-update-slice(v, nb, j)
  one = s32[] constant(1)
  j2 = s32[] add(j, one)
  ROOT t = (s32[], f32[4], f32[]) tuple(j2, v2, x)
}
outer_cond {
  s = (s32[], f32[], f32[4], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
outer_body {
  s = (s32[], f32[], f32[4], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[] get-tuple-element(s), index=1
  w = f32[4] get-tuple-element(s), index=2
  lo = f32[] constant(-0.5)
  hi = f32[] constant(0.5)
  x = f32[] clamp(lo, acc, hi)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[]) tuple(zero, w, x)
  r = (s32[], f32[4], f32[]) while(init), condition=inner_cond, body=inner_body
  w2 = f32[4] get-tuple-element(r), index=1
  z = f32[] constant(0)
  sum = f32[] reduce(w2, z), dimensions={0}, to_apply=add
  eighth = f32[] constant(0.125)
  acc2 = f32[] multiply(sum, eighth)
  mid = f32[2] slice(w2), slice={[1:3]}
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[], f32[4], f32[2]) tuple(i2, acc2, w2, mid)
}
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[] parameter(1)
  q = f32[2] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[], f32[4], f32[2]) tuple(zero, a, p, q)
  ROOT w = (s32[], f32[], f32[4], f32[2]) while(init), condition=outer_cond, body=outer_body
}
)";

TEST_F(LoopKernelE2ETest, NestedLoopsCarryingArrays) {
  Check(kNestedLoopsWithArrays, 0);
  if (E2EDeviceKind() != runtime::DeviceKind::kHost) return;
  // The inner loop runs once per outer iteration however many of its
  // elements the outer body reads: the kernel holds two scf.while loops.
  auto module = hlo::ParseHloModule(kNestedLoopsWithArrays);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ScratchDir dir;
  compiler::CompileOptions options;
  options.host_cpus = {"x86-64-v2"};
  options.dump_dir = dir.path();
  ASSERT_TRUE(compiler::CompileModule(**module, options).ok());
  std::ifstream in(dir.path() + "/kernels.mlir");
  std::stringstream mlir;
  mlir << in.rdbuf();
  size_t loops = 0;
  for (size_t at = mlir.str().find("scf.while"); at != std::string::npos; at = mlir.str().find("scf.while", at + 1))
    ++loops;
  EXPECT_EQ(loops, 2u);
}

TEST_F(LoopKernelE2ETest, ThunkLoopUpdatesItsStateInPlace) {
  // A scan: the counter and the carry are read by the output's update
  // before their new values are computed; scheduled after those readers,
  // the new values are computed in the state's buffers, with no copy back.
  // (The condition reads the stacked outputs, so the loop stays a thunk
  // loop instead of a kernel keeping them in memory.)
  const std::string scan = R"(HloModule m
cond {
  s = (s32[], f32[3], f32[50,3], f32[50,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(50)
  lt = pred[] compare(i, n), direction=LT
  ys = f32[50,3] get-tuple-element(s), index=2
  y0 = f32[1,1] slice(ys), slice={[0:1], [0:1]}
  y = f32[] reshape(y0)
  big = f32[] constant(1e30)
  small = pred[] compare(y, big), direction=LT
  ROOT go = pred[] and(lt, small)
}
body {
  s = (s32[], f32[3], f32[50,3], f32[50,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  carry = f32[3] get-tuple-element(s), index=1
  ys = f32[50,3] get-tuple-element(s), index=2
  xs = f32[50,3] get-tuple-element(s), index=3
  zero = s32[] constant(0)
  x = f32[1,3] dynamic-slice(xs, i, zero), dynamic_slice_sizes={1,3}
  xv = f32[3] reshape(x)
  carry2 = f32[3] add(carry, xv)
  y = f32[3] multiply(carry, xv)
  yr = f32[1,3] reshape(y)
  ys2 = f32[50,3] dynamic-update-slice(ys, yr, i, zero)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[3], f32[50,3], f32[50,3]) tuple(i2, carry2, ys2, xs)
}
ENTRY e {
  xs = f32[50,3] parameter(0)
  zero = s32[] constant(0)
  fz = f32[] constant(0)
  carry = f32[3] broadcast(fz), dimensions={}
  ys = f32[50,3] broadcast(fz), dimensions={}
  init = (s32[], f32[3], f32[50,3], f32[50,3]) tuple(zero, carry, ys, xs)
  w = (s32[], f32[3], f32[50,3], f32[50,3]) while(init), condition=cond, body=body
  c = f32[3] get-tuple-element(w), index=1
  out = f32[50,3] get-tuple-element(w), index=2
  ROOT r = (f32[3], f32[50,3]) tuple(c, out)
}
)";
  Check(scan, 1);
  if (E2EDeviceKind() == runtime::DeviceKind::kHost) {
    EXPECT_EQ(CountThunks(scan, thunks::ThunkKind::kCopy, 1), 0);
  }
}

// A dynamic-update-slice of a carried array of n elements, next to the
// carried counter: 63 + 1 elements a kernel's loop carries in registers,
// 64 + 1 are over kMaxCarriedElements and keep the thunk loop.
std::string DusLoop(int64_t n) {
  const std::string a = "f32[" + std::to_string(n) + "]";
  return R"(HloModule m
cond {
  s = (s32[], )" + a + R"() parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(100)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], )" + a + R"() parameter(0)
  i = s32[] get-tuple-element(s), index=0
  buf = )" + a + R"( get-tuple-element(s), index=1
  size = s32[] constant()" + std::to_string(n) + R"()
  at = s32[] remainder(i, size)
  v = f32[] convert(i)
  update = f32[1] broadcast(v), dimensions={}
  buf2 = )" + a + R"( dynamic-update-slice(buf, update, at)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], )" + a + R"() tuple(i2, buf2)
}
ENTRY e {
  buf = )" + a + R"( parameter(0)
  zero = s32[] constant(0)
  init = (s32[], )" + a + R"() tuple(zero, buf)
  ROOT w = (s32[], )" + a + R"() while(init), condition=cond, body=body
}
)";
}

TEST_F(LoopKernelE2ETest, SmallCarriedArrayBecomesKernel) {
  static_assert(passes::WhileLoopKernelFusion::kMaxCarriedElements == 64);
  Check(DusLoop(63), 0);
}

TEST_F(LoopKernelE2ETest, LargeCarriedArrayKeepsTheThunkLoop) { Check(DusLoop(64), 1); }

// Over kMaxCarriedElements, an array the body changes only by a
// dynamic-update-slice of itself stays in memory: the kernel copies the
// loop's initial value (here the entry's parameter) into its output once
// and stores each update there (passes::InMemoryLeafUpdate).
TEST_F(LoopKernelE2ETest, LargeArrayUpdatedOnlyInPlaceBecomesKernel) { Check(DusLoop(200), 0); }

// A scan (bench_scan's shape): a carried f32[3] combined with row i of a
// pass-through table, each step's product stacked into an f32[50,3] output
// at a row that moves by 7 and past the end (the start clamps to row 47, so
// later steps overwrite earlier ones), and a bf16[80] history written at
// i % 80. Both stacked arrays stay in memory, the carried state in registers.
constexpr char kScanStackingOutputs[] = R"(HloModule m
cond {
  s = (s32[], f32[3], f32[50,3], bf16[80], f32[60,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(60)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[3], f32[50,3], bf16[80], f32[60,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  c = f32[3] get-tuple-element(s), index=1
  ys = f32[50,3] get-tuple-element(s), index=2
  hist = bf16[80] get-tuple-element(s), index=3
  xs = f32[60,3] get-tuple-element(s), index=4
  zero = s32[] constant(0)
  x = f32[1,3] dynamic-slice(xs, i, zero), dynamic_slice_sizes={1,3}
  x0 = f32[3] reshape(x)
  half = f32[3] constant({0.5, 0.25, 0.125})
  scaled = f32[3] multiply(c, half)
  c2 = f32[3] add(scaled, x0)
  prod = f32[3] multiply(c, x0)
  row = f32[1,3] reshape(prod)
  seven = s32[] constant(7)
  fifty_three = s32[] constant(53)
  i7 = s32[] multiply(i, seven)
  at = s32[] remainder(i7, fifty_three)
  ys2 = f32[50,3] dynamic-update-slice(ys, row, at, zero)
  first = f32[1] slice(c2), slice={[0:1]}
  h = bf16[1] convert(first)
  eighty = s32[] constant(80)
  hat = s32[] remainder(i, eighty)
  hist2 = bf16[80] dynamic-update-slice(hist, h, hat)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT r = (s32[], f32[3], f32[50,3], bf16[80], f32[60,3]) tuple(i2, c2, ys2, hist2, xs)
}
ENTRY e {
  xs = f32[60,3] parameter(0)
  ys = f32[50,3] parameter(1)
  start = f32[] constant(1)
  c = f32[3] broadcast(start), dimensions={}
  hzero = bf16[] constant(0)
  hist = bf16[80] broadcast(hzero), dimensions={}
  zero = s32[] constant(0)
  init = (s32[], f32[3], f32[50,3], bf16[80], f32[60,3]) tuple(zero, c, ys, hist, xs)
  w = (s32[], f32[3], f32[50,3], bf16[80], f32[60,3]) while(init), condition=cond, body=body
  cn = f32[3] get-tuple-element(w), index=1
  ysn = f32[50,3] get-tuple-element(w), index=2
  hn = bf16[80] get-tuple-element(w), index=3
  ROOT o = (f32[3], f32[50,3], bf16[80]) tuple(cn, ysn, hn)
}
)";

TEST_F(LoopKernelE2ETest, ScanStacksOutputsInMemory) { Check(kScanStackingOutputs, 0); }

// The in-memory form needs the update to be the only read of the array:
// a body that also reduces the array, or a condition that reads it, keeps
// the thunk loop (and the same results).
std::string DusLoopAlsoReading(bool in_body) {
  const std::string body_read = in_body ? R"(
  sum = f32[] reduce(buf, fzero), dimensions={0}, to_apply=add
  v = f32[] add(vi, sum))"
                                        : R"(
  v = f32[] add(vi, fzero))";
  const std::string cond_read = in_body ? R"(
  ROOT lt = pred[] compare(i, n), direction=LT)"
                                        : R"(
  lt = pred[] compare(i, n), direction=LT
  buf = f32[200] get-tuple-element(s), index=1
  b0 = f32[1] slice(buf), slice={[0:1]}
  b = f32[] reshape(b0)
  big = f32[] constant(1e30)
  small = pred[] compare(b, big), direction=LT
  ROOT go = pred[] and(lt, small))";
  return R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  s = (s32[], f32[200]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(100))" + cond_read + R"(
}
body {
  s = (s32[], f32[200]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  buf = f32[200] get-tuple-element(s), index=1
  fzero = f32[] constant(0)
  vi = f32[] convert(i))" + body_read + R"(
  update = f32[1] broadcast(v), dimensions={}
  at = s32[] multiply(i, i)
  buf2 = f32[200] dynamic-update-slice(buf, update, at)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[200]) tuple(i2, buf2)
}
ENTRY e {
  buf = f32[200] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[200]) tuple(zero, buf)
  ROOT w = (s32[], f32[200]) while(init), condition=cond, body=body
}
)";
}

TEST_F(LoopKernelE2ETest, ArrayAlsoReadByTheBodyKeepsTheThunkLoop) { Check(DusLoopAlsoReading(true), 1); }

TEST_F(LoopKernelE2ETest, ArrayReadByTheConditionKeepsTheThunkLoop) { Check(DusLoopAlsoReading(false), 1); }

// The shape of an ODE solver's inner loop (diffrax): two carried f32[10]
// arrays each updated by a scatter at a position that moves every
// iteration, a read of a carried array at a run-time index, a pass-through
// table read at a run-time index, and a dot of 7 coefficients (expanded to
// a multiply and reduce, so it fuses) whose operand is a concatenate of
// scalars; tanh keeps the recurrence bounded.
constexpr char kScatterAndDotLoop[] = R"(HloModule m
replace {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
accumulate {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  s = (s32[], f32[10], f32[10], f32[10], f32[7]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(23)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[10], f32[10], f32[10], f32[7]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  xs = f32[10] get-tuple-element(s), index=1
  ys = f32[10] get-tuple-element(s), index=2
  table = f32[10] get-tuple-element(s), index=3
  coeffs = f32[7] get-tuple-element(s), index=4
  ten = s32[] constant(10)
  at = s32[] remainder(i, ten)
  nine = s32[] constant(9)
  i9 = s32[] add(i, nine)
  prev = s32[] remainder(i9, ten)
  t = f32[1] dynamic-slice(table, at), dynamic_slice_sizes={1}
  t0 = f32[] reshape(t)
  y = f32[1] dynamic-slice(ys, prev), dynamic_slice_sizes={1}
  y0 = f32[] reshape(y)
  u = f32[] multiply(t0, y0)
  u2 = f32[] multiply(u, u)
  p0 = f32[1] reshape(u)
  p1 = f32[1] reshape(u2)
  p2 = f32[1] reshape(t0)
  p3 = f32[1] reshape(y0)
  m4 = f32[] multiply(u2, t0)
  p4 = f32[1] reshape(m4)
  m5 = f32[] subtract(u, t0)
  p5 = f32[1] reshape(m5)
  m6 = f32[] add(u2, y0)
  p6 = f32[1] reshape(m6)
  basis = f32[7] concatenate(p0, p1, p2, p3, p4, p5, p6), dimensions={0}
  d = f32[] dot(basis, coeffs), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  idx = s32[1] reshape(at)
  xs2 = f32[10] scatter(xs, idx, t0), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=accumulate
  bounded = f32[] tanh(d)
  ys2 = f32[10] scatter(ys, idx, bounded), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=replace
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT r = (s32[], f32[10], f32[10], f32[10], f32[7]) tuple(i2, xs2, ys2, table, coeffs)
}
ENTRY e {
  xs = f32[10] parameter(0)
  ys = f32[10] parameter(1)
  table = f32[10] parameter(2)
  coeffs = f32[7] parameter(3)
  zero = s32[] constant(0)
  init = (s32[], f32[10], f32[10], f32[10], f32[7]) tuple(zero, xs, ys, table, coeffs)
  w = (s32[], f32[10], f32[10], f32[10], f32[7]) while(init), condition=cond, body=body
  a = f32[10] get-tuple-element(w), index=1
  b = f32[10] get-tuple-element(w), index=2
  ROOT o = (f32[10], f32[10]) tuple(a, b)
}
)";

TEST_F(LoopKernelE2ETest, CarriedArraysUpdatedByScattersAndADot) { Check(kScatterAndDotLoop, 0); }

}  // namespace
}  // namespace kiln::testing
