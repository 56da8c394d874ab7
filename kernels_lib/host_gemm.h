// Host GEMM: executes a GemmThunk on host memory with OpenBLAS (cblas), or
// with oneDNN where it is faster (onednn_gemm.h).
//
// The thunk describes row-major matrices with explicit leading dimensions
// and batch strides (in elements), which map one-to-one onto cblas'
// CblasRowMajor interface; batches are a plain loop of cblas calls.
#pragma once

#include "common/status.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// out = alpha * op(lhs) x op(rhs) + beta * out for every batch. Supports
// f32 and f64 (all three types equal, alpha_imag == 0), bf16 x bf16 -> f32,
// s8 x s8 -> s32 (exact, wrapping: oneDNN where its f32 scaling is exact,
// else exact sums of sgemms of widened operands over slices of k) and FP8
// GEMMs (thunks::IsFp8Gemm: f8 operands widened to f32, an sgemm, the
// result rounded to its type); OneDnnTakesGemm (onednn_gemm.h) says which
// go to oneDNN. Other type combinations return an Unimplemented error
// naming the types.
Status HostGemm(const thunks::GemmThunk& gemm, const void* lhs, const void* rhs, void* out);

}  // namespace kiln::kernels
