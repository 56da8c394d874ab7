// End-to-end coverage of the first op set: every op is compiled through the
// whole pipeline (passes, fusion, buffer assignment, MLIR codegen, .bef),
// executed by the host runtime and compared with the reference evaluator on
// seeded random inputs.
#include <gtest/gtest.h>

#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

class OpsE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }
  // A module whose entry has `params` (HLO parameter lines) and `body`.
  void Check(const std::string& body, uint64_t seed = 1, const CompareOptions& tol = {}) {
    ExpectMatchesEvaluator("HloModule m\n\n" + kReducers + "ENTRY e {\n" + body + "}\n", *device_, seed, tol);
  }
  static inline const std::string kReducers =
      "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
      "max_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n\n"
      "mul_s32 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] multiply(a, b)\n}\n\n"
      // (value, index) pairs: the larger value, the smaller index on ties.
      "argmax {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  bv = f32[] parameter(2)\n"
      "  bi = s32[] parameter(3)\n  gt = pred[] compare(av, bv), direction=GT\n"
      "  eq = pred[] compare(av, bv), direction=EQ\n  lt = pred[] compare(ai, bi), direction=LT\n"
      "  tie = pred[] and(eq, lt)\n  keep = pred[] or(gt, tie)\n  v = f32[] select(keep, av, bv)\n"
      "  i = s32[] select(keep, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n\n"
      // Two independent combines: f32 sum, s32 maximum.
      "add_max {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n"
      "  d = s32[] parameter(3)\n  s = f32[] add(a, c)\n  m = s32[] maximum(b, d)\n"
      "  ROOT t = (f32[], s32[]) tuple(s, m)\n}\n\n"
      // Scatter's "replace" of two values (the corpus' Multioutput).
      "replace2 {\n  a = s32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n"
      "  d = f32[] parameter(3)\n  ROOT t = (s32[], f32[]) tuple(c, d)\n}\n\n"
      // (key, value) pairs: the update wins when its key is larger.
      "larger_key {\n  ak = s32[] parameter(0)\n  av = f32[] parameter(1)\n  bk = s32[] parameter(2)\n"
      "  bv = f32[] parameter(3)\n  gt = pred[] compare(bk, ak), direction=GT\n"
      "  k = s32[] select(gt, bk, ak)\n  v = f32[] select(gt, bv, av)\n"
      "  ROOT t = (s32[], f32[]) tuple(k, v)\n}\n\n"
      "min_max_s32 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  c = s32[] parameter(2)\n"
      "  d = s32[] parameter(3)\n  lo = s32[] minimum(a, c)\n  hi = s32[] maximum(b, d)\n"
      "  ROOT t = (s32[], s32[]) tuple(lo, hi)\n}\n\n";
  std::unique_ptr<runtime::Device> device_;
};

TEST_F(OpsE2ETest, UnaryElementwise) {
  for (const char* op : {"abs", "negate", "exponential", "log", "sqrt", "rsqrt", "tanh", "sine", "cosine",
                         "floor", "ceil", "sign", "logistic", "exponential-minus-one", "log-plus-one",
                         "round-nearest-even", "round-nearest-afz", "cbrt", "tan"}) {
    SCOPED_TRACE(op);
    Check(std::string("  p = f32[3,5] parameter(0)\n  a = f32[3,5] abs(p)\n  ROOT r = f32[3,5] ") + op + "(a)\n");
  }
}

TEST_F(OpsE2ETest, BinaryElementwiseChainIsOneKernel) {
  Check(
      "  x = f32[4,6] parameter(0)\n  y = f32[4,6] parameter(1)\n"
      "  a = f32[4,6] add(x, y)\n  b = f32[4,6] multiply(a, x)\n  c = f32[4,6] subtract(b, y)\n"
      "  d = f32[4,6] divide(c, y)\n  e = f32[4,6] maximum(d, x)\n  f = f32[4,6] minimum(e, y)\n"
      "  g = f32[4,6] power(x, y)\n  h = f32[4,6] atan2(f, g)\n  ROOT r = f32[4,6] remainder(h, y)\n");
}

// More output than one capped CUDA grid covers (4224 blocks of 256 threads,
// 4 f32 each: 4325376 elements): threads take a second turn of the
// grid-stride loop, and the last turn is ragged. 1024 x 4300 = 4403200.
TEST_F(OpsE2ETest, LargeLoopKernelStridesOverTheGrid) {
  Check("  x = f32[1024,4300] parameter(0)\n  y = f32[1024,4300] parameter(1)\n"
        "  m = f32[1024,4300] multiply(x, y)\n  ROOT r = f32[1024,4300] add(m, x)\n");
}

TEST_F(OpsE2ETest, IntegerAndLogicalOps) {
  Check(
      "  x = s32[16] parameter(0)\n  y = s32[16] parameter(1)\n"
      "  a = s32[16] add(x, y)\n  b = s32[16] multiply(a, y)\n  c = s32[16] and(b, x)\n"
      "  d = s32[16] or(c, y)\n  e = s32[16] xor(d, x)\n  n = s32[16] not(e)\n"
      "  k = s32[] constant(3)\n  kb = s32[16] broadcast(k), dimensions={}\n"
      "  f = s32[16] shift-left(n, kb)\n  g = s32[16] shift-right-arithmetic(f, kb)\n"
      "  h = s32[16] divide(g, kb)\n  ROOT r = s32[16] remainder(h, kb)\n");
}

// XLA's integer power, against the evaluator: random bases and exponents in
// [-8, 7] reach wrap-around, negative exponents (0, except +-1 for bases 1
// and -1) and x^0; squared exponents (up to 64) pass the narrow types' bit
// widths.
TEST_F(OpsE2ETest, IntegerPowerOfEveryWidth) {
  for (const char* t : {"s8", "u16", "s32", "u32", "s64"}) {
    std::string ty = std::string(t) + "[64]";
    Check("  x = " + ty + " parameter(0)\n  y = " + ty + " parameter(1)\n  p = " + ty + " power(x, y)\n" +
              "  y2 = " + ty + " multiply(y, y)\n  q = " + ty + " power(x, y2)\n  ROOT r = (" + ty + ", " + ty +
              ") tuple(p, q)\n",
          3);
  }
}

TEST_F(OpsE2ETest, CompareSelectClamp) {
  Check(
      "  x = f32[8] parameter(0)\n  y = f32[8] parameter(1)\n"
      "  lt = pred[8] compare(x, y), direction=LT\n  s = f32[8] select(lt, x, y)\n"
      "  lo = f32[] constant(-0.25)\n  hi = f32[] constant(0.5)\n"
      "  ROOT c = f32[8] clamp(lo, s, hi)\n");
}

TEST_F(OpsE2ETest, ConvertBetweenTypes) {
  Check(
      "  x = f32[2,7] parameter(0)\n  a = bf16[2,7] convert(x)\n  b = f16[2,7] convert(a)\n"
      "  c = s32[2,7] convert(b)\n  d = f64[2,7] convert(c)\n  e = f64[2,7] add(d, d)\n"
      "  ROOT f = f32[2,7] convert(e)\n");
}

TEST_F(OpsE2ETest, BroadcastReshapeTransposeSliceConcatIotaReverse) {
  Check(
      "  x = f32[3,4] parameter(0)\n  v = f32[4] parameter(1)\n"
      "  b = f32[3,4] broadcast(v), dimensions={1}\n  s = f32[3,4] add(x, b)\n"
      "  t = f32[4,3] transpose(s), dimensions={1,0}\n  r = f32[2,6] reshape(t)\n"
      "  sl = f32[2,3] slice(r), slice={[0:2], [1:6:2]}\n  i = f32[2,3] iota(), iota_dimension=1\n"
      "  c = f32[2,6] concatenate(sl, i), dimensions={1}\n  ROOT rv = f32[2,6] reverse(c), dimensions={0,1}\n");
}

TEST_F(OpsE2ETest, ReshapeDimensionGroups) {
  // Reshapes fused into an elementwise kernel, re-indexed per group of
  // dimensions: merged major and minor groups with a unit dimension, one
  // group both split and merged ([6,4] -> [4,6]), a minor dimension split
  // in two, a kept minor dimension (vectorized bf16 loads), and groups
  // separated by unit dimensions on both sides.
  auto check = [&](const std::string& in, const std::string& out) {
    Check("  p = " + in + " parameter(0)\n  r = " + out + " reshape(p)\n  q = " + out +
          " parameter(1)\n  ROOT s = " + out + " add(r, q)\n");
  };
  check("f32[2,3,4,5]", "f32[6,1,20]");
  check("f32[6,4]", "f32[4,6]");
  check("f32[1,8,16]", "f32[8,2,8]");
  check("f32[4,6,1]", "f32[2,2,3,2]");
  check("bf16[2,16,64]", "bf16[32,1,64]");
  check("f32[1,3,1,4,1]", "f32[3,1,2,2]");
}

TEST_F(OpsE2ETest, BitcastsUnderLayouts) {
  // Same bytes, permuted layout: a logical transpose; and a plain reshape.
  Check("  p = f32[2,3]{1,0} parameter(0)\n  b = f32[3,2]{0,1} bitcast(p)\n  ROOT r = f32[3,2]{1,0} add(b, b)\n");
  Check("  p = f32[4,6]{0,1} parameter(0)\n  b = f32[2,2,6]{0,2,1} bitcast(p)\n  ROOT n = f32[2,2,6] negate(b)\n");
  Check("  p = f32[4,6]{1,0} parameter(0)\n  b = f32[24]{0} bitcast(p)\n  ROOT n = f32[24] negate(b)\n");
}

TEST_F(OpsE2ETest, ReduceOverEveryDimensionSet) {
  Check("  x = f32[4,5,6] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[5] reduce(x, z), dimensions={0,2}, to_apply=add_f32\n");
  Check("  x = f32[4,5,6] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[] reduce(x, z), dimensions={0,1,2}, to_apply=add_f32\n");
  Check("  x = f32[4,5,6] parameter(0)\n  z = f32[] constant(-inf)\n  e = f32[4,5,6] exponential(x)\n"
        "  ROOT r = f32[4,5] reduce(e, z), dimensions={2}, to_apply=max_f32\n");
  Check("  x = s32[3,4] parameter(0)\n  one = s32[] constant(1)\n"
        "  ROOT r = s32[4] reduce(x, one), dimensions={0}, to_apply=mul_s32\n");
}

TEST_F(OpsE2ETest, ReduceFeedingElementwiseViaBroadcast) {
  // softmax: reduce -> broadcast -> elementwise -> reduce -> elementwise.
  Check(
      "  x = f32[6,10] parameter(0)\n  ninf = f32[] constant(-inf)\n  zero = f32[] constant(0)\n"
      "  m = f32[6] reduce(x, ninf), dimensions={1}, to_apply=max_f32\n"
      "  mb = f32[6,10] broadcast(m), dimensions={0}\n  d = f32[6,10] subtract(x, mb)\n"
      "  e = f32[6,10] exponential(d)\n  s = f32[6] reduce(e, zero), dimensions={1}, to_apply=add_f32\n"
      "  sb = f32[6,10] broadcast(s), dimensions={0}\n  ROOT r = f32[6,10] divide(e, sb)\n");
}

TEST_F(OpsE2ETest, DotForms) {
  // Plain matmul, matrix-vector, transposed operands, batch dims, bf16, f64.
  Check("  a = f32[5,7] parameter(0)\n  b = f32[7,3] parameter(1)\n"
        "  ROOT d = f32[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  Check("  a = f32[5,7] parameter(0)\n  b = f32[7] parameter(1)\n"
        "  ROOT d = f32[5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  Check("  a = f32[7,5] parameter(0)\n  b = f32[3,7] parameter(1)\n"
        "  ROOT d = f32[5,3] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n");
  Check("  a = f32[2,4,7,5] parameter(0)\n  b = f32[4,2,7,3] parameter(1)\n"
        "  ROOT d = f32[2,4,5,3] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, "
        "rhs_batch_dims={1,0}, rhs_contracting_dims={2}\n");
  Check("  a = bf16[3,8,16] parameter(0)\n  b = bf16[3,16,4] parameter(1)\n"
        "  ROOT d = bf16[3,8,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
        "rhs_batch_dims={0}, rhs_contracting_dims={1}\n");
  Check("  a = f64[4,6] parameter(0)\n  b = f64[6,2] parameter(1)\n"
        "  ROOT d = f64[4,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  Check("  a = f32[2,3,4] parameter(0)\n  b = f32[3,4,5] parameter(1)\n"
        "  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}\n");
}

TEST_F(OpsE2ETest, IntegerDots) {
  // IntegerDotExpander: mixed widths widened to the result type (XLA's
  // WiderIntegralResultAccumulation form), unsigned wrapping, batch
  // dimensions, a contracting dimension that is not the minor one, two
  // contracting dimensions, and an outer product (no contracting one).
  Check("  a = s8[5,5] parameter(0)\n  b = s16[5,1] parameter(1)\n"
        "  ROOT d = s32[5,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  Check("  a = u8[2,3,40] parameter(0)\n  b = u8[2,40,4] parameter(1)\n"
        "  ROOT d = u8[2,3,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
        "rhs_contracting_dims={1}\n");
  Check("  a = s32[7,3] parameter(0)\n  b = s32[7] parameter(1)\n"
        "  ROOT d = s32[3] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n");
  Check("  a = s64[2,3,4] parameter(0)\n  b = s64[4,5,3] parameter(1)\n"
        "  ROOT d = s64[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={2,0}\n");
  Check("  a = s16[3] parameter(0)\n  b = s16[4] parameter(1)\n  ROOT d = s32[3,4] dot(a, b)\n");
}

// s8 x s8 -> s32 dots: on CUDA those with k and n multiples of 4 are int8
// GEMMs (cuBLAS' tensor cores, the emulator's double), the others and the
// host-only compile reduction kernels; compiled for both targets, the host
// runs the same GEMM thunks (kernels_lib's int8 loop). The operands are
// scaled by 37 so their values wrap over all of s8, and a k of 131076
// products of -128 * -128 overflows s32 (2^31 + 2^16 wraps to -2^31 +
// 2^16), which both paths must wrap as XLA does.
TEST_F(OpsE2ETest, Int8Dots) {
  auto spread = [](const std::string& name, const std::string& shape) {
    return "  " + name + "p = " + shape + " parameter(" + (name == "a" ? "0" : "1") + ")\n  " + name +
           "c = s8[] constant(37)\n  " + name + "b = " + shape + " broadcast(" + name + "c), dimensions={}\n  " +
           name + " = " + shape + " multiply(" + name + "p, " + name + "b)\n";
  };
  struct Case {
    std::string a, b, root;
    int gemms_on_cuda;
  };
  const std::vector<Case> cases = {
      {"s8[6,16]", "s8[16,8]", "s32[6,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", 1},
      {"s8[2,3,8]", "s8[2,8,4]",
       "s32[2,3,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
       "rhs_contracting_dims={1}", 1},
      {"s8[8,3,12]", "s8[12,8,4]", "s32[3,4] dot(a, b), lhs_contracting_dims={2,0}, rhs_contracting_dims={0,1}", 1},
      {"s8[5,6]", "s8[6,4]", "s32[5,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0},  // k = 6
      {"s8[4,8]", "s8[8,3]", "s32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0},  // n = 3
  };
  const bool cuda = E2EDeviceKind() == runtime::DeviceKind::kCuda;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.root);
    std::string text = "HloModule m\n\nENTRY e {\n" + spread("a", c.a) + spread("b", c.b) + "  ROOT d = " + c.root +
                       "\n}\n";
    auto module = hlo::ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().message();
    std::vector<Literal> args = RandomArgs(**module, 3);
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    for (bool all_targets : {false, true}) {
      StatusOr<tools::DeviceRunResult> run = tools::CompileAndRun(**module, args, *device_, {.profile = true, .all_targets = all_targets});
      ASSERT_TRUE(run.ok()) << run.status().message();
      EXPECT_TRUE(CompareValues(run->result, *expected, "result", {}).ok()) << text;
      int gemms = 0;
      for (const runtime::ThunkProfileEntry& t : run->profile.thunks) gemms += t.kind == thunks::ThunkKind::kGemm;
      EXPECT_EQ(gemms, cuda || all_targets ? c.gemms_on_cuda : 0) << "all_targets=" << all_targets;
    }
  }
  // The wrap-around: rows and columns of -128 (min(x, -128) of parameters,
  // so nothing is folded at compile time): every output is 131076 * 2^14
  // = 2^31 + 2^16 wrapped to s32.
  auto module = hlo::ParseHloModule(
      "HloModule m\n\nENTRY e {\n  p = s8[1,131076] parameter(0)\n  q = s8[131076,4] parameter(1)\n"
      "  lo = s8[] constant(-128)\n  plo = s8[1,131076] broadcast(lo), dimensions={}\n"
      "  qlo = s8[131076,4] broadcast(lo), dimensions={}\n  a = s8[1,131076] minimum(p, plo)\n"
      "  b = s8[131076,4] minimum(q, qlo)\n"
      "  ROOT d = s32[1,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<Literal> args = RandomArgs(**module, 5);
  for (bool all_targets : {false, true}) {
    StatusOr<tools::DeviceRunResult> run = tools::CompileAndRun(**module, args, *device_, {.all_targets = all_targets});
    ASSERT_TRUE(run.ok()) << run.status().message();
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(run->result.GetS64(i), -2147483648LL + 65536) << i;
  }
}

// XLA CPU's custom-calls that CpuCustomCallRewriter writes as HLO, against
// the evaluator's own implementation of each: __onednn$layernorm (f32 and
// bf16, epsilon 1e-5 = bits 925353388, rank 3, 16 channels) and GetRngSeed
// inside a loop (a new seed every iteration) and outside it.
TEST_F(OpsE2ETest, CpuCustomCalls) {
  for (const char* type : {"f32", "bf16"}) {
    SCOPED_TRACE(type);
    const std::string t = type;
    Check("  x = " + t + "[3,5,16] parameter(0)\n  s = " + t + "[16] parameter(1)\n  b = " + t +
          "[16] parameter(2)\n  ROOT y = " + t +
          "[3,5,16] custom-call(x, s, b), custom_call_target=\"__onednn$layernorm\", "
          "backend_config=\"{\\\"onednn_layer_norm_config\\\":{\\\"rescale\\\":\\\"SCALE_AND_SHIFT\\\","
          "\\\"epsilon_typecast\\\":925353388}}\"\n");
  }
  ExpectMatchesEvaluator(R"(HloModule m

cond {
  p = (s32[], u64[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  four = s32[] constant(4)
  ROOT lt = pred[] compare(i, four), direction=LT
}

body {
  p = (s32[], u64[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  seeds = u64[4] get-tuple-element(p), index=1
  seed = u64[] custom-call(), custom_call_target="GetRngSeed"
  one = u64[1] reshape(seed)
  updated = u64[4] dynamic-update-slice(seeds, one, i)
  c1 = s32[] constant(1)
  next = s32[] add(i, c1)
  ROOT t = (s32[], u64[4]) tuple(next, updated)
}

ENTRY e {
  first = u64[] custom-call(), custom_call_target="GetRngSeed"
  zero = s32[] constant(0)
  z = u64[] constant(0)
  zs = u64[4] broadcast(z), dimensions={}
  init = (s32[], u64[4]) tuple(zero, zs)
  loop = (s32[], u64[4]) while(init), condition=cond, body=body
  seeds = u64[4] get-tuple-element(loop), index=1
  ROOT r = (u64[], u64[4]) tuple(first, seeds)
}
)",
                         *device_);
}

TEST_F(OpsE2ETest, ComplexDots) {
  // Complex GEMMs (OpenBLAS cgemm/zgemm, cuBLAS Cgemm/Zgemm); matrix-vector
  // (XLA's MatrixVectorComplex), batched c64, c128 with a transposed
  // operand, and a real operand converted to complex.
  Check("  a = c64[5,5] parameter(0)\n  b = c64[5,1] parameter(1)\n"
        "  ROOT d = c64[5,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  Check("  a = c64[2,3,8] parameter(0)\n  b = c64[2,8,4] parameter(1)\n"
        "  ROOT d = c64[2,3,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
        "rhs_contracting_dims={1}\n");
  Check("  a = c128[6,3] parameter(0)\n  b = c128[4,6] parameter(1)\n"
        "  ROOT d = c128[3,4] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n");
  Check("  a = f32[4,7] parameter(0)\n  b = c64[7,3] parameter(1)\n"
        "  ROOT d = c64[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
}

// RaggedDotExpander, in each mode, with group sizes chosen so that a group
// is empty and the last position is past every group.
TEST_F(OpsE2ETest, RaggedDots) {
  struct Case {
    std::string body;
    std::vector<double> sizes;
  };
  const std::vector<Case> cases = {
      {"  a = f32[9,6] parameter(0)\n  b = f32[3,6,5] parameter(1)\n  s = s32[3] parameter(2)\n"
       "  ROOT d = f32[9,5] ragged-dot(a, b, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
       "lhs_ragged_dims={0}, rhs_group_dims={0}\n",
       {4, 0, 3}},
      {"  a = f32[2,7,4] parameter(0)\n  b = f32[3,2,4,5] parameter(1)\n  s = s64[3] parameter(2)\n"
       "  ROOT d = f32[2,7,5] ragged-dot(a, b, s), lhs_batch_dims={0}, rhs_batch_dims={1}, "
       "lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={0}\n",
       {2, 2, 2}},
      {"  a = f32[11,5] parameter(0)\n  b = f32[5,7] parameter(1)\n  s = u32[3] parameter(2)\n"
       "  ROOT d = f32[3,11,7] ragged-dot(a, b, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
       "lhs_ragged_dims={1}\n",
       {2, 0, 2}},
      {"  a = f32[2,3,6] parameter(0)\n  b = f32[2,6,4] parameter(1)\n  s = s32[2] parameter(2)\n"
       "  ROOT d = f32[2,2,3,4] ragged-dot(a, b, s), lhs_batch_dims={0}, rhs_batch_dims={0}, "
       "lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={2}\n",
       {3, 3}},
      {"  a = f32[4,3,2] parameter(0)\n  b = f32[4,2,5] parameter(1)\n  s = s32[2] parameter(2)\n"
       "  ROOT d = f32[4,3,5] ragged-dot(a, b, s), lhs_batch_dims={0}, rhs_batch_dims={0}, "
       "lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}\n",
       {1, 2}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    auto module = hlo::ParseHloModule("HloModule m\n\nENTRY e {\n" + c.body + "}\n");
    ASSERT_TRUE(module.ok()) << module.status().message();
    std::vector<Literal> args = RandomArgs(**module, 3);
    args[2] = Literal::Vector(args[2].element_type(), c.sizes);
    EXPECT_EQ(CompareWithEvaluator(**module, *device_, args), "");
  }
}

TEST_F(OpsE2ETest, TuplesConstantsAndParameterPassThrough) {
  Check(
      "  x = f32[2,3] parameter(0)\n  t = (f32[2,3], s32[2]) parameter(1)\n"
      "  y = s32[2] get-tuple-element(t), index=1\n  w = f32[2,3] get-tuple-element(t), index=0\n"
      "  c = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  a = f32[2,3] add(x, c)\n"
      "  ROOT r = (f32[2,3], s32[2], f32[2,3], (f32[2,3])) tuple(a, y, c, (f32[2,3]) tuple(w))\n");
}

TEST_F(OpsE2ETest, WhileWithoutKnownTripCount) {
  ExpectMatchesEvaluator(R"(HloModule m
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[4] broadcast(h), dimensions={}
  v2 = f32[4] multiply(v, hb)
  v3 = f32[4] add(v2, hb)
  ROOT t = (s32[], f32[4]) tuple(i2, v3)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  ROOT v = f32[4] get-tuple-element(w), index=1
}
)", *device_);
}

TEST_F(OpsE2ETest, WhileBodySwappingLoopValues) {
  // The body returns (b, a): the copy back must not clobber a before it is read.
  ExpectMatchesEvaluator(R"(HloModule m
cond {
  p = (s32[], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[3] get-tuple-element(p), index=1
  b = f32[3] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[3], f32[3]) tuple(i2, b, a)
}
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[3], f32[3]) tuple(z, x, y)
  ROOT w = (s32[], f32[3], f32[3]) while(t), condition=cond, body=body
}
)", *device_);
}

TEST_F(OpsE2ETest, ConditionalByPredicateAndIndex) {
  const std::string branches = R"(
neg {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}
twice {
  x = f32[3] parameter(0)
  ROOT d = f32[3] add(x, x)
}
same {
  x = f32[3] parameter(0)
  ROOT c = f32[3] copy(x)
}
)";
  for (int index : {-1, 0, 1, 2, 7}) {
    SCOPED_TRACE(index);
    ExpectMatchesEvaluator("HloModule m\n" + branches + "ENTRY e {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n"
                           "  i = s32[] constant(" + std::to_string(index) + ")\n"
                           "  ROOT c = f32[3] conditional(i, x, y, x), branch_computations={neg, twice, same}\n}\n",
                           *device_);
  }
  // A pred selector computed at run time; seeds give both outcomes.
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    ExpectMatchesEvaluator("HloModule m\n" + branches + "ENTRY e {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n"
                           "  s = f32[] parameter(2)\n  z = f32[] constant(0)\n  q = pred[] compare(s, z), direction=LT\n"
                           "  ROOT c = f32[3] conditional(q, x, y), true_computation=neg, false_computation=twice\n}\n",
                           *device_, seed);
  }
}

TEST_F(OpsE2ETest, CallIsInlined) {
  ExpectMatchesEvaluator(R"(HloModule m
f {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] multiply(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  c = f32[4] call(x, y), to_apply=f
  ROOT r = f32[4] add(c, x)
}
)", *device_);
}

// Indexing and windowed ops. Random s32 indices lie in [-8, 8), so the
// seeds exercise XLA's clamping (dynamic slices, gather) and skipping
// (scatter) of out-of-range starts.
constexpr uint64_t kIndexSeeds[] = {1, 2, 3, 4, 5};

TEST_F(OpsE2ETest, PadWithNegativeAndInteriorPadding) {
  Check("  x = f32[3,4] parameter(0)\n  v = f32[] parameter(1)\n"
        "  ROOT p = f32[8,5] pad(x, v), padding=2_1_1x-1_-1_1\n");
  // Fused between elementwise ops, cropping two elements at the low end.
  Check("  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  e = f32[4] exponential(x)\n"
        "  p = f32[9] pad(e, z), padding=-2_1_2\n  ROOT r = f32[9] add(p, p)\n");
}

TEST_F(OpsE2ETest, DynamicSliceClampsStartIndices) {
  for (uint64_t seed : kIndexSeeds) {
    Check("  x = f32[6,5] parameter(0)\n  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n"
          "  d = f32[3,4] dynamic-slice(x, i, j), dynamic_slice_sizes={3,4}\n  ROOT n = f32[3,4] negate(d)\n",
          seed);
  }
}

TEST_F(OpsE2ETest, DynamicUpdateSliceElemental) {
  // The operand is computed in the same kernel: every element is written.
  for (uint64_t seed : kIndexSeeds) {
    Check("  x = f32[6,5] parameter(0)\n  u = f32[2,3] parameter(1)\n  i = s32[] parameter(2)\n"
          "  j = s32[] parameter(3)\n  y = f32[6,5] multiply(x, x)\n"
          "  ROOT d = f32[6,5] dynamic-update-slice(y, u, i, j)\n",
          seed);
  }
}

TEST_F(OpsE2ETest, DynamicUpdateSliceInPlace) {
  // The operand is an entry parameter: the kernel writes only the window
  // into a buffer that already holds x.
  for (uint64_t seed : kIndexSeeds) {
    Check("  x = f32[6,5] parameter(0)\n  u = f32[2,3] parameter(1)\n  i = s32[] parameter(2)\n"
          "  j = s32[] parameter(3)\n  n = f32[2,3] negate(u)\n"
          "  ROOT d = f32[6,5] dynamic-update-slice(x, n, i, j)\n",
          seed);
  }
}

TEST_F(OpsE2ETest, GatherEmbeddingLookupMultiDimAndBatching) {
  for (uint64_t seed : kIndexSeeds) {
    // Embedding lookup: rows of a [10,4] table, fused with a consumer.
    Check("  t = f32[10,4] parameter(0)\n  ids = s32[6] parameter(1)\n"
          "  g = f32[6,4] gather(t, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
          "index_vector_dim=1, slice_sizes={1,4}\n  ROOT r = f32[6,4] add(g, g)\n",
          seed);
    // 2-d index vectors along dimension 2, 2x3 windows.
    Check("  x = f32[5,6,3] parameter(0)\n  i = s32[2,3,2] parameter(1)\n"
          "  ROOT g = f32[2,3,2,3] gather(x, i), offset_dims={2,3}, collapsed_slice_dims={0}, "
          "start_index_map={0,1}, index_vector_dim=2, slice_sizes={1,2,3}\n",
          seed);
    // Operand dimension 0 batched with the indices' dimension 0.
    Check("  x = f32[3,5,2] parameter(0)\n  i = s32[3,4] parameter(1)\n"
          "  ROOT g = f32[3,4,2] gather(x, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
          "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,2}\n",
          seed);
  }
}

TEST_F(OpsE2ETest, ScatterAddWithDuplicateIndices) {
  // Rows 1 (three times) and 4 get updates; row 9 is out of bounds: skipped.
  Check("  x = f32[6,3] parameter(0)\n  idx = s32[5,1] constant({{1},{4},{1},{9},{1}})\n"
        "  u = f32[5,3] parameter(1)\n  e = f32[5,3] exponential(u)\n"
        "  ROOT s = f32[6,3] scatter(x, idx, e), update_window_dims={1}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32\n",
        1, CompareOptions{1e-6, 1e-6});
  for (uint64_t seed : kIndexSeeds) {
    Check("  x = s32[8] parameter(0)\n  idx = s32[6] parameter(1)\n  u = s32[6] parameter(2)\n"
          "  ROOT s = s32[8] scatter(x, idx, u), update_window_dims={}, inserted_window_dims={0}, "
          "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul_s32\n",
          seed);
  }
}

TEST_F(OpsE2ETest, VariadicArgmaxReduce) {
  Check("  x = f32[5,7] parameter(0)\n  io = s32[5,7] iota(), iota_dimension=1\n"
        "  ninf = f32[] constant(-inf)\n  zero = s32[] constant(0)\n"
        "  r = (f32[5], s32[5]) reduce(x, io, ninf, zero), dimensions={1}, to_apply=argmax\n"
        "  v = f32[5] get-tuple-element(r), index=0\n  i = s32[5] get-tuple-element(r), index=1\n"
        "  ROOT t = (f32[5], s32[5]) tuple(v, i)\n");
}

TEST_F(OpsE2ETest, ReduceWindowPoolingForms) {
  // 2x2 max pool, stride 2, with padding; a dilated sum; a 1-d running sum.
  Check("  x = f32[2,5,6] parameter(0)\n  ninf = f32[] constant(-inf)\n"
        "  ROOT r = f32[2,3,3] reduce-window(x, ninf), window={size=1x2x2 stride=1x2x2 pad=0_0x0_1x0_0}, "
        "to_apply=max_f32\n");
  Check("  x = f32[5,6] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[5,3] reduce-window(x, z), window={size=2x3 stride=2x2 pad=1_1x1_2 lhs_dilate=2x1 "
        "rhs_dilate=1x2}, to_apply=add_f32\n");
  Check("  x = f32[8] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[8] reduce-window(x, z), window={size=8 pad=7_0}, to_apply=add_f32\n",
        1, CompareOptions{1e-6, 1e-6});
}

TEST_F(OpsE2ETest, VariadicReduceWindowArgmaxPooling) {
  // (value, index) pairs with padding, stride and window dilation; with
  // base dilation and padding on both ends; with producers fused into the
  // operands and the results read by another kernel.
  Check("  x = f32[5,7] parameter(0)\n  io = s32[5,7] iota(), iota_dimension=1\n"
        "  ninf = f32[] constant(-inf)\n  none = s32[] constant(-1)\n"
        "  r = (f32[5,3], s32[5,3]) reduce-window(x, io, ninf, none), "
        "window={size=2x3 stride=1x2 pad=1_0x1_1 rhs_dilate=1x2}, to_apply=argmax\n"
        "  v = f32[5,3] get-tuple-element(r), index=0\n  i = s32[5,3] get-tuple-element(r), index=1\n"
        "  ROOT t = (f32[5,3], s32[5,3]) tuple(v, i)\n");
  Check("  x = f32[4,6] parameter(0)\n  io = s32[4,6] iota(), iota_dimension=0\n"
        "  ninf = f32[] constant(-inf)\n  none = s32[] constant(-1)\n"
        "  ROOT r = (f32[4,6], s32[4,6]) reduce-window(x, io, ninf, none), "
        "window={size=3x2 stride=2x1 pad=1_1x0_1 lhs_dilate=2x1}, to_apply=argmax\n");
  Check("  x = f32[6,6] parameter(0)\n  y = s32[6,6] parameter(1)\n  e = f32[6,6] exponential(x)\n"
        "  n = s32[6,6] negate(y)\n  z = f32[] constant(0)\n  m = s32[] constant(-100)\n"
        "  r = (f32[3,3], s32[3,3]) reduce-window(e, n, z, m), window={size=2x2 stride=2x2}, to_apply=add_max\n"
        "  s = f32[3,3] get-tuple-element(r), index=0\n  k = s32[3,3] get-tuple-element(r), index=1\n"
        "  c = f32[3,3] convert(k)\n  ROOT o = f32[3,3] add(s, c)\n",
        1, CompareOptions{1e-6, 1e-6});
}

TEST_F(OpsE2ETest, VariadicScatterReplaceAppliesDuplicatesInOrder) {
  // The corpus' Multioutput scatter with fixed indices: (0,1) twice (the
  // later update wins), (2,2) once, (3,0) out of bounds (skipped); then
  // with random indices in [-8, 8).
  const std::string dims = "update_window_dims={1}, inserted_window_dims={0,1}, "
                           "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=replace2\n";
  Check("  a = s32[3,3,2] parameter(0)\n  b = f32[3,3,2] parameter(1)\n"
        "  idx = s32[4,2] constant({{0,1},{2,2},{0,1},{3,0}})\n  u = s32[4,2] parameter(2)\n"
        "  v = f32[4,2] parameter(3)\n"
        "  ROOT s = (s32[3,3,2], f32[3,3,2]) scatter(a, b, idx, u, v), " + dims);
  // Indices in (-3, 3) (a remainder fused into the scatter): about a third
  // in bounds, duplicates likely.
  for (uint64_t seed : kIndexSeeds)
    Check("  a = s32[3,3,2] parameter(0)\n  b = f32[3,3,2] parameter(1)\n  i = s32[6,2] parameter(2)\n"
          "  u = s32[6,2] parameter(3)\n  v = f32[6,2] parameter(4)\n  three = s32[] constant(3)\n"
          "  t = s32[6,2] broadcast(three), dimensions={}\n  idx = s32[6,2] remainder(i, t)\n"
          "  ROOT s = (s32[3,3,2], f32[3,3,2]) scatter(a, b, idx, u, v), " + dims,
          seed);
}

TEST_F(OpsE2ETest, VariadicScatterIndependentCombinesAreAtomic) {
  // Sum and maximum per output (one atomic each): duplicates (row 1 three
  // times), an out-of-bounds row, updates computed in the kernel.
  Check("  x = f32[6,3] parameter(0)\n  y = s32[6,3] parameter(1)\n"
        "  idx = s32[5,1] constant({{1},{4},{1},{9},{1}})\n  u = f32[5,3] parameter(2)\n"
        "  v = s32[5,3] parameter(3)\n  e = f32[5,3] exponential(u)\n"
        "  ROOT s = (f32[6,3], s32[6,3]) scatter(x, y, idx, e, v), update_window_dims={1}, "
        "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_max\n",
        1, CompareOptions{1e-6, 1e-6});
}

TEST_F(OpsE2ETest, VariadicScatterCoupledCombinerWithWindows) {
  // The larger key carries its value: 2x3 windows of a [6,5] operand
  // (update_window_dims={1,2}), starts in (-5, 5) (windows partly out of
  // bounds are skipped, overlapping ones apply in order).
  for (uint64_t seed : kIndexSeeds)
    Check("  k = s32[6,5] parameter(0)\n  x = f32[6,5] parameter(1)\n  i = s32[8,2] parameter(2)\n"
          "  uk = s32[8,2,3] parameter(3)\n  ux = f32[8,2,3] parameter(4)\n  five = s32[] constant(5)\n"
          "  f = s32[8,2] broadcast(five), dimensions={}\n  idx = s32[8,2] remainder(i, f)\n"
          "  ROOT s = (s32[6,5], f32[6,5]) scatter(k, x, idx, uk, ux), update_window_dims={1,2}, "
          "inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=larger_key\n",
          seed);
}

TEST_F(OpsE2ETest, VariadicScatterOperandsFromKernelsAndShared) {
  // Operands computed by other kernels die at the scatter (their buffers
  // become its outputs, no copy), one of them is read again afterwards
  // (copied), and one parameter starts both outputs.
  Check("  x = f32[8] parameter(0)\n  y = s32[8] parameter(1)\n  idx = s32[5] parameter(2)\n"
        "  u = f32[5] parameter(3)\n  v = s32[5] parameter(4)\n  e = f32[8] exponential(x)\n"
        "  n = s32[8] negate(y)\n"
        "  s = (f32[8], s32[8]) scatter(e, n, idx, u, v), update_window_dims={}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_max\n"
        "  s0 = f32[8] get-tuple-element(s), index=0\n  s1 = s32[8] get-tuple-element(s), index=1\n"
        "  c = f32[8] convert(s1)\n  ROOT r = (f32[8], f32[8]) tuple(s0, c)\n",
        3, CompareOptions{1e-6, 1e-6});
  Check("  x = f32[8] parameter(0)\n  y = s32[8] parameter(1)\n  idx = s32[5] parameter(2)\n"
        "  u = f32[5] parameter(3)\n  v = s32[5] parameter(4)\n  e = f32[8] exponential(x)\n"
        "  s = (f32[8], s32[8]) scatter(e, y, idx, u, v), update_window_dims={}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_max\n"
        "  s0 = f32[8] get-tuple-element(s), index=0\n  ROOT r = f32[8] add(s0, e)\n",
        4, CompareOptions{1e-6, 1e-6});
  Check("  x = s32[8] parameter(0)\n  idx = s32[5] parameter(1)\n  u = s32[5] parameter(2)\n"
        "  v = s32[5] parameter(3)\n"
        "  ROOT s = (s32[8], s32[8]) scatter(x, x, idx, u, v), update_window_dims={}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=min_max_s32\n",
        5);
}

}  // namespace
}  // namespace kiln::testing
