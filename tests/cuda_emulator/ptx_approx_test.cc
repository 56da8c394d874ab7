// PTX's approximate transcendental instructions (the MUFU functions) under
// the emulator, checked against the host's double-precision libm over
// thousands of inputs with the maximum errors the PTX ISA documents, plus
// the special-value tables of each instruction's "Notes".
//
// Bounds (PTX ISA, "Floating Point Instructions"):
//   ex2.approx.f32    at most 2 ulp from the correctly rounded result,
//                     full range of inputs.
//   lg2.approx.f32    absolute error at most 2^-22 for inputs in (0.5, 2);
//                     relative error at most 2^-22 for other positive
//                     finite inputs.
//   sin/cos.approx    absolute error at most 2^-20.5 in [-2pi, 2pi] and
//                     2^-14.7 in [-100pi, 100pi].
//   rsqrt.approx.f32  relative error at most 2^-22.9 over the positive
//                     finite range.
//   rcp.approx.f32    at most 1 ulp over the full range.
//   tanh.approx.f32   relative error at most 2^-11 over the full range.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"

namespace kiln::emu::testing {
namespace {

using U32 = std::vector<uint32_t>;

constexpr uint32_t kInf = 0x7F800000u, kNegInf = 0xFF800000u, kNaN = 0x7FC00000u;
constexpr uint32_t kNegZero = 0x80000000u, kOne = 0x3F800000u;

class PtxApproxTest : public EmulatorTest {
 protected:
  // Runs `op` (e.g. "ex2.approx.f32") as `op %d, %a;` on each input.
  std::vector<float> Run1(const std::string& op, const std::vector<float>& inputs) {
    std::vector<std::array<float, 3>> rows;
    for (float x : inputs) rows.push_back({x, 0, 0});
    return Apply<float, float>(op + " %d, %a;", rows);
  }
  U32 RunBits(const std::string& op, const U32& inputs) {
    std::vector<std::array<uint32_t, 3>> rows;
    for (uint32_t x : inputs) rows.push_back({x, 0, 0});
    return ApplyAs<uint32_t, uint32_t>("f32", "f32", op + " %d, %a;", rows);
  }

  // The largest error(got, x) over `inputs`, and the input where it occurs.
  struct Worst {
    double error = 0;
    float input = 0;
    float got = 0;
  };
  Worst WorstError(const std::string& op, const std::vector<float>& inputs,
                   const std::function<double(float got, float x)>& error) {
    std::vector<float> got = Run1(op, inputs);
    Worst w;
    EXPECT_EQ(got.size(), inputs.size()) << op;
    if (got.size() != inputs.size()) {
      w.error = std::numeric_limits<double>::infinity();
      return w;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      double e = error(got[i], inputs[i]);
      if (!(e <= w.error)) w = {e, inputs[i], got[i]};  // NaN errors count as worst
    }
    return w;
  }
};

std::vector<float> Uniform(float lo, float hi, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(d(rng));
  return v;
}

// Positive floats with exponents spread over [lo_exp, hi_exp].
std::vector<float> LogUniform(int lo_exp, int hi_exp, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> e(lo_exp, hi_exp);
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(std::ldexp(mant(rng), e(rng)));
  return v;
}

double UlpsFromCorrectlyRounded(float got, double exact) {
  return static_cast<double>(UlpDistance(got, static_cast<float>(exact)));
}

TEST_F(PtxApproxTest, Ex2WithinTwoUlp) {
  std::vector<float> x = Uniform(-149.0f, 127.99f, 4000, 1);
  std::vector<float> small = Uniform(-1.0f, 1.0f, 1000, 2);
  x.insert(x.end(), small.begin(), small.end());
  Worst w = WorstError("ex2.approx.f32", x, [](float got, float in) {
    return UlpsFromCorrectlyRounded(got, std::exp2(static_cast<double>(in)));
  });
  EXPECT_LE(w.error, 2) << "ex2.approx.f32(" << w.input << ") = " << w.got;
  // Input -> result table: -Inf -> +0, -0 -> 1, +0 -> 1, +Inf -> +Inf, NaN -> NaN.
  ExpectSameBits(RunBits("ex2.approx.f32", {kNegInf, kNegZero, 0, kInf, kNaN}), U32{0, kOne, kOne, kInf, kNaN},
                 IsNaN32, "ex2 specials");
  // 2^-130 = 0x00080000 is subnormal: .ftz flushes it to +0, the plain form
  // keeps it (within its 2 ulp).
  const uint32_t minus130 = Bits(-130.0f);
  ExpectSameBits(RunBits("ex2.approx.ftz.f32", {minus130}), U32{0}, IsNaN32, "ex2.ftz");
  U32 sub = RunBits("ex2.approx.f32", {minus130});
  ASSERT_EQ(sub.size(), 1u);
  EXPECT_LE(UlpDistance(F32(sub[0]), F32(0x00080000u)), 2) << std::hex << sub[0];
}

TEST_F(PtxApproxTest, Lg2WithinDocumentedError) {
  std::vector<float> inside = Uniform(0.5f, 2.0f, 3000, 3);
  Worst a = WorstError("lg2.approx.f32", inside, [](float got, float in) {
    return std::fabs(got - std::log2(static_cast<double>(in)));
  });
  EXPECT_LE(a.error, std::exp2(-22.0)) << "lg2.approx.f32(" << a.input << ") = " << a.got;
  std::vector<float> outside = LogUniform(-149, 127, 3000, 4);
  std::erase_if(outside, [](float v) { return v > 0.5f && v < 2.0f; });
  Worst r = WorstError("lg2.approx.f32", outside, [](float got, float in) {
    double exact = std::log2(static_cast<double>(in));
    return std::fabs(got - exact) / std::fabs(exact);
  });
  EXPECT_LE(r.error, std::exp2(-22.0)) << "lg2.approx.f32(" << r.input << ") = " << r.got;
  // -Inf -> NaN, -1 -> NaN, -0 -> -Inf, +0 -> -Inf, +Inf -> +Inf, NaN -> NaN.
  ExpectSameBits(RunBits("lg2.approx.f32", {kNegInf, 0xBF800000u, kNegZero, 0, kInf, kNaN}),
                 U32{kNaN, kNaN, kNegInf, kNegInf, kInf, kNaN}, IsNaN32, "lg2 specials");
  // 2^-140 is subnormal: exactly -140 unless .ftz flushes it to 0 (-> -Inf).
  ExpectSameBits(RunBits("lg2.approx.ftz.f32", {0x00000200u}), U32{kNegInf}, IsNaN32, "lg2.ftz");
}

TEST_F(PtxApproxTest, SinCosWithinDocumentedAbsoluteError) {
  const double pi = 3.14159265358979323846;
  std::vector<float> near = Uniform(static_cast<float>(-2 * pi), static_cast<float>(2 * pi), 4000, 5);
  std::vector<float> far = Uniform(static_cast<float>(-100 * pi), static_cast<float>(100 * pi), 4000, 6);
  for (const char* op : {"sin.approx.f32", "cos.approx.f32"}) {
    bool is_sin = op[0] == 's';
    auto error = [is_sin](float got, float in) {
      double x = in;
      return std::fabs(got - (is_sin ? std::sin(x) : std::cos(x)));
    };
    Worst n = WorstError(op, near, error);
    EXPECT_LE(n.error, std::exp2(-20.5)) << op << "(" << n.input << ") = " << n.got;
    Worst f = WorstError(op, far, error);
    EXPECT_LE(f.error, std::exp2(-14.7)) << op << "(" << f.input << ") = " << f.got;
  }
  // sin: -Inf -> NaN, -0 -> -0, +0 -> +0, +Inf -> NaN, NaN -> NaN.
  ExpectSameBits(RunBits("sin.approx.f32", {kNegInf, kNegZero, 0, kInf, kNaN}),
                 U32{kNaN, kNegZero, 0, kNaN, kNaN}, IsNaN32, "sin specials");
  // cos: -Inf -> NaN, -0 -> 1, +0 -> 1, +Inf -> NaN, NaN -> NaN.
  ExpectSameBits(RunBits("cos.approx.f32", {kNegInf, kNegZero, 0, kInf, kNaN}), U32{kNaN, kOne, kOne, kNaN, kNaN},
                 IsNaN32, "cos specials");
}

TEST_F(PtxApproxTest, RsqrtWithinDocumentedRelativeError) {
  std::vector<float> x = LogUniform(-149, 127, 5000, 7);
  Worst w = WorstError("rsqrt.approx.f32", x, [](float got, float in) {
    double exact = 1.0 / std::sqrt(static_cast<double>(in));
    return std::fabs(got - exact) / exact;
  });
  EXPECT_LE(w.error, std::exp2(-22.9)) << "rsqrt.approx.f32(" << w.input << ") = " << w.got;
  // -Inf -> NaN, -1 -> NaN, -0 -> -Inf, +0 -> +Inf, +Inf -> +0, NaN -> NaN.
  ExpectSameBits(RunBits("rsqrt.approx.f32", {kNegInf, 0xBF800000u, kNegZero, 0, kInf, kNaN}),
                 U32{kNaN, kNaN, kNegInf, kInf, 0, kNaN}, IsNaN32, "rsqrt specials");
}

TEST_F(PtxApproxTest, RcpApproxWithinOneUlp) {
  std::vector<float> x = LogUniform(-125, 125, 5000, 8);
  for (size_t i = 0; i < x.size(); i += 2) x[i] = -x[i];
  Worst w = WorstError("rcp.approx.f32", x, [](float got, float in) {
    return UlpsFromCorrectlyRounded(got, 1.0 / static_cast<double>(in));
  });
  EXPECT_LE(w.error, 1) << "rcp.approx.f32(" << w.input << ") = " << w.got;
  // -Inf -> -0, -0 -> -Inf, +0 -> +Inf, +Inf -> +0, NaN -> NaN.
  ExpectSameBits(RunBits("rcp.approx.f32", {kNegInf, kNegZero, 0, kInf, kNaN}),
                 U32{kNegZero, kNegInf, kInf, 0, kNaN}, IsNaN32, "rcp specials");
}

TEST_F(PtxApproxTest, TanhWithinDocumentedRelativeError) {
  std::vector<float> x = Uniform(-20.0f, 20.0f, 4000, 9);
  std::vector<float> tiny = LogUniform(-149, -1, 1000, 10);
  for (size_t i = 0; i < tiny.size(); i += 2) tiny[i] = -tiny[i];
  x.insert(x.end(), tiny.begin(), tiny.end());
  Worst w = WorstError("tanh.approx.f32", x, [](float got, float in) {
    double exact = std::tanh(static_cast<double>(in));
    return std::fabs(got - exact) / std::fabs(exact);
  });
  EXPECT_LE(w.error, std::exp2(-11.0)) << "tanh.approx.f32(" << w.input << ") = " << w.got;
  // -Inf -> -1, -0 -> -0, +0 -> +0, +Inf -> 1, NaN -> NaN.
  ExpectSameBits(RunBits("tanh.approx.f32", {kNegInf, kNegZero, 0, kInf, kNaN}),
                 U32{0xBF800000u, kNegZero, 0, kOne, kNaN}, IsNaN32, "tanh specials");
}

}  // namespace
}  // namespace kiln::emu::testing
