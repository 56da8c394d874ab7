// CUDA FP8 GEMM through cuBLASLt; see cuda_fp8_gemm.h.
#include "kernels_lib/cuda_fp8_gemm.h"

#include <string>

#include "kernels_lib/gemm_plan.h"

namespace kiln::kernels {
namespace {

// cuBLASLt's data type of a GEMM element type.
cudaDataType_t LtType(ElementType type) {
  switch (type) {
    case ElementType::kF8E4M3FN: return CUDA_R_8F_E4M3;
    case ElementType::kF8E5M2: return CUDA_R_8F_E5M2;
    case ElementType::kBF16: return CUDA_R_16BF;
    case ElementType::kF16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

std::string TypesText(const thunks::GemmThunk& g) {
  return std::string(ElementTypeName(g.lhs_type)) + " x " + std::string(ElementTypeName(g.rhs_type)) + " -> " +
         std::string(ElementTypeName(g.out_type));
}

}  // namespace

StatusOr<std::unique_ptr<CudaFp8Gemm>> CudaFp8Gemm::Create(const CublasLtLibrary& lt, cublasLtHandle_t handle,
                                                          const thunks::GemmThunk& gemm) {
  if (!thunks::IsFp8Gemm(gemm)) return Error("Unimplemented: cuBLASLt fp8 gemm of " + TypesText(gemm));
  std::unique_ptr<CudaFp8Gemm> g(new CudaFp8Gemm(lt, handle));
  KILN_RETURN_IF_ERROR(g->Describe(gemm));
  if (!g->empty_) KILN_RETURN_IF_ERROR(g->ChooseAlgorithm());
  return g;
}

CudaFp8Gemm::~CudaFp8Gemm() {
  for (cublasLtMatrixLayout_t layout : {a_, b_, c_})
    if (layout) lt_.cublasLtMatrixLayoutDestroy(layout);
  if (matmul_) lt_.cublasLtMatmulDescDestroy(matmul_);
}

Status CudaFp8Gemm::Describe(const thunks::GemmThunk& gemm) {
  KILN_ASSIGN_OR_RETURN(ColumnMajorGemm c, PlanColumnMajorGemm(gemm));
  if (!c.transpose_a || c.transpose_b)
    return Error("Unimplemented: cuBLASLt fp8 gemm of " + TypesText(gemm) +
                 " outside the TN form (lhs [m,k], rhs [n,k])");
  empty_ = c.m == 0 || c.n == 0 || c.batch == 0;
  alpha_ = static_cast<float>(c.alpha);
  beta_ = static_cast<float>(c.beta);
  KILN_RETURN_IF_ERROR(
      lt_.Check(lt_.cublasLtMatmulDescCreate(&matmul_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate"));
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  KILN_RETURN_IF_ERROR(lt_.Check(
      lt_.cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa),
      "cublasLtMatmulDescSetAttribute(TRANSA)"));
  KILN_RETURN_IF_ERROR(lt_.Check(
      lt_.cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb),
      "cublasLtMatmulDescSetAttribute(TRANSB)"));
  // Column-major stored shapes: A (the rhs) k x m_c read transposed, B (the
  // lhs) k x n_c, C and D m_c x n_c.
  struct LayoutSpec {
    cublasLtMatrixLayout_t* layout;
    ElementType type;
    int64_t rows, cols, ld, stride;
  };
  const LayoutSpec specs[] = {{&a_, gemm.rhs_type, c.k, c.m, c.lda, c.stride_a},
                              {&b_, gemm.lhs_type, c.k, c.n, c.ldb, c.stride_b},
                              {&c_, gemm.out_type, c.m, c.n, c.ldc, c.stride_c}};
  const int32_t batch = static_cast<int32_t>(c.batch);
  for (const LayoutSpec& s : specs) {
    KILN_RETURN_IF_ERROR(lt_.Check(lt_.cublasLtMatrixLayoutCreate(s.layout, LtType(s.type), static_cast<uint64_t>(s.rows),
                                                                  static_cast<uint64_t>(s.cols), s.ld),
                                   "cublasLtMatrixLayoutCreate"));
    if (c.batch == 1) continue;
    KILN_RETURN_IF_ERROR(lt_.Check(
        lt_.cublasLtMatrixLayoutSetAttribute(*s.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch),
        "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)"));
    const int64_t stride = s.stride;
    KILN_RETURN_IF_ERROR(lt_.Check(lt_.cublasLtMatrixLayoutSetAttribute(
                                       *s.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
                                   "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)"));
  }
  return Status::Ok();
}

Status CudaFp8Gemm::ChooseAlgorithm() {
  cublasLtMatmulPreference_t preference = nullptr;
  KILN_RETURN_IF_ERROR(lt_.Check(lt_.cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate"));
  const uint64_t limit = kFp8GemmWorkspaceLimit;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  Status status = lt_.Check(lt_.cublasLtMatmulPreferenceSetAttribute(
                                preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit),
                            "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  if (status.ok())
    status = lt_.Check(
        lt_.cublasLtMatmulAlgoGetHeuristic(handle_, matmul_, a_, b_, c_, c_, preference, 1, &result, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  lt_.cublasLtMatmulPreferenceDestroy(preference);
  KILN_RETURN_IF_ERROR(status);
  if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS)
    return Error("cublasLtMatmulAlgoGetHeuristic found no fp8 algorithm: " + lt_.StatusText(result.state));
  algo_ = result.algo;
  workspace_bytes_ = result.workspaceSize;
  return Status::Ok();
}

Status CudaFp8Gemm::Run(cudaStream_t stream, uint64_t lhs, uint64_t rhs, uint64_t out, uint64_t workspace) const {
  if (empty_) return Status::Ok();
  auto ptr = [](uint64_t address) { return reinterpret_cast<void*>(address); };
  // The thunk's rhs is A and its lhs B (see gemm_plan.h); C is D.
  return lt_.Check(lt_.cublasLtMatmul(handle_, matmul_, &alpha_, ptr(rhs), a_, ptr(lhs), b_, &beta_, ptr(out), c_,
                                      ptr(out), c_, &algo_, ptr(workspace), workspace_bytes_, stream),
                   "cublasLtMatmul");
}

}  // namespace kiln::kernels
