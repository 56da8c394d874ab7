// CUDA GEMM through cuBLAS; see cuda_gemm.h.
#include "kernels_lib/cuda_gemm.h"

#include <cuComplex.h>

#include <limits>
#include <string>
#include <type_traits>

#include "kernels_lib/gemm_plan.h"

namespace kiln::kernels {
namespace {

bool FitsInt(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

cublasOperation_t Op(bool transpose) { return transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

// alpha and beta in the GEMM's scalar type (complex: alpha's imaginary
// part too).
template <typename T>
T Scalar(double real, double imag) {
  if constexpr (std::is_same_v<T, cuComplex>) return make_cuComplex(static_cast<float>(real), static_cast<float>(imag));
  else if constexpr (std::is_same_v<T, cuDoubleComplex>) return make_cuDoubleComplex(real, imag);
  else return static_cast<T>(real);
}

template <typename T, typename Fn>
cublasStatus_t Call(Fn fn, cublasHandle_t h, const ColumnMajorGemm& c, uint64_t a, uint64_t b,
                    uint64_t out) {
  T alpha = Scalar<T>(c.alpha, c.alpha_imag), beta = Scalar<T>(c.beta, 0);
  return fn(h, Op(c.transpose_a), Op(c.transpose_b), static_cast<int>(c.m), static_cast<int>(c.n),
            static_cast<int>(c.k), &alpha, reinterpret_cast<const T*>(a), static_cast<int>(c.lda),
            static_cast<long long>(c.stride_a), reinterpret_cast<const T*>(b),
            static_cast<int>(c.ldb), static_cast<long long>(c.stride_b), &beta,
            reinterpret_cast<T*>(out), static_cast<int>(c.ldc), static_cast<long long>(c.stride_c),
            static_cast<int>(c.batch));
}

// cublasGemmStridedBatchedEx with A and B of `in`, C of `out_type`, the
// scale type S of `compute` (alpha and beta converted to it).
template <typename S>
Status GemmEx(const CublasLibrary& cublas, cublasHandle_t handle, const ColumnMajorGemm& c, uint64_t a, uint64_t b,
              uint64_t out, cudaDataType in, cudaDataType out_type, cublasComputeType_t compute) {
  S alpha = static_cast<S>(c.alpha), beta = static_cast<S>(c.beta);
  return cublas.Check(
      cublas.cublasGemmStridedBatchedEx(
          handle, Op(c.transpose_a), Op(c.transpose_b), static_cast<int>(c.m), static_cast<int>(c.n),
          static_cast<int>(c.k), &alpha, reinterpret_cast<const void*>(a), in, static_cast<int>(c.lda),
          static_cast<long long>(c.stride_a), reinterpret_cast<const void*>(b), in, static_cast<int>(c.ldb),
          static_cast<long long>(c.stride_b), &beta, reinterpret_cast<void*>(out), out_type,
          static_cast<int>(c.ldc), static_cast<long long>(c.stride_c), static_cast<int>(c.batch), compute,
          CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx");
}

// s8 x s8 -> s32 on the int8 tensor cores: integer alpha and beta (the
// scale type of CUBLAS_COMPUTE_32I), exact wrapping sums. cuBLAS takes the
// "TN" form with lda and ldb multiples of 4, which DotCanonicalization
// produces (compiler/passes/int8_gemm.h); anything else is refused here
// rather than left to a slow or failing library path.
Status Int8Gemm(const CublasLibrary& cublas, cublasHandle_t handle, const ColumnMajorGemm& c, uint64_t a,
                uint64_t b, uint64_t out) {
  if (!c.transpose_a || c.transpose_b || c.lda % 4 != 0 || c.ldb % 4 != 0 ||
      (c.batch > 1 && (c.stride_a % 4 != 0 || c.stride_b % 4 != 0)))
    return Error("Unimplemented: int8 gemm outside cuBLAS' int8 form (rhs [n,k], lhs [m,k], k a multiple of 4)");
  if (c.alpha != static_cast<int32_t>(c.alpha) || c.beta != static_cast<int32_t>(c.beta))
    return Error("Unimplemented: int8 gemm with a non-integer alpha or beta");
  return GemmEx<int32_t>(cublas, handle, c, a, b, out, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I);
}

}  // namespace

Status CudaGemm(const CublasLibrary& cublas, cublasHandle_t handle, const thunks::GemmThunk& g,
                uint64_t lhs, uint64_t rhs, uint64_t out) {
  KILN_ASSIGN_OR_RETURN(ColumnMajorGemm c, PlanColumnMajorGemm(g));
  if (c.m == 0 || c.n == 0 || c.batch == 0) return Status::Ok();
  for (int64_t v : {c.m, c.n, c.k, c.lda, c.ldb, c.ldc, c.batch}) {
    if (!FitsInt(v))
      return Error("Unimplemented: gemm dimension " + std::to_string(v) +
                   " exceeds cuBLAS' int range");
  }
  bool same = g.lhs_type == g.rhs_type && g.rhs_type == g.out_type;
  // The thunk's rhs is cuBLAS' A and its lhs cuBLAS' B (see gemm_plan.h).
  // f32 operands, result and accumulation on the TF32 tensor cores: cuBLAS
  // rounds the operands to TF32, as XLA GPU does for f32 dots at DEFAULT
  // precision (NVIDIA_TF32_OVERRIDE=0 in the environment turns it off
  // inside cuBLAS itself).
  if (same && g.out_type == ElementType::kF32 && g.tf32)
    return GemmEx<float>(cublas, handle, c, rhs, lhs, out, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
  if (same && g.out_type == ElementType::kF32) {
    return cublas.Check(Call<float>(cublas.cublasSgemmStridedBatched, handle, c, rhs, lhs, out),
                        "cublasSgemmStridedBatched");
  }
  if (same && g.out_type == ElementType::kF64) {
    return cublas.Check(Call<double>(cublas.cublasDgemmStridedBatched, handle, c, rhs, lhs, out),
                        "cublasDgemmStridedBatched");
  }
  // c64 and c128 (transposes, never conjugates, as HLO's dot).
  if (same && g.out_type == ElementType::kC64) {
    return cublas.Check(Call<cuComplex>(cublas.cublasCgemmStridedBatched, handle, c, rhs, lhs, out),
                        "cublasCgemmStridedBatched");
  }
  if (same && g.out_type == ElementType::kC128) {
    return cublas.Check(Call<cuDoubleComplex>(cublas.cublasZgemmStridedBatched, handle, c, rhs, lhs, out),
                        "cublasZgemmStridedBatched");
  }
  if (g.lhs_type == ElementType::kBF16 && g.rhs_type == ElementType::kBF16 &&
      g.out_type == ElementType::kF32) {
    // bf16 operands, f32 accumulation and result: the tensor cores.
    return GemmEx<float>(cublas, handle, c, rhs, lhs, out, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F);
  }
  if (g.lhs_type == ElementType::kS8 && g.rhs_type == ElementType::kS8 && g.out_type == ElementType::kS32)
    return Int8Gemm(cublas, handle, c, rhs, lhs, out);
  return Error("Unimplemented: cuda gemm of " + std::string(ElementTypeName(g.lhs_type)) + " x " +
               std::string(ElementTypeName(g.rhs_type)) + " -> " +
               std::string(ElementTypeName(g.out_type)) + " (only f32, f64, c64, c128, bf16 x bf16 -> f32 and s8 x s8 -> s32)");
}

}  // namespace kiln::kernels
