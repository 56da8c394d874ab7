// Cost estimates of thunks, recorded in ThunkInfo so the runtime's profile
// can report achieved FLOP/s and bytes/s, and the roofline bound
// (thunks/roofline.h), against each thunk's own work.
//
// The counting itself is the compiler's HLO cost analysis
// (compiler/analysis/hlo_cost_analysis.h); this file only turns it into the
// runtime's CostEstimate for the kinds of thunks that do work.
#pragma once

#include <cstdint>

#include "compiler/analysis/hlo_cost_analysis.h"
#include "compiler/hlo/computation.h"
#include "thunks/thunk.h"
#include "thunks/thunk_info.h"

namespace kiln::emitter {

thunks::CostEstimate ToCostEstimate(const analysis::HloCost& cost);

// A fused loop kernel: the flops of its fused computation; reads its
// operands once and writes its result once (fused values stay on chip).
thunks::CostEstimate FusionCost(const hlo::HloInstruction& fusion);

// A canonical [b,m,k] x [b,k,n] GEMM: 2*b*m*n*k flops, operands and result.
thunks::CostEstimate GemmCost(const hlo::HloInstruction& dot);

// A convolution: 2 * output elements * kernel spatial size * input
// features per group flops; reads both operands, writes the result.
thunks::CostEstimate ConvolutionCost(const hlo::HloInstruction& conv);

// An fft: XLA's count (hlo_cost_analysis.h); reads its operand, writes its
// result.
thunks::CostEstimate FftCost(const hlo::HloInstruction& fft);

// A Cholesky library call (CholeskyRewriter's custom call): n^3/3 flops per
// matrix; reads the matrices, writes the factors and the status.
thunks::CostEstimate CholeskyCost(const hlo::HloInstruction& call);
// RadixSortRewriter's call: its operands read and results written once
// (the passes' scratch traffic is the kernels' own).
thunks::CostEstimate RadixSortCost(const hlo::HloInstruction& call);

// A LAPACK call (LinalgThunk) of JAX's lapack_*_ffi targets: LAPACK
// Working Note 41's leading flop counts per matrix (getrf m n^2 - n^3/3,
// geqrf 2 m n^2 - 2 n^3/3, orgqr 4 m n k - 2 (m + n) k^2 + 4 k^3/3, syevd
// 9 n^3 as an estimate of its tridiagonal reduction and back-transform,
// gesdd 4 m n^2 + 22 n^3 with vectors (n the smaller side), 4x for
// complex types); reads the operands, writes the results.
thunks::CostEstimate LinalgCost(const hlo::HloInstruction& call, const thunks::LinalgThunk& linalg);

// A triangular solve: k^2 flops per right-hand side of k unknowns.
thunks::CostEstimate TriangularSolveCost(const hlo::HloInstruction& solve);

// A copy of `bytes` bytes.
thunks::CostEstimate CopyCost(int64_t bytes);

}  // namespace kiln::emitter
