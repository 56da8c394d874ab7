// CUDA GEMM: executes a GemmThunk on device memory with cuBLAS, stream-
// ordered on the stream the handle is bound to (cublasSetStream).
//
// The row-major thunk is mapped to cuBLAS' column-major call by
// PlanColumnMajorGemm (gemm_plan.h); f32 and f64 go to
// cublas{S,D}gemmStridedBatched, as the host does with cblas_{s,d}gemm;
// bf16 x bf16 -> f32, s8 x s8 -> s32 and f32 GEMMs marked tf32 to
// cublasGemmStridedBatchedEx (the BF16, INT8 and TF32 tensor cores).
#pragma once

#include <cublas_api.h>

#include <cstdint>

#include "common/status.h"
#include "kernels_lib/cublas_library.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// lhs, rhs, out: device addresses (CUdeviceptr values). Supports f32 and
// f64 with all three types equal, bf16 x bf16 -> f32 and s8 x s8 -> s32
// (lhs [m,k], rhs [n,k], k a multiple of 4); other combinations return an
// Unimplemented error naming the types.
Status CudaGemm(const CublasLibrary& cublas, cublasHandle_t handle, const thunks::GemmThunk& gemm,
                uint64_t lhs, uint64_t rhs, uint64_t out);

}  // namespace kiln::kernels
