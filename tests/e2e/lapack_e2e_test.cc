// End to end JAX LAPACK custom calls (lapack_<t><op>_ffi, as jnp.linalg
// lowers on CPU): HLO compiled by bef-compile's pipeline into Linalg (and,
// for potrf, Cholesky) thunks, executed by the host runtime through
// OpenBLAS' LAPACK (or, with KILN_E2E_DEVICE=cuda, through cuSOLVER: the
// emulator's cuSOLVER double), and compared with the reference evaluator's
// own textbook algorithms.
//
// getrf, geqrf and orgqr results are unique, so they are compared as they
// are; eigen- and singular vectors only up to sign, so the modules return
// their absolute values (unique for distinct eigen- and singular values,
// which random matrices have). XLA's own answers are the jax cases linalg_*.
#include <gtest/gtest.h>

#include <random>

#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

class LapackE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }

  std::unique_ptr<hlo::HloModule> Parse(const std::string& body) {
    auto module = hlo::ParseHloModule("HloModule m\n\nENTRY e {\n" + body + "}\n");
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) return nullptr;
    EXPECT_TRUE(hlo::VerifyModule(**module).ok()) << hlo::VerifyModule(**module).message();
    return std::move(*module);
  }

  void Check(const std::string& body, const std::vector<Literal>& args, const CompareOptions& tol) {
    std::unique_ptr<hlo::HloModule> module = Parse(body);
    ASSERT_TRUE(module);
    EXPECT_EQ(CompareWithEvaluator(*module, *device_, args, tol), "") << body;
  }

  Literal Random(ElementType type, const std::vector<int64_t>& dims) {
    Literal lit{Shape(type, dims)};
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      if (IsComplex(type)) lit.SetC128(i, {uniform_(rng_), uniform_(rng_)});
      else lit.SetF64(i, uniform_(rng_));
    }
    return lit;
  }

  static inline const CompareOptions kF32{1e-4, 1e-4};
  static inline const CompareOptions kF64{1e-10, 1e-10};

  std::unique_ptr<runtime::Device> device_;
  std::mt19937_64 rng_{12};
  std::uniform_real_distribution<double> uniform_{-1.0, 1.0};
};

// Square, tall and wide matrices, batched: LU, 1-based pivots and info.
TEST_F(LapackE2ETest, GetrfSquareTallWide) {
  Check(R"(  a = f32[2,3,4,4] parameter(0)
  t = f64[5,3] parameter(1)
  w = f64[2,3,5] parameter(2)
  lu = (f32[2,3,4,4]{2,3,1,0}, s32[2,3,4], s32[2,3]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", operand_layout_constraints={f32[2,3,4,4]{2,3,1,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={}
  lt = (f64[5,3]{0,1}, s32[3], s32[]) custom-call(t), custom_call_target="lapack_dgetrf_ffi", api_version=API_VERSION_TYPED_FFI
  lw = (f64[2,3,5]{1,2,0}, s32[2,3], s32[2]) custom-call(w), custom_call_target="lapack_dgetrf_ffi", api_version=API_VERSION_TYPED_FFI
  ROOT r = ((f32[2,3,4,4], s32[2,3,4], s32[2,3]), (f64[5,3], s32[3], s32[]), (f64[2,3,5], s32[2,3], s32[2])) tuple(lu, lt, lw)
)",
        {Random(ElementType::kF32, {2, 3, 4, 4}), Random(ElementType::kF64, {5, 3}), Random(ElementType::kF64, {2, 3, 5})},
        kF32);
}

// The operand stays live after the call: the thunk works on a copy.
TEST_F(LapackE2ETest, GetrfOperandUsedAfterTheCall) {
  Check(R"(  a = f64[3,3] parameter(0)
  lu = (f64[3,3], s32[3], s32[]) custom-call(a), custom_call_target="lapack_dgetrf_ffi", api_version=API_VERSION_TYPED_FFI
  f = f64[3,3] get-tuple-element(lu), index=0
  ROOT r = (f64[3,3], f64[3,3]) tuple(f, a)
)",
        {Random(ElementType::kF64, {3, 3})}, kF64);
}

// A singular matrix: info is the first zero pivot, as LAPACK reports it.
TEST_F(LapackE2ETest, GetrfSingularInfo) {
  Literal a{Shape(ElementType::kF64, {3, 3})};
  const double values[] = {1, 2, 3, 2, 4, 6, 0, 0, 0};
  for (int i = 0; i < 9; ++i) a.SetF64(i, values[i]);
  Check(R"(  a = f64[3,3] parameter(0)
  ROOT lu = (f64[3,3], s32[3], s32[]) custom-call(a), custom_call_target="lapack_dgetrf_ffi", api_version=API_VERSION_TYPED_FFI
)",
        {std::move(a)}, kF64);
}

// geqrf's R and reflectors, tau, and orgqr's Q (reduced and complete, the
// complete one from a zero-padded square matrix, as JAX does).
TEST_F(LapackE2ETest, GeqrfAndOrgqr) {
  Check(R"(  a = f64[2,5,3] parameter(0)
  qr = (f64[2,5,3], f64[2,3]) custom-call(a), custom_call_target="lapack_dgeqrf_ffi", api_version=API_VERSION_TYPED_FFI
  r = f64[2,5,3] get-tuple-element(qr), index=0
  tau = f64[2,3] get-tuple-element(qr), index=1
  q = f64[2,5,3] custom-call(r, tau), custom_call_target="lapack_dorgqr_ffi", api_version=API_VERSION_TYPED_FFI
  zero = f64[] constant(0)
  padded = f64[2,5,5] pad(r, zero), padding=0_0x0_0x0_2
  full = f64[2,5,5] custom-call(padded, tau), custom_call_target="lapack_dorgqr_ffi", api_version=API_VERSION_TYPED_FFI
  ROOT t = (f64[2,5,3], f64[2,3], f64[2,5,3], f64[2,5,5]) tuple(r, tau, q, full)
)",
        {Random(ElementType::kF64, {2, 5, 3})}, kF64);
  Check(R"(  a = f32[3,4] parameter(0)
  ROOT qr = (f32[3,4], f32[3]) custom-call(a), custom_call_target="lapack_sgeqrf_ffi", api_version=API_VERSION_TYPED_FFI
)",
        {Random(ElementType::kF32, {3, 4})}, kF32);
}

// Eigenvalues ascending and |eigenvectors|, reading the lower or upper
// triangle only (the other holds garbage that must not be read).
TEST_F(LapackE2ETest, SyevdLowerAndUpper) {
  for (const char* uplo : {"76", "85"}) {
    Literal a = Random(ElementType::kF64, {3, 4, 4});
    Check(std::string(R"(  a = f64[3,4,4] parameter(0)
  e = (f64[3,4,4], f64[3,4], s32[3]) custom-call(a), custom_call_target="lapack_dsyevd_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={mode = 86 : ui8, uplo = )") +
              uplo + R"( : ui8}
  v = f64[3,4,4] get-tuple-element(e), index=0
  w = f64[3,4] get-tuple-element(e), index=1
  info = s32[3] get-tuple-element(e), index=2
  av = f64[3,4,4] abs(v)
  ROOT r = (f64[3,4], f64[3,4,4], s32[3]) tuple(w, av, info)
)",
          {std::move(a)}, kF64);
  }
}

// Singular values descending and |u|, |vt| for reduced (S), full (A, the
// extra columns unique up to sign for a square matrix) and no vectors (N).
TEST_F(LapackE2ETest, GesddModes) {
  Check(R"(  a = f32[2,5,3] parameter(0)
  s = (f32[2,5,3], f32[2,3], f32[2,5,3], f32[2,3,3], s32[2]) custom-call(a), custom_call_target="lapack_sgesdd_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={mode = 83 : ui8}
  sv = f32[2,3] get-tuple-element(s), index=1
  u = f32[2,5,3] get-tuple-element(s), index=2
  vt = f32[2,3,3] get-tuple-element(s), index=3
  info = s32[2] get-tuple-element(s), index=4
  au = f32[2,5,3] abs(u)
  avt = f32[2,3,3] abs(vt)
  ROOT r = (f32[2,3], f32[2,5,3], f32[2,3,3], s32[2]) tuple(sv, au, avt, info)
)",
        {Random(ElementType::kF32, {2, 5, 3})}, kF32);
  Check(R"(  a = f64[4,4] parameter(0)
  s = (f64[4,4], f64[4], f64[4,4], f64[4,4], s32[]) custom-call(a), custom_call_target="lapack_dgesdd_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={mode = 65 : ui8}
  sv = f64[4] get-tuple-element(s), index=1
  u = f64[4,4] get-tuple-element(s), index=2
  vt = f64[4,4] get-tuple-element(s), index=3
  au = f64[4,4] abs(u)
  avt = f64[4,4] abs(vt)
  ROOT r = (f64[4], f64[4,4], f64[4,4]) tuple(sv, au, avt)
)",
        {Random(ElementType::kF64, {4, 4})}, kF64);
  Check(R"(  a = f64[3,6] parameter(0)
  s = (f64[3,6], f64[3], f64[3,3], f64[6,6], s32[]) custom-call(a), custom_call_target="lapack_dgesdd_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={mode = 78 : ui8}
  ROOT sv = f64[3] get-tuple-element(s), index=1
)",
        {Random(ElementType::kF64, {3, 6})}, kF64);
}

// The complex routines (getrf, geqrf, ungqr, heevd, gesdd): LU, R, tau and
// Q as they are, eigen- and singular vectors by magnitude (unique up to a
// phase).
TEST_F(LapackE2ETest, ComplexRoutines) {
  Check(R"(  a = c64[2,3,4] parameter(0)
  ROOT lu = (c64[2,3,4], s32[2,3], s32[2]) custom-call(a), custom_call_target="lapack_cgetrf_ffi", api_version=API_VERSION_TYPED_FFI
)",
        {Random(ElementType::kC64, {2, 3, 4})}, kF32);
  Check(R"(  a = c128[4,3] parameter(0)
  qr = (c128[4,3], c128[3]) custom-call(a), custom_call_target="lapack_zgeqrf_ffi", api_version=API_VERSION_TYPED_FFI
  r = c128[4,3] get-tuple-element(qr), index=0
  tau = c128[3] get-tuple-element(qr), index=1
  q = c128[4,3] custom-call(r, tau), custom_call_target="lapack_zungqr_ffi", api_version=API_VERSION_TYPED_FFI
  ROOT t = (c128[4,3], c128[3], c128[4,3]) tuple(r, tau, q)
)",
        {Random(ElementType::kC128, {4, 3})}, kF64);
  Check(R"(  a = c64[2,3,3] parameter(0)
  e = (c64[2,3,3], f32[2,3], s32[2]) custom-call(a), custom_call_target="lapack_cheevd_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={mode = 86 : ui8, uplo = 76 : ui8}
  v = c64[2,3,3] get-tuple-element(e), index=0
  w = f32[2,3] get-tuple-element(e), index=1
  av = f32[2,3,3] abs(v)
  ROOT r = (f32[2,3], f32[2,3,3]) tuple(w, av)
)",
        {Random(ElementType::kC64, {2, 3, 3})}, kF32);
  Check(R"(  a = c128[3,5] parameter(0)
  s = (c128[3,5], f64[3], c128[3,3], c128[3,5], s32[]) custom-call(a), custom_call_target="lapack_zgesdd_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={mode = 83 : ui8}
  sv = f64[3] get-tuple-element(s), index=1
  u = c128[3,3] get-tuple-element(s), index=2
  vt = c128[3,5] get-tuple-element(s), index=3
  au = f64[3,3] abs(u)
  avt = f64[3,5] abs(vt)
  ROOT r = (f64[3], f64[3,3], f64[3,5]) tuple(sv, au, avt)
)",
        {Random(ElementType::kC128, {3, 5})}, kF64);
}

// An empty batch runs nothing.
TEST_F(LapackE2ETest, EmptyBatch) {
  Check(R"(  a = f32[0,3,3] parameter(0)
  ROOT lu = (f32[0,3,3], s32[0,3], s32[0]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", api_version=API_VERSION_TYPED_FFI
)",
        {Literal(Shape(ElementType::kF32, {0, 3, 3}))}, kF32);
}

TEST_F(LapackE2ETest, UnknownTargetIsAOneLineErrorNamingIt) {
  std::unique_ptr<hlo::HloModule> module = Parse(R"(  a = c64[2,2] parameter(0)
  ROOT ev = (c64[2], c64[2,2], c64[2,2], s32[]) custom-call(a), custom_call_target="lapack_cgeev_ffi", api_version=API_VERSION_TYPED_FFI
)");
  ASSERT_TRUE(module);
  Literal a{Shape(ElementType::kC64, {2, 2})};
  std::vector<Literal> args;
  args.push_back(std::move(a));
  StatusOr<tools::DeviceRunResult> r = tools::CompileAndRun(*module, args, *device_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("custom-call target 'lapack_cgeev_ffi'"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
}

TEST_F(LapackE2ETest, MismatchedResultIsAnError) {
  // ipiv must hold min(m, n) = 3 values.
  std::unique_ptr<hlo::HloModule> module = Parse(R"(  a = f64[3,3] parameter(0)
  ROOT lu = (f64[3,3], s32[2], s32[]) custom-call(a), custom_call_target="lapack_dgetrf_ffi"
)");
  ASSERT_TRUE(module);
  std::vector<Literal> args;
  args.push_back(Random(ElementType::kF64, {3, 3}));
  StatusOr<tools::DeviceRunResult> r = tools::CompileAndRun(*module, args, *device_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ipiv"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace kiln::testing
