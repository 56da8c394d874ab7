// End to end jnp.linalg as JAX lowers it for CUDA: the modules in
// tests/e2e/data/gpu_linalg (made by its generate.py) call JAX's cuSOLVER
// targets (cusolver_{getrf,geqrf,orgqr,syevd,gesvd,gesvdj,gesvdp,potrf}_ffi,
// cu_lu_pivots_to_permutation), which GpuSolverCustomCallRewriter turns into
// the LAPACK calls kiln runs (LAPACK on the host; cuSOLVER, the emulator's
// double, as gpu_linalg_e2e_test_cuda). XLA GPU's own __cusolver$cholesky
// and __cublas$triangularSolve are written by hand here.
//
// Expected values, independently of both the rewrite and the libraries:
// each decomposition's defining properties on kiln's results (P A = L U,
// A = Q R with Q^H Q = I, A V = V diag(w), A = U diag(s) V^H with
// orthonormal U and V, A = L L^H), and the reference evaluator (its own
// textbook algorithms, reading the GPU targets' conventions itself) for
// the results that are unique: LU factors and pivots, permutations, Q and
// R, eigen- and singular values, Cholesky factors.
#include <gtest/gtest.h>

#include <complex>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

using C = std::complex<double>;

// Row-major matrices of a batch, read from a literal as complex<double>.
struct Batch {
  int64_t count = 1, rows = 0, cols = 0;
  std::vector<C> v;
  C at(int64_t b, int64_t r, int64_t c) const { return v[(b * rows + r) * cols + c]; }
};

Batch BatchOf(const Literal& lit) {
  Batch m;
  const Shape& s = lit.shape();
  m.rows = s.dim(s.rank() - 2);
  m.cols = s.dim(s.rank() - 1);
  m.count = m.rows * m.cols == 0 ? 0 : lit.element_count() / (m.rows * m.cols);
  for (int64_t i = 0; i < lit.element_count(); ++i)
    m.v.push_back(IsComplex(s.element_type()) ? lit.GetC128(i) : C(lit.GetF64(i), 0));
  return m;
}

class GpuLinalgE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }

  std::unique_ptr<hlo::HloModule> Load(const std::string& name) {
    std::ifstream in("tests/e2e/data/gpu_linalg/" + name + ".hlo");
    EXPECT_TRUE(in.good()) << name;
    std::stringstream text;
    text << in.rdbuf();
    auto module = hlo::ParseHloModule(text.str());
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) return nullptr;
    EXPECT_TRUE(hlo::VerifyModule(**module).ok());
    return std::move(*module);
  }

  enum class Input { kGeneral, kHermitian, kPositiveDefinite };

  Literal MakeInput(const Shape& shape, Input kind) {
    Literal lit{shape};
    const bool complex = IsComplex(shape.element_type());
    const int64_t n = shape.dim(shape.rank() - 1), rows = shape.dim(shape.rank() - 2);
    std::vector<C> v(lit.element_count());
    for (C& x : v) x = C(uniform_(rng_), complex ? uniform_(rng_) : 0.0);
    if (kind != Input::kGeneral) {
      for (int64_t b = 0; b < lit.element_count() / (n * n); ++b) {
        C* a = v.data() + b * n * n;
        std::vector<C> h(n * n);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            if (kind == Input::kHermitian) {
              h[i * n + j] = a[i * n + j] + std::conj(a[j * n + i]);
            } else {  // B B^H + n I
              for (int64_t k = 0; k < n; ++k) h[i * n + j] += a[i * n + k] * std::conj(a[j * n + k]);
              if (i == j) h[i * n + j] += static_cast<double>(n);
            }
          }
        std::copy(h.begin(), h.end(), a);
      }
    }
    (void)rows;
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      if (complex) lit.SetC128(i, v[i]);
      else lit.SetF64(i, v[i].real());
    }
    return lit;
  }

  // Compiles and runs `name` on one input of `kind`, checks the result
  // leaves listed in `unique` against the evaluator and hands kiln's result
  // and the input to `check`.
  void Run(const std::string& name, Input kind, const std::vector<int64_t>& unique,
           const std::function<void(const Literal& result, const Batch& a)>& check) {
    std::unique_ptr<hlo::HloModule> module = Load(name);
    ASSERT_TRUE(module);
    const Shape shape = module->entry()->ParameterShapes()[0];
    std::vector<Literal> args;
    args.push_back(MakeInput(shape, kind));
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(*module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(*module, args, *device_);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    const Literal& result = actual->result;
    const bool f32 = shape.element_type() == ElementType::kF32 || shape.element_type() == ElementType::kC64;
    tol_ = f32 ? 2e-5 : 1e-11;
    for (int64_t i : unique) {
      const Literal& got = result.shape().IsTuple() ? result.element(i) : result;
      const Literal& want = expected->shape().IsTuple() ? expected->element(i) : *expected;
      Status s = CompareValues(got, want, "result " + std::to_string(i), CompareOptions{tol_ * 5, tol_ * 5});
      EXPECT_TRUE(s.ok()) << name << ": " << s.message();
    }
    check(result, BatchOf(args[0]));
  }

  // |x - y| within the tolerance scaled by the matrices' size.
  void Near(C x, C y, const std::string& what) {
    EXPECT_LE(std::abs(x - y), tol_ * 20) << what << ": " << x << " vs " << y;
  }
  // Columns [0, k) of `m` are orthonormal (rows when `rows`).
  void Orthonormal(const Batch& m, int64_t k, bool rows, const std::string& what) {
    for (int64_t b = 0; b < m.count; ++b)
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < k; ++j) {
          C dot = 0;
          const int64_t len = rows ? m.cols : m.rows;
          for (int64_t t = 0; t < len; ++t)
            dot += rows ? std::conj(m.at(b, i, t)) * m.at(b, j, t) : std::conj(m.at(b, t, i)) * m.at(b, t, j);
          Near(dot, i == j ? 1.0 : 0.0, what + " orthonormality");
        }
  }

  void CheckLu(const std::string& name) {
    Run(name, Input::kGeneral, {0, 1, 2}, [&](const Literal& r, const Batch& a) {
      const Batch lu = BatchOf(r.element(0));
      const Literal& perm = r.element(2);
      const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
      for (int64_t b = 0; b < a.count; ++b)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            C sum = 0;  // (L U)[i, j], L unit lower m x k, U upper k x n
            for (int64_t t = 0; t <= std::min({i, j, k - 1}); ++t)
              sum += (t == i ? C(1) : lu.at(b, i, t)) * lu.at(b, t, j);
            Near(sum, a.at(b, perm.GetS64(b * m + i), j), name + " P A = L U");
          }
    });
  }

  void CheckQr(const std::string& name) {
    Run(name, Input::kGeneral, {0, 1}, [&](const Literal& r, const Batch& a) {
      const Batch q = BatchOf(r.element(0)), rr = BatchOf(r.element(1));
      Orthonormal(q, q.cols, false, name + " Q");
      for (int64_t b = 0; b < a.count; ++b)
        for (int64_t i = 0; i < a.rows; ++i)
          for (int64_t j = 0; j < a.cols; ++j) {
            C sum = 0;
            for (int64_t t = 0; t < q.cols; ++t) sum += q.at(b, i, t) * rr.at(b, t, j);
            Near(sum, a.at(b, i, j), name + " A = Q R");
          }
    });
  }

  void CheckEigh(const std::string& name) {
    Run(name, Input::kHermitian, {0}, [&](const Literal& r, const Batch& a) {
      const Literal& w = r.element(0);
      const Batch v = BatchOf(r.element(1));
      const int64_t n = a.rows;
      Orthonormal(v, n, false, name + " V");
      for (int64_t b = 0; b < a.count; ++b)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            C av = 0;
            for (int64_t t = 0; t < n; ++t) av += a.at(b, i, t) * v.at(b, t, j);
            Near(av, w.GetF64(b * n + j) * v.at(b, i, j), name + " A V = V diag(w)");
          }
    });
  }

  void CheckSvd(const std::string& name) {
    Run(name, Input::kGeneral, {1}, [&](const Literal& r, const Batch& a) {
      const Batch u = BatchOf(r.element(0)), vh = BatchOf(r.element(2));
      const Literal& s = r.element(1);
      const int64_t k = std::min(a.rows, a.cols);
      Orthonormal(u, u.cols, false, name + " U");
      Orthonormal(vh, vh.rows, true, name + " V^H");
      for (int64_t b = 0; b < a.count; ++b)
        for (int64_t i = 0; i < a.rows; ++i)
          for (int64_t j = 0; j < a.cols; ++j) {
            C sum = 0;
            for (int64_t t = 0; t < k; ++t) sum += u.at(b, i, t) * s.GetF64(b * k + t) * vh.at(b, t, j);
            Near(sum, a.at(b, i, j), name + " A = U diag(s) V^H");
          }
    });
  }

  // A = L L^H (lower) or U^H U (upper), the other triangle zero.
  void CheckCholesky(const std::string& name, bool upper) {
    Run(name, Input::kPositiveDefinite, {0}, [&](const Literal& r, const Batch& a) {
      const Batch f = BatchOf(r);
      const int64_t n = a.rows;
      for (int64_t b = 0; b < a.count; ++b)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            C sum = 0;
            for (int64_t t = 0; t < n; ++t)
              sum += upper ? std::conj(f.at(b, t, i)) * f.at(b, t, j) : f.at(b, i, t) * std::conj(f.at(b, j, t));
            Near(sum, a.at(b, i, j), name + " A = L L^H");
            if (upper ? i > j : j > i) {
              EXPECT_EQ(f.at(b, i, j), C(0)) << name;
            }
          }
    });
  }

  std::unique_ptr<runtime::Device> device_;
  std::mt19937_64 rng_{7};
  std::uniform_real_distribution<double> uniform_{-1.0, 1.0};
  double tol_ = 1e-5;
};

TEST_F(GpuLinalgE2ETest, LuSquare) { CheckLu("lu_f32_4x4"); }
TEST_F(GpuLinalgE2ETest, LuBatchedTall) { CheckLu("lu_f64_batch_tall_2x5x3"); }
TEST_F(GpuLinalgE2ETest, LuWide) { CheckLu("lu_f64_wide_3x5"); }

TEST_F(GpuLinalgE2ETest, QrReduced) { CheckQr("qr_f32_reduced_5x3"); }
TEST_F(GpuLinalgE2ETest, QrComplexComplete) { CheckQr("qr_c64_complete_3x3"); }
TEST_F(GpuLinalgE2ETest, QrBatchedWide) { CheckQr("qr_f64_batch_wide_2x3x4"); }

TEST_F(GpuLinalgE2ETest, EighLower) { CheckEigh("eigh_f64_lower_4x4"); }
TEST_F(GpuLinalgE2ETest, EighUpperBatched) { CheckEigh("eigh_f32_upper_batch_2x3x3"); }
TEST_F(GpuLinalgE2ETest, EighComplex) { CheckEigh("eigh_c128_3x3"); }

// gesvdj: V comes back untransposed and the module transposes it.
TEST_F(GpuLinalgE2ETest, SvdJacobiFull) { CheckSvd("svd_f32_jacobi_full_4x3"); }
TEST_F(GpuLinalgE2ETest, SvdJacobiReduced) { CheckSvd("svd_f64_jacobi_reduced_3x5"); }
TEST_F(GpuLinalgE2ETest, SvdJacobiComplex) { CheckSvd("svd_c64_jacobi_3x2"); }
// gesvdp (the polar algorithm) returns V as gesvdj does.
TEST_F(GpuLinalgE2ETest, SvdPolar) { CheckSvd("svd_f64_polar_4x3"); }
// gesvd: a wide matrix is factored transposed, vt before u.
TEST_F(GpuLinalgE2ETest, SvdQrTall) { CheckSvd("svd_f64_qr_full_tall_5x3"); }
TEST_F(GpuLinalgE2ETest, SvdQrWideBatched) { CheckSvd("svd_f32_qr_reduced_wide_2x3x5"); }

// compute_uv=false: singular values only.
TEST_F(GpuLinalgE2ETest, SingularValuesOnly) {
  for (const char* name : {"svd_f64_jacobi_values_4x3", "svd_f64_qr_values_wide_3x4"})
    Run(name, Input::kGeneral, {0}, [](const Literal&, const Batch&) {});
}

TEST_F(GpuLinalgE2ETest, Cholesky) { CheckCholesky("cholesky_f32_4x4", false); }
TEST_F(GpuLinalgE2ETest, CholeskyUpperBatched) { CheckCholesky("cholesky_f64_upper_batch_2x3x3", true); }

// XLA GPU's cholesky op as its GpuSolverRewriter writes it: (factor in the
// `lower` triangle, workspace, info), followed by XLA's NaN fill of the
// matrices whose info is not 0; a matrix that is not positive definite
// reports its failing minor.
TEST_F(GpuLinalgE2ETest, XlaCusolverCholesky) {
  const std::string text = R"(HloModule m

ENTRY e {
  a = f64[2,3,3] parameter(0)
  c = (f64[2,3,3]{1,2,0}, f64[64]{0}, s32[2]{0}) custom-call(a), custom_call_target="__cusolver$cholesky", operand_layout_constraints={f64[2,3,3]{1,2,0}}, backend_config={"lower":true}
  f = f64[2,3,3] get-tuple-element(c), index=0
  w = f64[64] get-tuple-element(c), index=1
  i = s32[2] get-tuple-element(c), index=2
  zero = s32[] constant(0)
  zeros = s32[2] broadcast(zero), dimensions={}
  ok = pred[2] compare(i, zeros), direction=EQ
  ok_all = pred[2,3,3] broadcast(ok), dimensions={0}
  nan = f64[] constant(nan)
  nans = f64[2,3,3] broadcast(nan), dimensions={}
  checked = f64[2,3,3] select(ok_all, f, nans)
  ROOT r = (f64[2,3,3], f64[64], s32[2]) tuple(checked, w, i)
}
)";
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  // Matrix 0 is [[4 2 0] [2 5 1] [0 1 2]] = L L^T with L = [[2 0 0] [1 2 0]
  // [0 .5 sqrt(1.75)]]; matrix 1 has a negative second leading minor.
  Literal a{Shape(ElementType::kF64, {2, 3, 3})};
  const double values[] = {4, 2, 0, 2, 5, 1, 0, 1, 2, 1, 2, 0, 2, 1, 0, 0, 0, 1};
  for (int64_t i = 0; i < 18; ++i) a.SetF64(i, values[i]);
  std::vector<Literal> args;
  args.push_back(std::move(a));
  StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, *device_);
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  const Literal& factor = actual->result.element(0);
  const double l[] = {2, 0, 0, 1, 2, 0, 0, 0.5, std::sqrt(1.75)};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      EXPECT_NEAR(factor.GetF64(i * 3 + j), l[i * 3 + j], 1e-12) << i << "," << j;
      EXPECT_TRUE(std::isnan(factor.GetF64(9 + i * 3 + j)));
    }
  EXPECT_EQ(actual->result.element(1).GetF64(5), 0.0);
  EXPECT_EQ(actual->result.element(2).GetS64(0), 0);
  EXPECT_EQ(actual->result.element(2).GetS64(1), 2);
  EXPECT_EQ(CompareWithEvaluator(**module, *device_, args, {1e-12, 1e-12}), "");
}

// Attribute combinations JAX emits only for larger shapes, written by
// hand: potrf of the upper triangle, gesvdj without full matrices (JAX's
// "econ" mode for m, n > 32) and gesvd of a tall matrix, reduced. Singular
// vectors are unique up to sign, so the module returns their magnitudes
// (distinct singular values of random matrices).
TEST_F(GpuLinalgE2ETest, HandWrittenAttributeCombinations) {
  auto module = hlo::ParseHloModule(R"(HloModule m

ENTRY e {
  spd = f64[2,3,3] parameter(0)
  a = f32[5,3] parameter(1)
  p = (f64[2,3,3]{1,2,0}, s32[2]) custom-call(spd), custom_call_target="cusolver_potrf_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={lower = false}
  j = (f32[5,3]{0,1}, f32[3], f32[5,3]{0,1}, f32[3,3]{0,1}, s32[]) custom-call(a), custom_call_target="cusolver_gesvdj_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={compute_uv = true, full_matrices = false}
  q = (f32[5,3]{0,1}, f32[3], f32[5,3]{0,1}, f32[3,3]{0,1}, s32[]) custom-call(a), custom_call_target="cusolver_gesvd_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={compute_uv = true, full_matrices = false, transposed = false}
  js = f32[3] get-tuple-element(j), index=1
  ju = f32[5,3] get-tuple-element(j), index=2
  jv = f32[3,3] get-tuple-element(j), index=3
  qs = f32[3] get-tuple-element(q), index=1
  qu = f32[5,3] get-tuple-element(q), index=2
  qvt = f32[3,3] get-tuple-element(q), index=3
  aju = f32[5,3] abs(ju)
  ajv = f32[3,3] abs(jv)
  aqu = f32[5,3] abs(qu)
  aqvt = f32[3,3] abs(qvt)
  ROOT r = ((f64[2,3,3], s32[2]), f32[3], f32[5,3], f32[3,3], f32[3], f32[5,3], f32[3,3]) tuple(p, js, aju, ajv, qs, aqu, aqvt)
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<Literal> args;
  args.push_back(MakeInput(Shape(ElementType::kF64, {2, 3, 3}), Input::kPositiveDefinite));
  args.push_back(MakeInput(Shape(ElementType::kF32, {5, 3}), Input::kGeneral));
  EXPECT_EQ(CompareWithEvaluator(**module, *device_, args, {1e-4, 1e-4}), "");
  // gesvdj's V is V^H transposed: |V| is gesvd's |V^H| transposed.
  StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, *device_);
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  const Literal& jv = actual->result.element(3);
  const Literal& qvt = actual->result.element(6);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(jv.GetF64(i * 3 + j), qvt.GetF64(j * 3 + i), 1e-4) << i << "," << j;
}

// XLA GPU's __cublas$triangularSolve (its TriangularSolveRewriter's form of
// triangular-solve), options in every spelling XLA's JSON has, against the
// plain triangular-solve evaluated by the reference evaluator.
TEST_F(GpuLinalgE2ETest, CublasTriangularSolve) {
  struct Case {
    const char* config;
    const char* attrs;  // the equivalent triangular-solve's
  };
  const Case cases[] = {
      {R"({"left_side":true,"lower":true,"unit_diagonal":false,"transpose_a":"NO_TRANSPOSE"})",
       "left_side=true, lower=true, transpose_a=NO_TRANSPOSE"},
      {R"({"left_side":false,"lower":false,"unit_diagonal":true,"transpose_a":"ADJOINT"})",
       "left_side=false, lower=false, unit_diagonal=true, transpose_a=ADJOINT"},
      {R"({"lower":true,"transpose_a":2})", "lower=true, transpose_a=TRANSPOSE"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config);
    const bool left = std::string(c.attrs).find("left_side=true") != std::string::npos;
    const std::string a = left ? "f64[2,3,3]" : "f64[2,4,4]";
    auto module = hlo::ParseHloModule("HloModule m\n\nENTRY e {\n  a = " + a +
                                      " parameter(0)\n  b = f64[2,3,4] parameter(1)\n  s = (f64[2,3,4]{1,2,0}, s8[32]) "
                                      "custom-call(a, b), custom_call_target=\"__cublas$triangularSolve\", "
                                      "backend_config=" + c.config + "\n  ROOT x = f64[2,3,4] get-tuple-element(s), index=0\n}\n");
    auto reference = hlo::ParseHloModule("HloModule m\n\nENTRY e {\n  a = " + a +
                                         " parameter(0)\n  b = f64[2,3,4] parameter(1)\n  ROOT x = f64[2,3,4] "
                                         "triangular-solve(a, b), " + c.attrs + "\n}\n");
    ASSERT_TRUE(module.ok() && reference.ok()) << module.status().message() << reference.status().message();
    // A diagonal away from zero keeps the solve well conditioned.
    std::vector<Literal> args;
    args.push_back(MakeInput((*module)->entry()->ParameterShapes()[0], Input::kGeneral));
    const int64_t k = left ? 3 : 4;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < k; ++i) args[0].SetF64((b * k + i) * k + i, 4.0 + i);
    args.push_back(MakeInput(Shape(ElementType::kF64, {2, 3, 4}), Input::kGeneral));
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(**reference, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, *device_);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    Status s = CompareValues(actual->result, *expected, "x", {1e-12, 1e-12});
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(CompareWithEvaluator(**module, *device_, args, {1e-12, 1e-12}), "");
  }
}

// cu_lu_pivots_to_permutation alone: swaps applied in order, a pivot out
// of [0, m) skipped, more rows than pivots. Hand-computed.
TEST_F(GpuLinalgE2ETest, PivotsToPermutation) {
  auto module = hlo::ParseHloModule(R"(HloModule m

ENTRY e {
  p = s32[2,3] parameter(0)
  ROOT q = s32[2,5] custom-call(p), custom_call_target="cu_lu_pivots_to_permutation", api_version=API_VERSION_TYPED_FFI, backend_config={}
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  Literal p{Shape(ElementType::kS32, {2, 3})};
  // Row 0: swap(0,3), swap(1,4), swap(2,3) -> [3 4 0 2 1].
  // Row 1: swap(0,2), skip 7, swap(2,-1) skipped -> [2 1 0 3 4].
  const int64_t pivots[] = {3, 4, 3, 2, 7, -1};
  for (int64_t i = 0; i < 6; ++i) p.SetS64(i, pivots[i]);
  std::vector<Literal> args;
  args.push_back(std::move(p));
  StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, *device_);
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  const int64_t expected[] = {3, 4, 0, 2, 1, 2, 1, 0, 3, 4};
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(actual->result.GetS64(i), expected[i]) << i;
  EXPECT_EQ(CompareWithEvaluator(**module, *device_, args), "");
}

// A GPU target on a type cuSOLVER lacks, or with a malformed attribute, is
// one line naming it.
TEST_F(GpuLinalgE2ETest, UnsupportedTypeIsAnError) {
  auto module = hlo::ParseHloModule(R"(HloModule m

ENTRY e {
  a = f16[3,3] parameter(0)
  ROOT c = (f16[3,3], f16[3]) custom-call(a), custom_call_target="cusolver_geqrf_ffi", api_version=API_VERSION_TYPED_FFI
}
)");
  ASSERT_TRUE(module.ok());
  std::vector<Literal> args;
  args.push_back(Literal(Shape(ElementType::kF16, {3, 3})));
  StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, *device_);
  ASSERT_FALSE(actual.ok());
  EXPECT_NE(actual.status().message().find("cusolver_geqrf_ffi of f16[3,3] is not supported"), std::string::npos)
      << actual.status().message();
  EXPECT_EQ(actual.status().message().find('\n'), std::string::npos);

  // An attribute that is not a boolean.
  module = hlo::ParseHloModule(R"(HloModule m

ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT c = (f32[3,3], s32[]) custom-call(a), custom_call_target="cusolver_potrf_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={lower = 1 : i32}
}
)");
  ASSERT_TRUE(module.ok());
  args.clear();
  args.push_back(Literal(Shape(ElementType::kF32, {3, 3})));
  actual = tools::CompileAndRun(**module, args, *device_);
  ASSERT_FALSE(actual.ok());
  EXPECT_NE(actual.status().message().find("backend_config lower is not true or false"), std::string::npos)
      << actual.status().message();
}

}  // namespace
}  // namespace kiln::testing
