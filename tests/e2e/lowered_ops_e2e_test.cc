// End to end: the ops that reach kernels through a lowering rather than an
// emitter of their own: reduce-precision, bitcast-convert and
// stochastic-convert in the scalar ops, s4/u4 element types (a byte each in
// buffers), complex values, map (MapInliner), batch-norm (BatchNormExpander),
// copy-start/done and async-start/done (AsyncToSync), elided constants
// (XLA's placeholder data), bf16 rounding in a tiled transpose, and
// rng-get-and-update-state (a thunk whose state the runtime keeps).
// Compiled through the whole pipeline, run on the E2E device (host, or CUDA
// on the emulator) and compared with the reference evaluator.
#include <gtest/gtest.h>

#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

class LoweredOpsE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }
  void Check(const std::string& text, uint64_t seed = 1) { ExpectMatchesEvaluator(text, *device_, seed); }
  void CheckEntry(const std::string& body, uint64_t seed = 1) {
    Check("HloModule m\n\nENTRY e {\n" + body + "}\n", seed);
  }
  std::unique_ptr<runtime::Device> device_;
};

// Values that exercise every branch: ties at several mantissa widths,
// overflow and underflow of narrow exponents, subnormals, NaN and infinity.
constexpr char kSpecialF32[] =
    "f32[16] constant({1e10, -1e10, 1e-10, -3.0e-5, nan, -inf, inf, 1.00048828125, 65520, "
    "-65504, 1.5, 2.5, 0.333333343, -0, 6.0e-8, 1.17549435e-38})";

TEST_F(LoweredOpsE2ETest, ReducePrecisionF32) {
  for (const char* bits : {"exponent_bits=5, mantissa_bits=10", "exponent_bits=8, mantissa_bits=7",
                           "exponent_bits=4, mantissa_bits=3", "exponent_bits=5, mantissa_bits=2",
                           "exponent_bits=8, mantissa_bits=0", "exponent_bits=1, mantissa_bits=0",
                           "exponent_bits=11, mantissa_bits=52"}) {
    SCOPED_TRACE(bits);
    CheckEntry(std::string("  c = ") + kSpecialF32 + "\n  p = f32[16] parameter(0)\n  s = f32[16] add(c, p)\n" +
               "  a = f32[16] reduce-precision(c), " + bits + "\n  b = f32[16] reduce-precision(s), " + bits +
               "\n  ROOT r = (f32[16], f32[16]) tuple(a, b)\n");
  }
}

TEST_F(LoweredOpsE2ETest, ReducePrecisionNarrowAndWideTypes) {
  CheckEntry("  p = bf16[8,16] parameter(0)\n  ROOT r = bf16[8,16] reduce-precision(p), exponent_bits=5, mantissa_bits=2\n");
  CheckEntry("  p = bf16[64] parameter(0)\n  ROOT r = bf16[64] reduce-precision(p), exponent_bits=4, mantissa_bits=7\n");
  CheckEntry("  p = f16[64] parameter(0)\n  ROOT r = f16[64] reduce-precision(p), exponent_bits=4, mantissa_bits=3\n");
  CheckEntry("  p = f64[64] parameter(0)\n  ROOT r = f64[64] reduce-precision(p), exponent_bits=8, mantissa_bits=23\n");
}

TEST_F(LoweredOpsE2ETest, BitcastConvertSameWidth) {
  CheckEntry("  p = f32[4,8] parameter(0)\n  i = s32[4,8] bitcast-convert(p)\n  one = s32[] constant(1)\n"
             "  b = s32[4,8] broadcast(one), dimensions={}\n  x = s32[4,8] xor(i, b)\n"
             "  ROOT r = f32[4,8] bitcast-convert(x)\n");
  CheckEntry("  p = bf16[32] parameter(0)\n  ROOT r = u16[32] bitcast-convert(p)\n");
  CheckEntry("  p = s16[32] parameter(0)\n  ROOT r = f16[32] bitcast-convert(p)\n");
  CheckEntry("  p = f64[8] parameter(0)\n  ROOT r = u64[8] bitcast-convert(p)\n");
}

// Width changes add or drop a minor dimension of ratio elements, the first
// holding the lowest bits (JAX's PRNG keys: u32[..., 2] <-> u64[...]).
TEST_F(LoweredOpsE2ETest, BitcastConvertWidthChange) {
  CheckEntry("  p = u32[3,2] parameter(0)\n  ROOT r = u64[3] bitcast-convert(p)\n");
  CheckEntry("  p = u64[5] parameter(0)\n  ROOT r = u32[5,2] bitcast-convert(p)\n");
  CheckEntry("  p = f32[4] parameter(0)\n  ROOT r = u8[4,4] bitcast-convert(p)\n");
  CheckEntry("  p = s8[6,2] parameter(0)\n  ROOT r = bf16[6] bitcast-convert(p)\n");
  CheckEntry("  p = u64[2] parameter(0)\n  a = u32[2,2] bitcast-convert(p)\n  b = u32[2,2] add(a, a)\n"
             "  ROOT r = f64[2] bitcast-convert(b)\n");
}

TEST_F(LoweredOpsE2ETest, SubByteIntegers) {
  // s4/u4 arithmetic wraps in 4 bits; converts saturate or wrap as XLA's.
  CheckEntry("  p = s4[6,5] parameter(0)\n  q = s4[6,5] parameter(1)\n  a = s4[6,5] add(p, q)\n"
             "  m = s4[6,5] multiply(a, q)\n  ROOT r = s32[6,5] convert(m)\n");
  CheckEntry("  p = u4[40] parameter(0)\n  q = u4[40] parameter(1)\n  a = u4[40] subtract(p, q)\n"
             "  f = f32[40] convert(a)\n  g = s4[40] convert(f)\n  ROOT r = (u4[40], s4[40]) tuple(a, g)\n");
  CheckEntry("  p = f32[40] parameter(0)\n  ten = f32[] constant(10)\n  b = f32[40] broadcast(ten), dimensions={}\n"
             "  x = f32[40] multiply(p, b)\n  ROOT r = s4[40] convert(x)\n");
  Check("HloModule m\n\nsum {\n  a = s4[] parameter(0)\n  b = s4[] parameter(1)\n  ROOT s = s4[] add(a, b)\n}\n\n"
        "ENTRY e {\n  p = s4[16,24] parameter(0)\n  z = s4[] constant(0)\n"
        "  ROOT r = s4[16] reduce(p, z), dimensions={1}, to_apply=sum\n}\n");
  CheckEntry("  c = s4[5] constant({-8, -1, 0, 3, 7})\n  p = s4[5] parameter(0)\n  ROOT r = s4[5] maximum(c, p)\n");
}

TEST_F(LoweredOpsE2ETest, StochasticConvert) {
  // Fractions scaled up so that most elements round one way or the other,
  // plus values past the result types' ranges and NaN.
  CheckEntry("  p = f32[256] parameter(0)\n  r = u32[256] parameter(1)\n  k = f32[] constant(37.5)\n"
             "  b = f32[256] broadcast(k), dimensions={}\n  x = f32[256] multiply(p, b)\n"
             "  ROOT s = s32[256] stochastic-convert(x, r)\n");
  CheckEntry("  c = f32[6] constant({1e10, -1e10, nan, 200.75, -129.5, 127.25})\n  r = u32[6] parameter(0)\n"
             "  a = s8[6] stochastic-convert(c, r)\n  b = u8[6] stochastic-convert(c, r)\n"
             "  ROOT s = (s8[6], u8[6]) tuple(a, b)\n");
  CheckEntry("  p = bf16[64] parameter(0)\n  r = u16[64] parameter(1)\n  ROOT s = s16[64] stochastic-convert(p, r)\n");
  CheckEntry("  p = f64[64] parameter(0)\n  r = u64[64] parameter(1)\n  ROOT s = s64[64] stochastic-convert(p, r)\n");
}

// BatchNormExpander's reductions and elementwise ops in f32 against the
// evaluator's direct f64 definition: E[x^2] - E[x]^2 and f32 sums differ
// from it by rounding only.
TEST_F(LoweredOpsE2ETest, BatchNormExpanded) {
  const CompareOptions tol{2e-4, 2e-4};
  auto check = [&](const std::string& body) {
    ExpectMatchesEvaluator("HloModule m\n\nENTRY e {\n" + body + "}\n", *device_, 1, tol);
  };
  check("  x = f32[4,6,5,3] parameter(0)\n  s = f32[6] parameter(1)\n  o = f32[6] parameter(2)\n"
        "  ROOT t = (f32[4,6,5,3], f32[6], f32[6]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1\n");
  check("  x = f32[8,7] parameter(0)\n  s = f32[7] parameter(1)\n  o = f32[7] parameter(2)\n"
        "  m = f32[7] parameter(3)\n  v0 = f32[7] parameter(4)\n  v = f32[7] abs(v0)\n"
        "  ROOT r = f32[8,7] batch-norm-inference(x, s, o, m, v), epsilon=0.01, feature_index=1\n");
  check("  x = f32[2,3,4,5] parameter(0)\n  s = f32[5] parameter(1)\n  m = f32[5] parameter(2)\n"
        "  v0 = f32[5] parameter(3)\n  v = f32[5] abs(v0)\n  dy = f32[2,3,4,5] parameter(4)\n"
        "  ROOT g = (f32[2,3,4,5], f32[5], f32[5]) batch-norm-grad(x, s, m, v, dy), epsilon=0.1, feature_index=3\n");
}

// c64/c128 values in loop kernels: complex<f32> in the kernel IR, lowered
// through the complex dialect; the evaluator computes in std::complex<double>.
TEST_F(LoweredOpsE2ETest, ComplexElementwise) {
  const CompareOptions tol{1e-5, 1e-5};
  auto check = [&](const std::string& body) {
    ExpectMatchesEvaluator("HloModule m\n\nENTRY e {\n" + body + "}\n", *device_, 2, tol);
  };
  // Rotary-embedding style: convert, complex, multiply, real and imag.
  check("  re = f32[8,16] parameter(0)\n  im = f32[8,16] parameter(1)\n  x = f32[8,16] parameter(2)\n"
        "  c = c64[8,16] complex(re, im)\n  xc = c64[8,16] convert(x)\n  m = c64[8,16] multiply(c, xc)\n"
        "  a = c64[8,16] add(m, c)\n  r = f32[8,16] real(a)\n  i = f32[8,16] imag(a)\n"
        "  ROOT t = (f32[8,16], f32[8,16]) tuple(r, i)\n");
  check("  p = c64[5,7] parameter(0)\n  q = c64[5,7] parameter(1)\n  d = c64[5,7] divide(p, q)\n"
        "  s = c64[5,7] subtract(d, p)\n  e = c64[5,7] exponential(s)\n  n = c64[5,7] negate(e)\n"
        "  ab = f32[5,7] abs(p)\n  ROOT t = (c64[5,7], f32[5,7]) tuple(n, ab)\n");
  check("  p = c128[4,6] parameter(0)\n  k = c128[] constant((1.5, -2))\n  b = c128[4,6] broadcast(k), dimensions={}\n"
        "  m = c128[4,6] multiply(p, b)\n  t = c128[6,4] transpose(m), dimensions={1,0}\n"
        "  ROOT r = c128[24] reshape(t)\n");
}

TEST_F(LoweredOpsE2ETest, MapOfElementwiseComputation) {
  Check("HloModule m\n\nf {\n  x = f32[] parameter(0)\n  i = s32[] parameter(1)\n  c = f32[] convert(i)\n"
        "  k = f32[] constant(0.5)\n  t = f32[] multiply(c, k)\n  ROOT r = f32[] add(x, t)\n}\n\n"
        "ENTRY e {\n  a = f32[10,3] parameter(0)\n  b = s32[10,3] parameter(1)\n"
        "  ROOT out = f32[10,3] map(a, b), to_apply=f\n}\n");
}

TEST_F(LoweredOpsE2ETest, AsyncWrappersRunSynchronously) {
  CheckEntry("  p = f32[4,3] parameter(0)\n  s = (f32[4,3], f32[4,3], u32[]) copy-start(p)\n"
             "  d = f32[4,3] copy-done(s)\n  ROOT n = f32[4,3] negate(d)\n");
  Check("HloModule m\n\nwrapped {\n  x = f32[4,2] parameter(0)\n  y = f32[4,2] parameter(1)\n"
        "  ROOT s = f32[4,2] subtract(x, y)\n}\n\nENTRY e {\n  a = f32[4,2] parameter(0)\n"
        "  b = f32[4,2] parameter(1)\n  start = ((f32[4,2], f32[4,2]), f32[4,2], s32[]) async-start(a, b), "
        "calls=wrapped\n  ROOT done = f32[4,2] async-done(start)\n}\n");
}

// A tiled transpose whose tile holds bf16 values rounded from f32: on x86
// LLVM rounds bf16 values carried across blocks through compiler-rt's
// __truncsfbf2, which the host kernels link statically.
TEST_F(LoweredOpsE2ETest, Bf16RoundingInTiledTranspose) {
  CheckEntry("  p = f32[8,8,50] parameter(0)\n  c = bf16[8,8,50] convert(p)\n  r = bf16[1,8,8,50] reshape(c)\n"
             "  ROOT t = bf16[1,50,8,8] transpose(r), dimensions={0,3,1,2}\n");
}

TEST_F(LoweredOpsE2ETest, ElidedConstantsRunWithPlaceholderData) {
  CheckEntry("  c = s32[3,4] constant({...})\n  p = s32[3,4] parameter(0)\n  ROOT r = s32[3,4] add(c, p)\n");
  CheckEntry("  c = pred[10] constant({...})\n  p = f32[10] parameter(0)\n  z = f32[10] negate(p)\n"
             "  ROOT r = f32[10] select(c, p, z)\n");
}

// XLA's rng-get-and-update-state: each instruction of a loaded executable
// has a 128-bit state starting at 0x7012395 that every execution advances
// by its delta, carrying into the high word. Expected values are hand
// computed from that rule; the first execution also matches the evaluator.
TEST_F(LoweredOpsE2ETest, RngGetAndUpdateStatePersistsAcrossExecutions) {
  const std::string text =
      "HloModule m\n\nENTRY e {\n"
      "  a = u64[2] rng-get-and-update-state(), delta=4611686018427387904\n"  // 2^62
      "  b = u64[2] rng-get-and-update-state(), delta=-1\n"
      "  ROOT t = (u64[2], u64[2]) tuple(a, b)\n}\n";
  Check(text);
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto first = tools::CompileAndRun(**module, {}, *device_);
  ASSERT_TRUE(first.ok()) << first.status().message();
  const uint64_t init = 0x7012395;
  auto words = [](const Literal& r, int leaf) {
    const Literal& v = r.element(leaf);
    return std::pair<uint64_t, uint64_t>{v.GetU64(0), v.GetU64(1)};
  };
  EXPECT_EQ(words(first->result, 0), std::make_pair(init, uint64_t{0}));
  EXPECT_EQ(words(first->result, 1), std::make_pair(init, uint64_t{0}));
  for (uint64_t run = 1; run <= 4; ++run) {
    runtime::ExecuteOptions options;
    options.host_outputs = true;  // read on the host
    auto event = first->executable->Execute({}, options);
    ASSERT_TRUE(event.ok()) << event.status().message();
    auto result = event->Wait();
    ASSERT_TRUE(result.ok()) << result.status().message();
    auto literal = tools::BuffersToLiteral(first->result.shape(), result->outputs);
    ASSERT_TRUE(literal.ok()) << literal.status().message();
    // a: init + run * 2^62; the fourth run carries 2^64 into the high word.
    EXPECT_EQ(words(*literal, 0), std::make_pair(init + run * (uint64_t{1} << 62), run / 4)) << run;
    // b: init - run; the 128-bit value stays below 2^64.
    EXPECT_EQ(words(*literal, 1), std::make_pair(init - run, uint64_t{0})) << run;
  }
}

// Inside a loop the instruction runs once per iteration: the evaluator's
// answer (init + n * delta per execution) must match.
TEST_F(LoweredOpsE2ETest, RngGetAndUpdateStateInALoop) {
  Check(R"(HloModule m
cond {
  p = (s32[], u64[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], u64[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  s = u64[2] get-tuple-element(p), index=1
  r = u64[2] rng-get-and-update-state(), delta=10
  x = u64[2] add(s, r)
  ROOT t = (s32[], u64[2]) tuple(j, x)
}
ENTRY e {
  zero = s32[] constant(0)
  z = u64[] constant(0)
  s = u64[2] broadcast(z), dimensions={}
  init = (s32[], u64[2]) tuple(zero, s)
  ROOT w = (s32[], u64[2]) while(init), condition=cond, body=body
}
)");
}

}  // namespace
}  // namespace kiln::testing
