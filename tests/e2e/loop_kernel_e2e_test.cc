// While loops of small scalar iterations compiled into one kernel that
// contains the loop (passes::WhileLoopKernelFusion, codegen's loop_ops.cc):
// each module is checked against the reference evaluator on seeded random
// inputs, and the compiled host program is checked to hold the loop as a
// kernel (no While thunk) or, for loops that do not qualify, as a thunk loop
// whose body updates the loop state in place where it can.
#include <gtest/gtest.h>

#include "compiler/passes/while_loop_kernel_fusion.h"
#include "tests/e2e/e2e_test_util.h"

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
    if (E2EDeviceKind() == runtime::DeviceKind::kHost) EXPECT_EQ(CountThunks(text, thunks::ThunkKind::kWhile), loops) << text;
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
  // The inner loop becomes a kernel; the outer one, whose body holds that
  // kernel, stays a thunk loop.
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
)", 1);
}

TEST_F(LoopKernelE2ETest, ThunkLoopUpdatesItsStateInPlace) {
  // A scan: the counter and the carry are read by the output's update
  // before their new values are computed; scheduled after those readers,
  // the new values are computed in the state's buffers, with no copy back.
  const std::string scan = R"(HloModule m
cond {
  s = (s32[], f32[3], f32[50,3], f32[50,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(50)
  ROOT lt = pred[] compare(i, n), direction=LT
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
  if (E2EDeviceKind() == runtime::DeviceKind::kHost) EXPECT_EQ(CountThunks(scan, thunks::ThunkKind::kCopy, 1), 0);
}

TEST_F(LoopKernelE2ETest, CarriedArrayKeepsTheThunkLoop) {
  // A dynamic-update-slice of a carried array: not a scalar loop.
  Check(R"(HloModule m
cond {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(100)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  buf = f32[64] get-tuple-element(s), index=1
  size = s32[] constant(64)
  at = s32[] remainder(i, size)
  v = f32[] convert(i)
  update = f32[1] broadcast(v), dimensions={}
  buf2 = f32[64] dynamic-update-slice(buf, update, at)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[64]) tuple(i2, buf2)
}
ENTRY e {
  buf = f32[64] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[64]) tuple(zero, buf)
  ROOT w = (s32[], f32[64]) while(init), condition=cond, body=body
}
)", 1);
}

}  // namespace
}  // namespace kiln::testing
