// Accuracy of the host kernels' transcendental functions, which are
// polynomial approximations in the kernel IR for f32 (mlir_lowering.cc,
// ApproximateHostMath), glibc's vector functions (libmvec) for the other
// f32 ones in loops, and libm calls otherwise. The f32 sweeps run at every
// x86-64 level this machine has: each level's object calls the libmvec
// variant of its own vector width.
//
// f32: a strided sweep over every 4099th bit pattern (about a million
// values of both signs, subnormals to the largest finite value, plus the
// specials) measured in ulps of the f32 result against the function
// computed in double by the C library: an independent reference.
// f16 and bf16: every bit pattern; the kernel computes in f32 and rounds
// once, so the result is within one ulp of the correctly rounded one.
// Each test prints the largest error it saw.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "common/float_formats.h"
#include "tests/codegen/codegen_test_util.h"

namespace kiln::codegen::testing {
namespace {

struct UnaryFunction {
  const char* hlo;                     // HLO opcode
  std::function<double(double)> ref;   // in double
  double max_ulps;                     // bound on f32 results
};

const std::vector<UnaryFunction>& UnaryFunctions() {
  static const std::vector<UnaryFunction> fs = {
      {"exponential", [](double x) { return std::exp(x); }, 2},
      {"exponential-minus-one", [](double x) { return std::expm1(x); }, 3},
      {"log", [](double x) { return std::log(x); }, 2},
      {"log-plus-one", [](double x) { return std::log1p(x); }, 3},
      {"tanh", [](double x) { return std::tanh(x); }, 6},
      {"logistic", [](double x) { return 1 / (1 + std::exp(-x)); }, 3},
      {"erf", [](double x) { return std::erf(x); }, 5},
      {"cbrt", [](double x) { return std::cbrt(x); }, 3},
      {"sine", [](double x) { return std::sin(x); }, 2},
      {"cosine", [](double x) { return std::cos(x); }, 3},
      {"tan", [](double x) { return std::tan(x); }, 4},
  };
  return fs;
}

std::string UnaryModule(const char* op, ElementType t, int64_t n) {
  std::string s = std::string(ElementTypeName(t)) + "[" + std::to_string(n) + "]";
  return "HloModule m\nENTRY e {\n  p = " + s + " parameter(0)\n  ROOT r = " + s + " " + op + "(p)\n}\n";
}

// The distance from `got` to `want` in ulps of the f32 nearest `want`
// (ulps of the smallest normal below it): 0 when equal or both NaN,
// infinite when one is NaN or they differ in infinity.
double UlpError(float got, double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) == std::isnan(got) ? 0 : INFINITY;
  if (static_cast<double>(got) == want) return 0;
  if (std::isinf(got) || std::isinf(want)) {
    // A double beyond the f32 range rounds to infinity.
    return std::isinf(got) && static_cast<float>(want) == got ? 0 : INFINITY;
  }
  int exp = 0;
  std::frexp(std::max(std::fabs(want), static_cast<double>(std::numeric_limits<float>::min())), &exp);
  double ulp = std::ldexp(1.0, exp - 24);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

Literal F32Sweep() {
  std::vector<float> v;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4099) {
    float f;
    uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, 4);
    v.push_back(f);
  }
  for (float f : {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 88.7f, -87.3f, 89.0f, -104.0f, 1e-8f, -1e-8f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()})
    v.push_back(f);
  Literal lit{Shape(ElementType::kF32, {static_cast<int64_t>(v.size())})};
  std::memcpy(lit.raw(), v.data(), v.size() * 4);
  return lit;
}

TEST(HostMathAccuracyTest, F32WithinAFewUlps) {
  Literal x = F32Sweep();
  int64_t n = x.element_count();
  const float* in = reinterpret_cast<const float*>(x.raw());
  for (const UnaryFunction& f : UnaryFunctions()) {
    auto results = CompileAndRunAtEachLevel(UnaryModule(f.hlo, ElementType::kF32, n), {x});
    ASSERT_FALSE(results.empty()) << f.hlo;
    for (const auto& [level, got] : results) {
      ASSERT_EQ(got.element_count(), n) << f.hlo;
      const float* out = reinterpret_cast<const float*>(got.raw());
      double worst = 0;
      int64_t worst_at = 0;
      for (int64_t i = 0; i < n; ++i) {
        double e = UlpError(out[i], f.ref(in[i]));
        if (e > worst) worst = e, worst_at = i;
      }
      std::printf("  f32 %-22s %-10s max error %.2f ulp (at x = %.9g)\n", f.hlo, level.c_str(), worst,
                  in[worst_at]);
      EXPECT_LE(worst, f.max_ulps) << f.hlo << " " << level << " at x = " << in[worst_at] << ": got "
                                   << out[worst_at] << ", want " << f.ref(in[worst_at]);
    }
  }
}

TEST(HostMathAccuracyTest, BinaryF32WithinAFewUlps) {
  // A grid of both signs over many magnitudes, pairs of every two values.
  std::vector<float> axis;
  for (double m = 1e-6; m < 1e6; m *= 1.37) axis.push_back(static_cast<float>(m)), axis.push_back(static_cast<float>(-m));
  for (float f : {0.0f, -0.0f, 1.0f, 2.0f, 0.5f, std::numeric_limits<float>::infinity()}) axis.push_back(f);
  int64_t n = static_cast<int64_t>(axis.size() * axis.size());
  Literal a{Shape(ElementType::kF32, {n})}, b{Shape(ElementType::kF32, {n})};
  for (size_t i = 0; i < axis.size(); ++i)
    for (size_t j = 0; j < axis.size(); ++j) a.SetF64(i * axis.size() + j, axis[i]), b.SetF64(i * axis.size() + j, axis[j]);
  struct Binary {
    const char* hlo;
    double (*ref)(double, double);
    double max_ulps;
  };
  for (const Binary& f : {Binary{"atan2", [](double y, double x) { return std::atan2(y, x); }, 2},
                          Binary{"power", [](double x, double y) { return std::pow(x, y); }, 1}}) {
    std::string s = "f32[" + std::to_string(n) + "]";
    auto results = CompileAndRunAtEachLevel("HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
                                                " parameter(1)\n  ROOT r = " + s + " " + f.hlo + "(a, b)\n}\n",
                                            {a, b});
    ASSERT_FALSE(results.empty()) << f.hlo;
    for (const auto& [level, got] : results) {
      ASSERT_EQ(got.element_count(), n) << f.hlo;
      double worst = 0;
      int64_t at = 0;
      for (int64_t i = 0; i < n; ++i) {
        double e = UlpError(static_cast<float>(got.GetF64(i)), f.ref(a.GetF64(i), b.GetF64(i)));
        if (e > worst) worst = e, at = i;
      }
      std::printf("  f32 %-22s %-10s max error %.2f ulp (at %.9g, %.9g)\n", f.hlo, level.c_str(), worst,
                  a.GetF64(at), b.GetF64(at));
      EXPECT_LE(worst, f.max_ulps) << f.hlo << " " << level << " at (" << a.GetF64(at) << ", " << b.GetF64(at)
                                   << ")";
    }
  }
}

// Every f16 and bf16 value: the result is the correctly rounded value of
// the function or a neighbour of it (one rounding of an f32 result that
// is itself a few f32 ulps off).
TEST(HostMathAccuracyTest, HalfTypesWithinOneUlpOfCorrectRounding) {
  for (ElementType t : {ElementType::kF16, ElementType::kBF16}) {
    Literal x{Shape(t, {65536})};
    for (int64_t i = 0; i < 65536; ++i) {
      uint16_t bits = static_cast<uint16_t>(i);
      std::memcpy(x.raw() + 2 * i, &bits, 2);
    }
    const FloatFormat* format = FindFloatFormat(t);
    for (const UnaryFunction& f : UnaryFunctions()) {
      Literal got = CompileAndRun(UnaryModule(f.hlo, t, 65536), {x});
      ASSERT_EQ(got.element_count(), 65536) << f.hlo;
      int64_t off_by_one = 0, failures = 0;
      for (int64_t i = 0; i < 65536 && failures < 5; ++i) {
        double want = f.ref(x.GetF64(i));
        Literal rounded{Shape(t, {1})};
        rounded.SetF64(0, want);
        double r = rounded.GetF64(0), g = got.GetF64(i);
        if ((std::isnan(r) && std::isnan(g)) || r == g) continue;
        double ulp = std::ldexp(std::max(std::fabs(r), MinNormal(t)), -format->mantissa_bits);
        if (!std::isinf(r) && !std::isinf(g) && std::fabs(g - r) <= ulp * 1.0001) {
          ++off_by_one;
          continue;
        }
        ++failures;
        ADD_FAILURE() << ElementTypeName(t) << " " << f.hlo << "(" << x.GetF64(i) << "): got " << g
                      << ", want " << r;
      }
      std::printf("  %-4s %-22s %lld of 65536 one ulp from correctly rounded\n",
                  std::string(ElementTypeName(t)).c_str(), f.hlo, static_cast<long long>(off_by_one));
    }
  }
}

}  // namespace
}  // namespace kiln::codegen::testing
