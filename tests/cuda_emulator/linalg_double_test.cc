// The emulator's cuSOLVER double (potrf; getrf, geqrf, orgqr, syevd and
// gesvd by its own algorithms) and the cuBLAS double's trsm,
// reached as the runtime reaches them: the emulator library opened by
// kernels::CusolverLibrary / CublasLibrary, handles and scratch from
// runtime::CudaBackend. Column-major calls with hand-computed results,
// potrf's info in device memory, cuSOLVER's and cuBLAS' argument checks,
// the modeled time of one call, then kernels::CudaCholesky and
// CudaTriangularSolve on row-major thunks (the triangle and side mapping).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels_lib/cuda_linalg.h"
#include "tests/cuda_emulator/backend_test_util.h"

namespace kiln {
namespace {

namespace th = ::kiln::thunks;

class LinalgDoubleTest : public testing::EmulatedBackendTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(CreateBackend());
    auto cusolver = backend_->Cusolver();
    ASSERT_TRUE(cusolver.ok()) << cusolver.status().message();
    cusolver_ = *cusolver;
    auto solver_handle = backend_->CusolverHandle(0);
    ASSERT_TRUE(solver_handle.ok()) << solver_handle.status().message();
    solver_ = *solver_handle;
    auto cublas = backend_->Cublas();
    ASSERT_TRUE(cublas.ok()) << cublas.status().message();
    cublas_ = *cublas;
    auto blas_handle = backend_->CublasHandle(0);
    ASSERT_TRUE(blas_handle.ok()) << blas_handle.status().message();
    blas_ = *blas_handle;
  }

  template <typename T>
  T* Ptr(CUdeviceptr p) {
    return reinterpret_cast<T*>(p);
  }
  kernels::DeviceScratchFn Scratch() {
    return [this](uint64_t bytes) -> StatusOr<uint64_t> {
      KILN_ASSIGN_OR_RETURN(CUdeviceptr p, backend_->LibraryScratch(0, bytes));
      return static_cast<uint64_t>(p);
    };
  }

  const kernels::CusolverLibrary* cusolver_ = nullptr;
  const kernels::CublasLibrary* cublas_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  cublasHandle_t blas_ = nullptr;
};

// Column-major [[4,12,-16],[12,37,-43],[-16,-43,98]] (symmetric, so the
// same numbers) with 7s above the diagonal: L = [[2,0,0],[6,1,0],[-8,5,3]].
const std::vector<double> kLowerColumnMajor = {4, 12, -16, 7, 37, -43, 7, 7, 98};

TEST_F(LinalgDoubleTest, PotrfFactorsTheTriangleAndReportsInfo) {
  CUdeviceptr a = Upload(kLowerColumnMajor);
  CUdeviceptr info = Upload(std::vector<int>{-1});
  int lwork = 0;
  ASSERT_EQ(cusolver_->cusolverDnDpotrf_bufferSize(solver_, CUBLAS_FILL_MODE_LOWER, 3, Ptr<double>(a), 3, &lwork),
            CUSOLVER_STATUS_SUCCESS);
  ASSERT_GE(lwork, 1);
  CUdeviceptr work = Upload(std::vector<double>(lwork));
  ASSERT_EQ(cusolver_->cusolverDnDpotrf(solver_, CUBLAS_FILL_MODE_LOWER, 3, Ptr<double>(a), 3, Ptr<double>(work),
                                        lwork, Ptr<int>(info)),
            CUSOLVER_STATUS_SUCCESS);
  // Column-major L; the 7s above the diagonal are untouched.
  EXPECT_EQ(Download<double>(a, 9), (std::vector<double>{2, 6, -8, 7, 1, 5, 7, 7, 3}));
  EXPECT_EQ(Download<int>(info, 1), std::vector<int>{0});
  // [[1,2],[2,1]]: the leading minor of order 2 is -3.
  CUdeviceptr bad = Upload(std::vector<float>{1, 2, 2, 1});
  CUdeviceptr fwork = Upload(std::vector<float>(lwork));
  ASSERT_EQ(cusolver_->cusolverDnSpotrf(solver_, CUBLAS_FILL_MODE_UPPER, 2, Ptr<float>(bad), 2, Ptr<float>(fwork),
                                        lwork, Ptr<int>(info)),
            CUSOLVER_STATUS_SUCCESS);
  EXPECT_EQ(Download<int>(info, 1), std::vector<int>{2});
}

TEST_F(LinalgDoubleTest, PotrfArgumentChecks) {
  CUdeviceptr a = Upload(kLowerColumnMajor);
  CUdeviceptr info = Upload(std::vector<int>{-1});
  CUdeviceptr work = Upload(std::vector<double>(3));
  cusolverStatus_t s = cusolver_->cusolverDnDpotrf(solver_, CUBLAS_FILL_MODE_LOWER, 3, Ptr<double>(a), 2,
                                                   Ptr<double>(work), 3, Ptr<int>(info));
  EXPECT_EQ(s, CUSOLVER_STATUS_INVALID_VALUE);
  EXPECT_EQ(cusolver_->StatusText(s), "CUSOLVER_STATUS_INVALID_VALUE: cusolverDnDpotrf: lda 2 < max(1, 3)");
  // The double asks for n elements of workspace; fewer are refused.
  s = cusolver_->cusolverDnDpotrf(solver_, CUBLAS_FILL_MODE_LOWER, 3, Ptr<double>(a), 3, Ptr<double>(work), 2,
                                  Ptr<int>(info));
  EXPECT_EQ(s, CUSOLVER_STATUS_INVALID_VALUE);
  EXPECT_NE(cusolver_->StatusText(s).find("Lwork 2 < the 3 elements"), std::string::npos) << cusolver_->StatusText(s);
  s = cusolver_->cusolverDnDpotrf(solver_, CUBLAS_FILL_MODE_FULL, 3, Ptr<double>(a), 3, Ptr<double>(work), 3,
                                  Ptr<int>(info));
  EXPECT_EQ(s, CUSOLVER_STATUS_INVALID_VALUE);
  // Nothing was computed.
  EXPECT_EQ(Download<double>(a, 9), kLowerColumnMajor);
}

// Column-major [[1,2],[3,4]]: row 2 is the pivot, l21 = 1/3, u22 = 2/3;
// [[1,2],[2,4]] is singular: info 2 (the second pivot is exactly zero).
TEST_F(LinalgDoubleTest, GetrfPivotsAndInfo) {
  CUdeviceptr a = Upload(std::vector<double>{1, 3, 2, 4});
  CUdeviceptr ipiv = Upload(std::vector<int>{0, 0});
  CUdeviceptr info = Upload(std::vector<int>{-1});
  int lwork = 0;
  ASSERT_EQ(cusolver_->cusolverDnDgetrf_bufferSize(solver_, 2, 2, Ptr<double>(a), 2, &lwork),
            CUSOLVER_STATUS_SUCCESS);
  CUdeviceptr work = Upload(std::vector<double>(lwork));
  ASSERT_EQ(cusolver_->cusolverDnDgetrf(solver_, 2, 2, Ptr<double>(a), 2, Ptr<double>(work), Ptr<int>(ipiv),
                                        Ptr<int>(info)),
            CUSOLVER_STATUS_SUCCESS);
  std::vector<double> lu = Download<double>(a, 4);
  EXPECT_EQ(lu[0], 3);
  EXPECT_NEAR(lu[1], 1.0 / 3, 1e-15);
  EXPECT_EQ(lu[2], 4);
  EXPECT_NEAR(lu[3], 2.0 / 3, 1e-15);
  EXPECT_EQ(Download<int>(ipiv, 2), (std::vector<int>{2, 2}));
  EXPECT_EQ(Download<int>(info, 1), std::vector<int>{0});
  CUdeviceptr singular = Upload(std::vector<double>{1, 2, 2, 4});
  ASSERT_EQ(cusolver_->cusolverDnDgetrf(solver_, 2, 2, Ptr<double>(singular), 2, Ptr<double>(work), Ptr<int>(ipiv),
                                        Ptr<int>(info)),
            CUSOLVER_STATUS_SUCCESS);
  EXPECT_EQ(Download<double>(singular, 4), (std::vector<double>{2, 0.5, 4, 0}));
  EXPECT_EQ(Download<int>(info, 1), std::vector<int>{2});
}

// (3, 4)^T: LAPACK's reflector has beta = -5, tau = 1.6, v = (1, 0.5), and
// Q's column is H e1 = (-0.6, -0.8).
TEST_F(LinalgDoubleTest, GeqrfAndOrgqrFollowLapack) {
  CUdeviceptr a = Upload(std::vector<float>{3, 4});
  CUdeviceptr tau = Upload(std::vector<float>{0});
  CUdeviceptr info = Upload(std::vector<int>{-1});
  int lwork = 0;
  ASSERT_EQ(cusolver_->cusolverDnSgeqrf_bufferSize(solver_, 2, 1, Ptr<float>(a), 2, &lwork), CUSOLVER_STATUS_SUCCESS);
  CUdeviceptr work = Upload(std::vector<float>(lwork));
  ASSERT_EQ(cusolver_->cusolverDnSgeqrf(solver_, 2, 1, Ptr<float>(a), 2, Ptr<float>(tau), Ptr<float>(work), lwork,
                                        Ptr<int>(info)),
            CUSOLVER_STATUS_SUCCESS);
  EXPECT_EQ(Download<float>(a, 2), (std::vector<float>{-5, 0.5}));
  EXPECT_FLOAT_EQ(Download<float>(tau, 1)[0], 1.6f);
  ASSERT_EQ(cusolver_->cusolverDnSorgqr(solver_, 2, 1, 1, Ptr<float>(a), 2, Ptr<float>(tau), Ptr<float>(work), lwork,
                                        Ptr<int>(info)),
            CUSOLVER_STATUS_SUCCESS);
  std::vector<float> q = Download<float>(a, 2);
  EXPECT_NEAR(q[0], -0.6f, 1e-6);
  EXPECT_NEAR(q[1], -0.8f, 1e-6);
  EXPECT_EQ(Download<int>(info, 1), std::vector<int>{0});
}

// [[2,1],[1,2]] has eigenvalues 1 and 3, eigenvectors (1, -1) and (1, 1)
// over sqrt(2); the upper triangle alone is read (the -9 is not).
TEST_F(LinalgDoubleTest, SyevdReadsOneTriangle) {
  CUdeviceptr a = Upload(std::vector<double>{2, -9, 1, 2});
  CUdeviceptr w = Upload(std::vector<double>{0, 0});
  CUdeviceptr info = Upload(std::vector<int>{-1});
  int lwork = 0;
  ASSERT_EQ(cusolver_->cusolverDnDsyevd_bufferSize(solver_, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, 2,
                                                   Ptr<double>(a), 2, Ptr<double>(w), &lwork),
            CUSOLVER_STATUS_SUCCESS);
  CUdeviceptr work = Upload(std::vector<double>(lwork));
  ASSERT_EQ(cusolver_->cusolverDnDsyevd(solver_, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, 2, Ptr<double>(a),
                                        2, Ptr<double>(w), Ptr<double>(work), lwork, Ptr<int>(info)),
            CUSOLVER_STATUS_SUCCESS);
  std::vector<double> values = Download<double>(w, 2), vectors = Download<double>(a, 4);
  EXPECT_NEAR(values[0], 1, 1e-14);
  EXPECT_NEAR(values[1], 3, 1e-14);
  const double r = 1 / std::sqrt(2.0);
  for (double v : vectors) EXPECT_NEAR(std::abs(v), r, 1e-14);
  EXPECT_NEAR(vectors[0] * vectors[1], -0.5, 1e-14);  // (1, -1) up to sign
  EXPECT_EQ(Download<int>(info, 1), std::vector<int>{0});
}

// diag(3, 4) padded to 3 x 2: singular values 4, 3; V^H swaps the axes. A
// wide matrix is refused as cuSOLVER's gesvd refuses it.
TEST_F(LinalgDoubleTest, GesvdValuesVectorsAndShapeRule) {
  CUdeviceptr a = Upload(std::vector<double>{3, 0, 0, 0, 4, 0});
  CUdeviceptr s = Upload(std::vector<double>{0, 0});
  CUdeviceptr u = Upload(std::vector<double>(9));
  CUdeviceptr vt = Upload(std::vector<double>(4));
  CUdeviceptr info = Upload(std::vector<int>{-1});
  int lwork = 0;
  ASSERT_EQ(cusolver_->cusolverDnDgesvd_bufferSize(solver_, 3, 2, &lwork), CUSOLVER_STATUS_SUCCESS);
  CUdeviceptr work = Upload(std::vector<double>(lwork));
  ASSERT_EQ(cusolver_->cusolverDnDgesvd(solver_, 'A', 'A', 3, 2, Ptr<double>(a), 3, Ptr<double>(s), Ptr<double>(u), 3,
                                        Ptr<double>(vt), 2, Ptr<double>(work), lwork, nullptr, Ptr<int>(info)),
            CUSOLVER_STATUS_SUCCESS);
  EXPECT_EQ(Download<double>(s, 2), (std::vector<double>{4, 3}));
  std::vector<double> v = Download<double>(vt, 4), left = Download<double>(u, 9);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(std::abs(v[i]), i == 1 || i == 2 ? 1 : 0) << i;
  for (int i = 0; i < 9; ++i) EXPECT_EQ(std::abs(left[i]), i == 1 || i == 3 || i == 8 ? 1 : 0) << i;
  cusolverStatus_t status =
      cusolver_->cusolverDnDgesvd(solver_, 'S', 'S', 2, 3, Ptr<double>(a), 2, Ptr<double>(s), Ptr<double>(u), 2,
                                  Ptr<double>(vt), 2, Ptr<double>(work), lwork, nullptr, Ptr<int>(info));
  EXPECT_EQ(status, CUSOLVER_STATUS_INVALID_VALUE);
  EXPECT_NE(cusolver_->StatusText(status).find("gesvd only supports m >= n"), std::string::npos);
}

TEST_F(LinalgDoubleTest, TrsmColumnMajor) {
  // Column-major lower a = [[2,0],[1,4]] (99 unread), left: a x = [[4,2],[6,9]]
  // -> [[2,1],[1,2]] (B column-major: columns [4,6] and [2,9]).
  CUdeviceptr a = Upload(std::vector<double>{2, 1, 99, 4});
  CUdeviceptr b = Upload(std::vector<double>{4, 6, 2, 9});
  const double one = 1;
  ASSERT_EQ(cublas_->cublasDtrsm_v2(blas_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                    CUBLAS_DIAG_NON_UNIT, 2, 2, &one, Ptr<double>(a), 2, Ptr<double>(b), 2),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(Download<double>(b, 4), (std::vector<double>{2, 1, 1, 2}));
  // alpha = 0 zeroes B without solving.
  const double zero = 0;
  ASSERT_EQ(cublas_->cublasDtrsm_v2(blas_, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT,
                                    2, 2, &zero, Ptr<double>(a), 2, Ptr<double>(b), 2),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(Download<double>(b, 4), (std::vector<double>(4, 0.0)));
  cublasStatus_t s = cublas_->cublasDtrsm_v2(blas_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                             CUBLAS_DIAG_NON_UNIT, 2, 2, &one, Ptr<double>(a), 2, Ptr<double>(b), 1);
  EXPECT_EQ(s, CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublas_->StatusText(s), "CUBLAS_STATUS_INVALID_VALUE: cublasDtrsm: ldb 1 < max(1, 2)");
}

TEST_F(LinalgDoubleTest, OneCallIsOneModeledLaunch) {
  // A 3 x 3 potrf is one panel of 3 launches (6 us), a 2 x 2 trsm one panel
  // of 2 (4 us); their flops and bytes add well under a nanosecond.
  const runtime::CudaDriver& d = backend_->driver();
  ASSERT_NE(d.kilnEmuEventCounters, nullptr);
  CUevent e0, e1, e2;
  for (CUevent* e : {&e0, &e1, &e2}) ASSERT_EQ(d.cuEventCreate(e, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  CUdeviceptr a = Upload(kLowerColumnMajor), info = Upload(std::vector<int>{-1});
  CUdeviceptr work = Upload(std::vector<double>(3)), b = Upload(std::vector<double>{4, 6, 2, 9});
  const double one = 1;
  ASSERT_EQ(d.cuEventRecord(e0, backend_->stream(0)), CUDA_SUCCESS);
  ASSERT_EQ(cusolver_->cusolverDnDpotrf(solver_, CUBLAS_FILL_MODE_LOWER, 3, Ptr<double>(a), 3, Ptr<double>(work), 3,
                                        Ptr<int>(info)),
            CUSOLVER_STATUS_SUCCESS);
  ASSERT_EQ(d.cuEventRecord(e1, backend_->stream(0)), CUDA_SUCCESS);
  ASSERT_EQ(cublas_->cublasDtrsm_v2(blas_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                    CUBLAS_DIAG_NON_UNIT, 2, 2, &one, Ptr<double>(a), 3, Ptr<double>(b), 2),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(d.cuEventRecord(e2, backend_->stream(0)), CUDA_SUCCESS);
  ASSERT_EQ(d.cuStreamSynchronize(backend_->stream(0)), CUDA_SUCCESS);
  KilnEmuCounters potrf{}, trsm{};
  ASSERT_EQ(d.kilnEmuEventCounters(e0, e1, &potrf), CUDA_SUCCESS);
  ASSERT_EQ(d.kilnEmuEventCounters(e1, e2, &trsm), CUDA_SUCCESS);
  EXPECT_EQ(potrf.launches, 1u);
  EXPECT_EQ(potrf.model_ns, 6000u);
  EXPECT_EQ(trsm.launches, 1u);
  EXPECT_EQ(trsm.model_ns, 4000u);
  for (CUevent e : {e0, e1, e2}) d.cuEventDestroy(e);
}

TEST_F(LinalgDoubleTest, RowMajorThunks) {
  // Row-major lower [[4,.,.],[12,37,.],[-16,-43,98]] (7s unread) in batch 0,
  // [[1,.],[2,1]] padded to 3x3 with an identity corner in batch 1 (info 2).
  th::CholeskyThunk c{{}, {}, ElementType::kF64, 3, 2, true};
  CUdeviceptr a = Upload(std::vector<double>{4, 7, 7, 12, 37, 7, -16, -43, 98, 1, 7, 7, 2, 1, 7, 0, 0, 1});
  CUdeviceptr info = Upload(std::vector<int>{-1, -1});
  ASSERT_TRUE(kernels::CudaCholesky(*cusolver_, solver_, c, a, info, Scratch()).ok());
  std::vector<double> l = Download<double>(a, 18);
  EXPECT_EQ(std::vector<double>(l.begin(), l.begin() + 9), (std::vector<double>{2, 7, 7, 6, 1, 7, -8, 5, 3}));
  EXPECT_EQ(Download<int>(info, 2), (std::vector<int>{0, 2}));

  // Row-major lower [[2,0],[1,4]]; right side, transposed: x a^T = [5, 8]
  // -> [2.5, 1.375]; left: a x = [[4,2],[6,9]] -> [[2,1],[1,2]].
  CUdeviceptr ta = Upload(std::vector<float>{2, 99, 1, 4});
  CUdeviceptr row = Upload(std::vector<float>{5, 8});
  th::TriangularSolveThunk right{{}, {}, ElementType::kF32, 1, 2, 1, false, true, false,
                                 th::TriangularSolveTranspose::kTranspose};
  ASSERT_TRUE(kernels::CudaTriangularSolve(*cublas_, blas_, right, ta, row).ok());
  EXPECT_EQ(Download<float>(row, 2), (std::vector<float>{2.5f, 1.375f}));
  CUdeviceptr rhs = Upload(std::vector<float>{4, 2, 6, 9});
  th::TriangularSolveThunk left{{}, {}, ElementType::kF32, 2, 2, 1, true, true, false,
                                th::TriangularSolveTranspose::kNoTranspose};
  ASSERT_TRUE(kernels::CudaTriangularSolve(*cublas_, blas_, left, ta, rhs).ok());
  EXPECT_EQ(Download<float>(rhs, 4), (std::vector<float>{2, 1, 1, 2}));
}

}  // namespace
}  // namespace kiln
