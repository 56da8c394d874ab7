// Host GEMMs through oneDNN (Debian's libdnnl), for the types where it
// beats OpenBLAS: bf16 operands (its AVX512-BF16 and AMX kernels, where
// OpenBLAS needs f32 copies of both operands) and int8 (VNNI; OpenBLAS has
// no integer GEMM). f32 stays with OpenBLAS, which was faster at every
// shape measured (bench/vs_xla/gemm_gflops.py). host_gemm.cc asks
// OneDnnTakesGemm first.
#pragma once

#include "common/status.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// bf16 GEMMs below this many multiply-adds per matrix stay with f32 copies
// and OpenBLAS: for a batch of 64 matmuls of 64^3, oneDNN's per-call setup
// cost more than the widening (22 against 122 GFLOP/s).
constexpr int64_t kOneDnnMinBf16Product = int64_t{1} << 24;

// oneDNN applies its output scale to int8 sums in f32, exact only below
// 2^24: with products of at most 2^14 in magnitude, k <= 2^10 keeps every
// sum there (larger k: exact sliced sgemms in host_gemm.cc).
constexpr int64_t kOneDnnMaxInt8K = int64_t{1} << 10;

// Whether oneDNN runs `g` on the host: bf16 x bf16 -> f32 of at least
// kOneDnnMinBf16Product multiply-adds per matrix; s8 x s8 -> s32 with
// k <= kOneDnnMaxInt8K. Only alpha == 1 and beta == 0 (what kiln's emitter
// produces for these types); anything else stays with cblas.
bool OneDnnTakesGemm(const thunks::GemmThunk& g);

// Runs a GEMM that OneDnnTakesGemm accepted, with the thunk's row-major
// operands, transposes, leading dimensions and batch strides. Blocks until
// the result is written.
Status OneDnnGemm(const thunks::GemmThunk& g, const void* lhs, const void* rhs, void* out);

}  // namespace kiln::kernels
