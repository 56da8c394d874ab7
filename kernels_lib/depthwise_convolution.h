// Direct depthwise convolution on the host.
//
// When every output feature reads a single input feature (feature groups of
// one input feature, no batch groups: MobileNet's and EfficientNet's
// depthwise layers), each group's GEMM would be (positions x window) x
// (window x channel multiplier): one column, too little work for a BLAS
// call per group and an im2col copy per tap. Here the sums are built tap
// by tap instead, as out[row] += w * in[row shifted by the tap], along the
// last spatial dimension; with unit strides and no lhs dilation that inner
// loop is a contiguous AXPY the compiler vectorizes (NCHW), otherwise a
// strided or table-driven one. Same index rules as im2col.h.
#pragma once

#include "kernels_lib/convolution_geometry.h"

namespace kiln::kernels {

// True for convolutions DepthwiseConvolve handles: one input feature per
// feature group, more than one group, no batch groups, a spatial dimension.
bool IsDepthwise(const ConvolutionGeometry& g);

// out = conv(input, kernel) in T for an IsDepthwise geometry.
template <typename T>
void DepthwiseConvolve(const ConvolutionGeometry& g, const T* input, const T* kernel, T* out);

}  // namespace kiln::kernels
