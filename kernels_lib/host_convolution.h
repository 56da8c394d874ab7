// Host convolution: executes a forward ConvolutionThunk on host memory as
// im2col + one OpenBLAS GEMM per group (see im2col.h for the lowering).
//
// Any dimension numbers and layouts (strides come from the shapes), window
// strides, padding (negative too), lhs and rhs dilation, window reversal,
// feature_group_count and batch_group_count. f32 and f64 run natively
// (sgemm / dgemm); f16 and bf16 operands are widened to f32, summed in f32
// and rounded once when stored. Depthwise convolutions (one input feature
// per group) are summed directly instead (depthwise_convolution.h). The im2col matrix is allocated per call and
// tiled over output positions so it stays within a fixed budget however
// large the convolution is.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// Upper bound of the per-call im2col tile, in bytes (one tile row at least).
inline constexpr int64_t kIm2colBudgetBytes = int64_t{16} << 20;

// output = conv(input, kernel) for a kForward thunk; `input`, `kernel` and
// `output` hold operand_shapes[0], operand_shapes[1] and result_shape.
// Element types other than f16, bf16, f32 and f64, and the backward kinds,
// return an Unimplemented error naming them.
// `im2col_budget_bytes` bounds the im2col tile (tests pass small values to
// exercise the tiling).
Status HostConvolution(const thunks::ConvolutionThunk& conv, const void* input, const void* kernel,
                       void* output, int64_t im2col_budget_bytes = kIm2colBudgetBytes);

}  // namespace kiln::kernels
