// Tests of the evaluator's LAPACK custom calls (JAX's lapack_*_ffi targets)
// on small matrices whose results are worked out by hand in the comments.
// XLA's own answers on larger, batched inputs are the jax cases linalg_*.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/evaluator_test_util.h"

namespace kiln::hlo {
namespace {

using test_support::Array;
using test_support::EvaluateHlo;
using test_support::Values;

StatusOr<Literal> EvalCall(const std::string& param, const std::string& call, const std::vector<Literal>& args) {
  return EvaluateHlo("HloModule m\n\nENTRY e {\n" + param + "  ROOT r = " + call + "\n}\n", args);
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// potrf keeps the unread triangle. A = [[4,99],[2,5]] (lower read): L =
// [[2,0],[1,2]] since 2*2 = 4, 1*2 = 2, 1+4 = 5; the 99 stays. [[1,2],[2,1]]
// fails at the second pivot (1 - 4 < 0): info 2.
TEST(LapackCallTest, PotrfKeepsTheOtherTriangleAndReportsInfo) {
  auto r = EvalCall("  a = f64[2,2,2] parameter(0)\n",
                    "(f64[2,2,2]{1,2,0}, s32[2]) custom-call(a), custom_call_target=\"lapack_dpotrf_ffi\", "
                    "api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}",
                    {Array(ElementType::kF64, {2, 2, 2}, {4, 99, 2, 5, 1, 2, 2, 1})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<double> factor = Values(r->element(0));
  ExpectNear({factor[0], factor[1], factor[2], factor[3]}, {2, 99, 1, 2});
  EXPECT_EQ(Values(r->element(1)), (std::vector<double>{0, 2}));
}

// getrf of [[1,2],[3,4]]: row 1 has the larger pivot (ipiv 2), then
// l = 1/3 and u22 = 2 - 4/3 = 2/3: LU = [[3,4],[1/3,2/3]]. [[0,0],[0,1]]
// has a zero first pivot: info 1, ipiv 1 (no larger entry below).
TEST(LapackCallTest, GetrfPivotsAndReportsZeroPivots) {
  auto r = EvalCall("  a = f64[2,2,2] parameter(0)\n",
                    "(f64[2,2,2], s32[2,2], s32[2]) custom-call(a), custom_call_target=\"lapack_dgetrf_ffi\"",
                    {Array(ElementType::kF64, {2, 2, 2}, {1, 2, 3, 4, 0, 0, 0, 1})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<double> lu = Values(r->element(0));
  ExpectNear({lu[0], lu[1], lu[2], lu[3]}, {3, 4, 1.0 / 3, 2.0 / 3});
  EXPECT_EQ(Values(r->element(1)), (std::vector<double>{2, 2, 1, 2}));
  EXPECT_EQ(Values(r->element(2)), (std::vector<double>{0, 1}));
}

// geqrf of the column [3,4]: alpha 3, norm 5, beta = -5, tau = (beta -
// alpha) / beta = 1.6, v = [1, 4 / (3 + 5)] = [1, 0.5]. orgqr: Q's column
// is (I - tau v v^T) e1 = [1 - 1.6, -0.8] = [-0.6, -0.8].
TEST(LapackCallTest, GeqrfAndOrgqrFollowLapacksReflectors) {
  auto r = EvalCall("  a = f32[2,1] parameter(0)\n",
                    "(f32[2,1], f32[1]) custom-call(a), custom_call_target=\"lapack_sgeqrf_ffi\"",
                    {Array(ElementType::kF32, {2, 1}, {3, 4})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectNear(Values(r->element(0)), {-5, 0.5}, 1e-6);
  ExpectNear(Values(r->element(1)), {1.6}, 1e-6);
  auto q = EvalCall("  a = f32[2,1] parameter(0)\n  tau = f32[1] parameter(1)\n",
                    "f32[2,1] custom-call(a, tau), custom_call_target=\"lapack_sorgqr_ffi\"",
                    {Array(ElementType::kF32, {2, 1}, {-5, 0.5}), Array(ElementType::kF32, {1}, {1.6})});
  ASSERT_TRUE(q.ok()) << q.status().message();
  ExpectNear(Values(*q), {-0.6, -0.8}, 1e-6);
}

// [[2,1],[1,2]]: eigenvalues 1 and 3 (ascending), vectors [1,-1]/sqrt2 and
// [1,1]/sqrt2 up to sign, so the test checks |v| and v1 . v2 = 0. Only the
// upper triangle is read with uplo U (the 99 is ignored).
TEST(LapackCallTest, SyevdSortsEigenvaluesAscending) {
  auto r = EvalCall("  a = f64[2,2] parameter(0)\n",
                    "(f64[2,2], f64[2], s32[]) custom-call(a), custom_call_target=\"lapack_dsyevd_ffi\", "
                    "backend_config={mode = 86 : ui8, uplo = 85 : ui8}",
                    {Array(ElementType::kF64, {2, 2}, {2, 1, 99, 2})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectNear(Values(r->element(1)), {1, 3});
  const std::vector<double> v = Values(r->element(0));
  const double h = 1 / std::sqrt(2.0);
  ExpectNear({std::abs(v[0]), std::abs(v[1]), std::abs(v[2]), std::abs(v[3])}, {h, h, h, h});
  EXPECT_NEAR(v[0] * v[1] + v[2] * v[3], 0, 1e-12);
  EXPECT_NEAR(v[0] + v[2], 0, 1e-12);  // the eigenvalue-1 vector is +-[1,-1]
  EXPECT_EQ(Values(r->element(2)), (std::vector<double>{0}));
}

// [[0,3],[4,0],[0,0]]: singular values 4 and 3 (descending); u's columns
// +-e2 and +-e1, vt's rows +-e1 and +-e2, with u diag(s) vt = a.
TEST(LapackCallTest, GesddReconstructsTheMatrix) {
  auto r = EvalCall("  a = f64[3,2] parameter(0)\n",
                    "(f64[3,2], f64[2], f64[3,2], f64[2,2], s32[]) custom-call(a), "
                    "custom_call_target=\"lapack_dgesdd_ffi\", backend_config={mode = 83 : ui8}",
                    {Array(ElementType::kF64, {3, 2}, {0, 3, 4, 0, 0, 0})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<double> s = Values(r->element(1)), u = Values(r->element(2)), vt = Values(r->element(3));
  ExpectNear(s, {4, 3});
  std::vector<double> rebuilt(6, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k) rebuilt[i * 2 + j] += u[i * 2 + k] * s[k] * vt[k * 2 + j];
  ExpectNear(rebuilt, {0, 3, 4, 0, 0, 0});
  ExpectNear({std::abs(u[2]), std::abs(u[1]), std::abs(vt[0]), std::abs(vt[3])}, {1, 1, 1, 1});
}

TEST(LapackCallTest, UnknownTargetIsOneLineNamingIt) {
  auto r = EvalCall("  a = f64[2,2] parameter(0)\n",
                    "f64[2,2] custom-call(a), custom_call_target=\"lapack_zgeev_ffi\"",
                    {Array(ElementType::kF64, {2, 2}, {1, 0, 0, 1})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'lapack_zgeev_ffi'"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
}

TEST(LapackCallTest, MalformedResultsAreAnError) {
  // getrf returns three results.
  auto r = EvalCall("  a = f64[2,2] parameter(0)\n",
                    "(f64[2,2], s32[2]) custom-call(a), custom_call_target=\"lapack_dgetrf_ffi\"",
                    {Array(ElementType::kF64, {2, 2}, {1, 0, 0, 1})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("malformed lapack_dgetrf_ffi"), std::string::npos) << r.status().message();
  // ... and one info per matrix.
  r = EvalCall("  a = f64[2,2] parameter(0)\n",
               "(f64[2,2], s32[2], s32[5]) custom-call(a), custom_call_target=\"lapack_dgetrf_ffi\"",
               {Array(ElementType::kF64, {2, 2}, {1, 0, 0, 1})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("result sizes"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace kiln::hlo
