// The emulator's cuBLASLt double, reached as the runtime reaches it: the
// emulator library opened by kernels::CublasLtLibrary, the handle and
// library scratch from runtime::CudaBackend. An FP8 matmul with scale
// pointers and hand-computed results, the argument checks (bad layouts are
// CUBLAS_STATUS_INVALID_VALUE, forms FP8 kernels do not run
// CUBLAS_STATUS_NOT_SUPPORTED, with the reason), the workspace the
// heuristic asks for, and kernels::CudaFp8Gemm on row-major thunks.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstring>
#include <vector>

#include "cuda_emulator/include/kiln_cuda_emulator.h"

#include "kernels_lib/cuda_fp8_gemm.h"
#include "tests/cuda_emulator/backend_test_util.h"

namespace kiln {
namespace {

// Bit patterns: e4m3fn 1.0 = 0 0111 000, e5m2 2.0 = 0 10000 00, e5m2 -1.5 =
// 1 01111 10.
constexpr uint8_t kE4M3One = 0x38;
constexpr uint8_t kE5M2Two = 0x40;
constexpr uint8_t kE5M2MinusOneAndHalf = 0xBE;

class CublasLtDoubleTest : public testing::EmulatedBackendTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(CreateBackend());
    auto lt = backend_->CublasLt();
    ASSERT_TRUE(lt.ok()) << lt.status().message();
    lt_ = *lt;
    auto handle = backend_->CublasLtHandle();
    ASSERT_TRUE(handle.ok()) << handle.status().message();
    handle_ = *handle;
  }
  void TearDown() override {
    for (cublasLtMatrixLayout_t l : layouts_) lt_->cublasLtMatrixLayoutDestroy(l);
    if (desc_) lt_->cublasLtMatmulDescDestroy(desc_);
    EmulatedBackendTest::TearDown();
  }

  static void* Ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

  cublasLtMatrixLayout_t Layout(cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld) {
    cublasLtMatrixLayout_t l = nullptr;
    EXPECT_EQ(lt_->cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld), CUBLAS_STATUS_SUCCESS);
    layouts_.push_back(l);
    return l;
  }
  // An f32-compute matmul descriptor with transa / transb.
  void Describe(cublasOperation_t transa, cublasOperation_t transb) {
    ASSERT_EQ(lt_->cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(lt_->cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(lt_->cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb),
              CUBLAS_STATUS_SUCCESS);
  }
  void SetScale(cublasLtMatmulDescAttributes_t attr, CUdeviceptr scale) {
    const void* p = Ptr(scale);
    ASSERT_EQ(lt_->cublasLtMatmulDescSetAttribute(desc_, attr, &p, sizeof p), CUBLAS_STATUS_SUCCESS);
  }
  // The heuristic's first algorithm under a workspace limit of `limit`.
  cublasStatus_t Heuristic(cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                           uint64_t limit, cublasLtMatmulHeuristicResult_t* result) {
    cublasLtMatmulPreference_t pref = nullptr;
    EXPECT_EQ(lt_->cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(lt_->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
                                                        sizeof limit),
              CUBLAS_STATUS_SUCCESS);
    int found = 0;
    cublasStatus_t s = lt_->cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a, b, c, c, pref, 1, result, &found);
    status_text_ = lt_->StatusText(s);  // before the next call clears the detail
    lt_->cublasLtMatmulPreferenceDestroy(pref);
    if (s == CUBLAS_STATUS_SUCCESS) EXPECT_EQ(found, 1);
    return s;
  }

  const kernels::CublasLtLibrary* lt_ = nullptr;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  std::vector<cublasLtMatrixLayout_t> layouts_;
  std::string status_text_;  // of the last Heuristic call
};

// A (k x m = 16 x 4, e4m3fn, read transposed) has ones at rows i and i + 4
// of column i; B (16 x 2, e5m2) is 2 in column 0 and -1.5 in column 1. So
// op(A) op(B) is 4 in column 0 and -3 in column 1; with scales a = 2,
// b = 0.5 and d = 3 the f32 D is 12 and -9.
TEST_F(CublasLtDoubleTest, Fp8MatmulWithScalePointers) {
  std::vector<uint8_t> a(16 * 4, 0);
  for (int i = 0; i < 4; ++i) a[i * 16 + i] = a[i * 16 + i + 4] = kE4M3One;
  std::vector<uint8_t> b(16 * 2);
  for (int q = 0; q < 16; ++q) b[q] = kE5M2Two, b[16 + q] = kE5M2MinusOneAndHalf;
  CUdeviceptr da = Upload(a), db = Upload(b), dd = Upload(std::vector<float>(8, -7.0f));
  Describe(CUBLAS_OP_T, CUBLAS_OP_N);
  SetScale(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, Upload(std::vector<float>{2.0f}));
  SetScale(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, Upload(std::vector<float>{0.5f}));
  SetScale(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, Upload(std::vector<float>{3.0f}));
  cublasLtMatrixLayout_t la = Layout(CUDA_R_8F_E4M3, 16, 4, 16), lb = Layout(CUDA_R_8F_E5M2, 16, 2, 16),
                         lc = Layout(CUDA_R_32F, 4, 2, 4);
  cublasLtMatmulHeuristicResult_t r{};
  ASSERT_EQ(Heuristic(la, lb, lc, uint64_t{32} << 20, &r), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(r.workspaceSize, uint64_t{1} << 20);  // the emulated algorithm's ask
  auto ws = backend_->LibraryScratch(0, r.workspaceSize);
  ASSERT_TRUE(ws.ok());
  const float alpha = 1, beta = 0;
  ASSERT_EQ(lt_->cublasLtMatmul(handle_, desc_, &alpha, Ptr(da), la, Ptr(db), lb, &beta, Ptr(dd), lc, Ptr(dd), lc,
                                &r.algo, Ptr(*ws), r.workspaceSize, backend_->stream(0)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(Download<float>(dd, 8), (std::vector<float>{12, 12, 12, 12, -9, -9, -9, -9}));
  // A workspace smaller than the algorithm asked for is refused.
  cublasStatus_t s = lt_->cublasLtMatmul(handle_, desc_, &alpha, Ptr(da), la, Ptr(db), lb, &beta, Ptr(dd), lc,
                                         Ptr(dd), lc, &r.algo, Ptr(*ws), 1024, backend_->stream(0));
  EXPECT_EQ(s, CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_NE(lt_->StatusText(s).find("needs 1048576 bytes of workspace, got 1024"), std::string::npos)
      << lt_->StatusText(s);
  // A smaller workspace limit gets an algorithm that asks for no more.
  ASSERT_EQ(Heuristic(la, lb, lc, 4096, &r), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(r.workspaceSize, 4096u);
}

// Forms FP8 kernels do not run are NOT_SUPPORTED; layouts that do not
// describe a matmul are INVALID_VALUE; each says why.
TEST_F(CublasLtDoubleTest, ArgumentChecks) {
  cublasLtMatmulHeuristicResult_t r{};
  Describe(CUBLAS_OP_N, CUBLAS_OP_N);  // NN: not the TN form
  cublasLtMatrixLayout_t a_nn = Layout(CUDA_R_8F_E4M3, 16, 16, 16), b = Layout(CUDA_R_8F_E4M3, 16, 16, 16),
                         c = Layout(CUDA_R_32F, 16, 16, 16);
  EXPECT_EQ(Heuristic(a_nn, b, c, 0, &r), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_NE(status_text_.find("TN form"), std::string::npos) << status_text_;
  lt_->cublasLtMatmulDescDestroy(desc_);
  Describe(CUBLAS_OP_T, CUBLAS_OP_N);
  cublasLtMatrixLayout_t e5 = Layout(CUDA_R_8F_E5M2, 16, 16, 16);
  EXPECT_EQ(Heuristic(e5, e5, c, 0, &r), CUBLAS_STATUS_NOT_SUPPORTED);  // no E5M2 x E5M2
  EXPECT_NE(status_text_.find("E5M2 x E5M2"), std::string::npos);
  cublasLtMatrixLayout_t bf16_ab = Layout(CUDA_R_16BF, 16, 16, 16);
  EXPECT_EQ(Heuristic(bf16_ab, bf16_ab, c, 0, &r), CUBLAS_STATUS_NOT_SUPPORTED);  // FP8 only
  cublasLtMatrixLayout_t odd_ld = Layout(CUDA_R_8F_E4M3, 16, 16, 24);  // 24-byte columns
  EXPECT_EQ(Heuristic(odd_ld, b, c, 0, &r), CUBLAS_STATUS_NOT_SUPPORTED);
  cublasLtMatrixLayout_t short_ld = Layout(CUDA_R_8F_E4M3, 32, 16, 16);  // ld < rows
  cublasLtMatrixLayout_t b32 = Layout(CUDA_R_8F_E4M3, 32, 16, 32);
  EXPECT_EQ(Heuristic(short_ld, b32, c, 0, &r), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_NE(status_text_.find("leading dimension 16 < rows 32"), std::string::npos) << status_text_;
  cublasLtMatrixLayout_t k32 = Layout(CUDA_R_8F_E4M3, 32, 16, 32);
  EXPECT_EQ(Heuristic(k32, b, c, 0, &r), CUBLAS_STATUS_INVALID_VALUE);  // k 32 against 16
  const int32_t two = 2;
  ASSERT_EQ(lt_->cublasLtMatrixLayoutSetAttribute(b, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &two, sizeof two),
            CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayout_t a = Layout(CUDA_R_8F_E4M3, 16, 16, 16);
  EXPECT_EQ(Heuristic(a, b, c, 0, &r), CUBLAS_STATUS_INVALID_VALUE);  // batch counts differ
  EXPECT_EQ(lt_->cublasLtMatrixLayoutSetAttribute(b, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &two, 8),
            CUBLAS_STATUS_INVALID_VALUE);  // wrong attribute size
  const int32_t epilogue = CUBLASLT_EPILOGUE_RELU;
  EXPECT_EQ(lt_->cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
            CUBLAS_STATUS_NOT_SUPPORTED);
}

// kernels::CudaFp8Gemm on row-major thunks: lhs [m,k] x rhs [n,k] -> out
// [m,n], two batches, bf16 result. lhs rows are all 1 (e4m3fn) in batch 0
// and all 2 in batch 1 (e4m3fn 2.0 = 0 1000 000); rhs row j is the e5m2
// value v_j (bit patterns 0x00, 0x34 = 0 01101 00 = 0.25, 0x38 = 0.5, 0x3A
// = 0 01110 10 = 0.75, 0x3C = 1, ..., 0x47 = 0 10001 11 = 7) in all 16
// columns. So out[b][i][j] = 16 (b + 1) v_j, exact in bf16.
TEST_F(CublasLtDoubleTest, CudaFp8GemmOnARowMajorThunk) {
  const int m = 2, n = 16, k = 16, batch = 2;
  std::vector<uint8_t> lhs(batch * m * k);
  for (int i = 0; i < batch * m * k; ++i) lhs[i] = i < m * k ? kE4M3One : 0x40;
  const uint8_t bits[] = {0x00, 0x34, 0x38, 0x3A, 0x3C, 0x3D, 0x3E, 0x3F,
                          0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47};
  const double values[] = {0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7};
  std::vector<uint8_t> rhs(batch * n * k);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int q = 0; q < k; ++q) rhs[(b * n + j) * k + q] = bits[j];
  thunks::GemmThunk g;
  g.lhs_type = ElementType::kF8E4M3FN;
  g.rhs_type = ElementType::kF8E5M2;
  g.out_type = ElementType::kBF16;
  g.m = m, g.n = n, g.k = k, g.batch = batch;
  g.rhs_transposed = true;
  g.lhs_leading_dim = k, g.rhs_leading_dim = k, g.out_leading_dim = n;
  g.lhs_batch_stride = m * k, g.rhs_batch_stride = n * k, g.out_batch_stride = m * n;
  auto gemm = kernels::CudaFp8Gemm::Create(*lt_, handle_, g);
  ASSERT_TRUE(gemm.ok()) << gemm.status().message();
  CUdeviceptr out = Upload(std::vector<uint16_t>(batch * m * n, 0xFFFF));
  auto ws = backend_->LibraryScratch(0, (*gemm)->workspace_bytes());
  ASSERT_TRUE(ws.ok());
  Status run = (*gemm)->Run(backend_->stream(0), Upload(lhs), Upload(rhs), out, *ws);
  ASSERT_TRUE(run.ok()) << run.message();
  std::vector<uint16_t> got = Download<uint16_t>(out, batch * m * n);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        uint32_t bits = uint32_t{got[(b * m + i) * n + j]} << 16;
        float value;
        std::memcpy(&value, &bits, 4);
        EXPECT_EQ(value, 16.0 * (b + 1) * values[j]) << b << "," << i << "," << j;
      }
  // The descriptors go with the GEMM (the emulator's live-object count).
  auto live = reinterpret_cast<int (*)(KilnEmuLiveObjects*)>(
      dlsym(dlopen(KILN_CUDA_EMULATOR_PATH, RTLD_NOW | RTLD_NOLOAD), "kilnEmuLiveObjects"));
  ASSERT_NE(live, nullptr);
  KilnEmuLiveObjects with{}, without{};
  ASSERT_EQ(live(&with), 0);
  gemm->reset();
  ASSERT_EQ(live(&without), 0);
  EXPECT_EQ(with.library_descriptors - without.library_descriptors, 4u);  // the matmul and 3 layouts
  // Not the TN form: refused before any call.
  g.rhs_transposed = false;
  g.rhs_leading_dim = n;
  auto nn = kernels::CudaFp8Gemm::Create(*lt_, handle_, g);
  ASSERT_FALSE(nn.ok());
  EXPECT_NE(nn.status().message().find("outside the TN form"), std::string::npos) << nn.status().message();
}

}  // namespace
}  // namespace kiln
