// End to end cholesky and triangular-solve: HLO compiled by bef-compile's
// pipeline into Cholesky (after CholeskyRewriter, with its fix-up kernel)
// and TriangularSolve thunks, executed by the host runtime through
// OpenBLAS' LAPACK potrf and trsm (or, as linalg_e2e_test_cuda, on CUDA
// through the emulator's cuSOLVER and cuBLAS doubles), and compared with
// the reference evaluator. f16 and bf16 solves run in f32
// (TriangularSolveUpcast).
//
// Inputs are built here rather than drawn at random: Cholesky needs
// Hermitian positive definite matrices (X X^H + n I), and a triangular
// solve a diagonal kept away from zero. The triangle an op must not read
// holds NaN (Cholesky) or large garbage (triangular-solve), so reading it
// shows up as a mismatch.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>

#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

using C = std::complex<double>;

// Product of `dims` except the last two: the number of matrices.
int64_t Batches(const std::vector<int64_t>& dims) {
  int64_t b = 1;
  for (size_t i = 0; i + 2 < dims.size(); ++i) b *= dims[i];
  return b;
}

class LinalgE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }

  // Compiles and runs the entry `body` on `args` and compares with the evaluator.
  void Check(const std::string& body, const std::vector<Literal>& args, const CompareOptions& tol) {
    const std::string text = "HloModule m\n\nENTRY e {\n" + body + "}\n";
    auto module = hlo::ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().message();
    ASSERT_TRUE(hlo::VerifyModule(**module).ok()) << hlo::VerifyModule(**module).message();
    EXPECT_EQ(CompareWithEvaluator(**module, *device_, args, tol), "") << text;
  }

  C Random(bool complex) { return C(uniform_(rng_), complex ? uniform_(rng_) : 0.0); }

  // Hermitian positive definite matrices X X^H + n I of `type` and `dims`;
  // the triangle cholesky(lower) must not read is NaN.
  Literal PositiveDefinite(ElementType type, const std::vector<int64_t>& dims, bool lower) {
    const int64_t n = dims.back();
    const bool complex = IsComplex(type);
    Literal lit{Shape(type, dims)};
    std::vector<C> x(n * n);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int64_t b = 0; b < Batches(dims); ++b) {
      for (C& v : x) v = Random(complex);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          C sum = i == j ? C(double(n)) : C(0);
          for (int64_t k = 0; k < n; ++k) sum += x[i * n + k] * std::conj(x[j * n + k]);
          const bool unread = lower ? j > i : j < i;
          Set(lit, b * n * n + i * n + j, unread ? C(nan, complex ? nan : 0) : sum);
        }
      }
    }
    return lit;
  }

  // Triangular matrices whose `lower` (else upper) triangle is random with
  // a diagonal of magnitude 2 to 3; the other triangle is garbage.
  Literal Triangular(ElementType type, const std::vector<int64_t>& dims, bool lower) {
    const int64_t k = dims.back();
    const bool complex = IsComplex(type);
    Literal lit{Shape(type, dims)};
    for (int64_t b = 0; b < Batches(dims); ++b) {
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < k; ++j) {
          C v = Random(complex);
          if (i == j) v += v.real() < 0 ? -2.0 : 2.0;
          if (lower ? j > i : j < i) v = 1e4 + v * 1e3;
          Set(lit, b * k * k + i * k + j, v);
        }
      }
    }
    return lit;
  }

  Literal RandomArray(ElementType type, const std::vector<int64_t>& dims) {
    Literal lit{Shape(type, dims)};
    for (int64_t i = 0; i < lit.element_count(); ++i) Set(lit, i, Random(IsComplex(type)));
    return lit;
  }

  static void Set(Literal& lit, int64_t i, C v) {
    if (IsComplex(lit.element_type())) {
      lit.SetC128(i, v);
    } else {
      lit.SetF64(i, v.real());
    }
  }

  // LAPACK and BLAS work in the element type in their own blocked order;
  // the evaluator in double.
  static inline const CompareOptions kF32Tolerance{1e-4, 1e-4};
  static inline const CompareOptions kF64Tolerance{1e-10, 1e-10};

  std::unique_ptr<runtime::Device> device_;
  std::mt19937_64 rng_{11};
  std::uniform_real_distribution<double> uniform_{-1.0, 1.0};
};

// ---------------------------------------------------------------- cholesky --

TEST_F(LinalgE2ETest, CholeskyLowerBatched) {
  Check("  a = f32[2,3,5,5] parameter(0)\n  ROOT l = f32[2,3,5,5] cholesky(a), lower=true\n",
        {PositiveDefinite(ElementType::kF32, {2, 3, 5, 5}, true)}, kF32Tolerance);
}

TEST_F(LinalgE2ETest, CholeskyUpper) {
  Check("  a = f64[6,6] parameter(0)\n  ROOT u = f64[6,6] cholesky(a), lower=false\n",
        {PositiveDefinite(ElementType::kF64, {6, 6}, false)}, kF64Tolerance);
  Check("  a = f32[3,4,4] parameter(0)\n  ROOT u = f32[3,4,4] cholesky(a), lower=false\n",
        {PositiveDefinite(ElementType::kF32, {3, 4, 4}, false)}, kF32Tolerance);
}

TEST_F(LinalgE2ETest, CholeskyComplex) {
  Check("  a = c64[2,3,3] parameter(0)\n  ROOT l = c64[2,3,3] cholesky(a), lower=true\n",
        {PositiveDefinite(ElementType::kC64, {2, 3, 3}, true)}, kF32Tolerance);
  Check("  a = c128[4,4] parameter(0)\n  ROOT u = c128[4,4] cholesky(a), lower=false\n",
        {PositiveDefinite(ElementType::kC128, {4, 4}, false)}, kF64Tolerance);
}

TEST_F(LinalgE2ETest, CholeskyOfMatricesThatAreNotPositiveDefinite) {
  // Matrix 1 negated (first pivot < 0), matrix 2 with a zero last pivot:
  // both all NaN; matrices 0 and 3 factor.
  Literal a = PositiveDefinite(ElementType::kF64, {4, 3, 3}, true);
  for (int64_t i = 9; i < 18; ++i) a.SetF64(i, -a.GetF64(i));
  const std::vector<double> singular = {1, 0, 0, 1, 1, 0, 0, 0, 0};  // [[1],[1,1],[0,0,0]]
  for (int64_t i = 0; i < 9; ++i) a.SetF64(18 + i, singular[i]);
  Check("  a = f64[4,3,3] parameter(0)\n  ROOT l = f64[4,3,3] cholesky(a), lower=true\n", {a}, kF64Tolerance);
  Literal f = PositiveDefinite(ElementType::kF32, {2, 2, 2}, false);
  f.SetF64(4, -1);
  Check("  a = f32[2,2,2] parameter(0)\n  ROOT u = f32[2,2,2] cholesky(a), lower=false\n", {f}, kF32Tolerance);
}

TEST_F(LinalgE2ETest, CholeskyF16IsFactoredInF32) {
  Check("  a = f16[3,3] parameter(0)\n  ROOT l = f16[3,3] cholesky(a), lower=true\n",
        {PositiveDefinite(ElementType::kF16, {3, 3}, true)}, {});
}

TEST_F(LinalgE2ETest, CholeskyOfAComputedMatrixIntoAFusion) {
  // A = X X^T + 4 I computed in the module (the potrf call may then take
  // over A's buffer), and the factor read by a fused consumer.
  Check(R"(  x = f32[2,4,4] parameter(0)
  g = f32[2,4,4] dot(x, x), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  r = s32[2,4,4] iota(), iota_dimension=1
  c = s32[2,4,4] iota(), iota_dimension=2
  eq = pred[2,4,4] compare(r, c), direction=EQ
  four = f32[] constant(4)
  fours = f32[2,4,4] broadcast(four), dimensions={}
  zero = f32[] constant(0)
  zeros = f32[2,4,4] broadcast(zero), dimensions={}
  eye = f32[2,4,4] select(eq, fours, zeros)
  a = f32[2,4,4] add(g, eye)
  l = f32[2,4,4] cholesky(a), lower=true
  ROOT s = f32[2,4,4] multiply(l, l)
)",
        {RandomArray(ElementType::kF32, {2, 4, 4})}, kF32Tolerance);
}

// ------------------------------------------------------- triangular-solve --

TEST_F(LinalgE2ETest, TriangularSolveEveryOption) {
  for (bool left : {true, false}) {
    for (bool lower : {true, false}) {
      for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
        for (bool unit : {false, true}) {
          // b is 3 x 4: a is 3 x 3 on the left, 4 x 4 on the right.
          const int64_t k = left ? 3 : 4;
          const std::string a_shape = "f32[2," + std::to_string(k) + "," + std::to_string(k) + "]";
          std::string attrs = std::string("left_side=") + (left ? "true" : "false") +
                              ", lower=" + (lower ? "true" : "false") +
                              ", unit_diagonal=" + (unit ? "true" : "false") + ", transpose_a=" + transpose;
          SCOPED_TRACE(attrs);
          Check("  a = " + a_shape + " parameter(0)\n  b = f32[2,3,4] parameter(1)\n" +
                    "  ROOT x = f32[2,3,4] triangular-solve(a, b), " + attrs + "\n",
                {Triangular(ElementType::kF32, {2, k, k}, lower), RandomArray(ElementType::kF32, {2, 3, 4})},
                kF32Tolerance);
        }
      }
    }
  }
}

TEST_F(LinalgE2ETest, TriangularSolveF64AndComplex) {
  Check(R"(  a = f64[2,2,5,5] parameter(0)
  b = f64[2,2,5,3] parameter(1)
  ROOT x = f64[2,2,5,3] triangular-solve(a, b), left_side=true, lower=false, transpose_a=TRANSPOSE
)",
        {Triangular(ElementType::kF64, {2, 2, 5, 5}, false), RandomArray(ElementType::kF64, {2, 2, 5, 3})},
        kF64Tolerance);
  for (const char* transpose : {"TRANSPOSE", "ADJOINT"}) {
    SCOPED_TRACE(transpose);
    Check(std::string(R"(  a = c64[3,4,4] parameter(0)
  b = c64[3,2,4] parameter(1)
  ROOT x = c64[3,2,4] triangular-solve(a, b), lower=true, transpose_a=)") + transpose + "\n",
          {Triangular(ElementType::kC64, {3, 4, 4}, true), RandomArray(ElementType::kC64, {3, 2, 4})},
          kF32Tolerance);
    Check(std::string(R"(  a = c128[3,3] parameter(0)
  b = c128[3,2] parameter(1)
  ROOT x = c128[3,2] triangular-solve(a, b), left_side=true, lower=false, transpose_a=)") + transpose + "\n",
          {Triangular(ElementType::kC128, {3, 3}, false), RandomArray(ElementType::kC128, {3, 2})},
          kF64Tolerance);
  }
}

TEST_F(LinalgE2ETest, CholeskySolveOfAComputedRightHandSide) {
  // x = A^-1 (2 b) by L y = 2b, L^H x = y (jax's cho_solve): the first solve
  // may take over the fused 2b's buffer, the second y's.
  Check(R"(  a = f64[2,4,4] parameter(0)
  b = f64[2,4,2] parameter(1)
  two = f64[] constant(2)
  twos = f64[2,4,2] broadcast(two), dimensions={}
  rhs = f64[2,4,2] multiply(b, twos)
  l = f64[2,4,4] cholesky(a), lower=true
  y = f64[2,4,2] triangular-solve(l, rhs), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  ROOT x = f64[2,4,2] triangular-solve(l, y), left_side=true, lower=true, transpose_a=ADJOINT
)",
        {PositiveDefinite(ElementType::kF64, {2, 4, 4}, true), RandomArray(ElementType::kF64, {2, 4, 2})},
        kF64Tolerance);
}

// trsm takes f32 and wider: f16 and bf16 systems are solved in f32 and
// rounded once (TriangularSolveUpcast), which the evaluator's double solve
// rounded once matches to the narrow types' precision.
TEST_F(LinalgE2ETest, TriangularSolveNarrowFloatsInF32) {
  for (const char* type : {"f16", "bf16"}) {
    const ElementType t = std::string(type) == "f16" ? ElementType::kF16 : ElementType::kBF16;
    for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE"}) {
      SCOPED_TRACE(std::string(type) + " " + transpose);
      const std::string s = type;
      Check("  a = " + s + "[2,4,4] parameter(0)\n  b = " + s + "[2,4,3] parameter(1)\n  ROOT x = " + s +
                "[2,4,3] triangular-solve(a, b), left_side=true, lower=true, transpose_a=" + transpose + "\n",
            {Triangular(t, {2, 4, 4}, true), RandomArray(t, {2, 4, 3})},
            t == ElementType::kF16 ? CompareOptions{2e-3, 2e-3} : CompareOptions{1e-2, 1e-2});
    }
  }
}

TEST_F(LinalgE2ETest, UnsupportedTypeIsAOneLineError) {
  auto module = hlo::ParseHloModule(R"(HloModule m

ENTRY e {
  a = f8e5m2[2,2] parameter(0)
  b = f8e5m2[2,2] parameter(1)
  ROOT x = f8e5m2[2,2] triangular-solve(a, b), lower=true, transpose_a=NO_TRANSPOSE
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<Literal> args = {Triangular(ElementType::kF8E5M2, {2, 2}, true),
                               RandomArray(ElementType::kF8E5M2, {2, 2})};
  StatusOr<tools::DeviceRunResult> r = tools::CompileAndRun(**module, args, *device_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bef-compile does not support triangular-solve of f8e5m2[2,2]"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace kiln::testing
