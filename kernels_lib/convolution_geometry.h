// ConvolutionGeometry: a forward ConvolutionThunk reduced to sizes and
// element strides, the form the host im2col and GEMM loops index with.
//
// The thunk names dimensions by number (HLO's dim_labels) and keeps each
// operand's layout, so nothing about NHWC or NCHW is assumed here: every
// role (batch, feature, each spatial dimension) gets the element stride its
// dimension has in memory under the shape's minor_to_major. Checking the
// operand shapes against the window and the group counts once, here, lets
// the loops run without bounds checks.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// Sizes and element strides of one operand role per spatial dimension.
struct SpatialDims {
  std::vector<int64_t> size, stride;
};

struct ConvolutionGeometry {
  int64_t spatial_rank = 0;
  std::vector<thunks::WindowDimension> window;

  // Input: [batch, feature, spatial...] by role.
  int64_t input_batch = 0, input_features = 0;
  int64_t input_batch_stride = 0, input_feature_stride = 0;
  SpatialDims input_spatial;

  // Kernel: input features per group (the contraction), output features.
  int64_t kernel_input_features = 0, output_features = 0;
  int64_t kernel_input_stride = 0, kernel_output_stride = 0;
  SpatialDims kernel_spatial;

  // Output: [batch, feature, spatial...]; batch = input_batch / batch groups.
  int64_t output_batch = 0;
  int64_t output_batch_stride = 0, output_feature_stride = 0;
  SpatialDims output_spatial;

  int64_t feature_group_count = 1, batch_group_count = 1;

  int64_t input_elements = 0, kernel_elements = 0, output_elements = 0;

  // Product of the kernel's spatial sizes (window taps per output).
  int64_t KernelSpatialCount() const;
  // Product of the output's spatial sizes.
  int64_t OutputSpatialCount() const;
};

// Element strides of an array shape under its layout (minor_to_major; the
// default row-major one when absent). Tiled layouts and packed element
// sizes are rejected: the host kernels address dense storage only.
StatusOr<std::vector<int64_t>> ElementStrides(const Shape& shape);

// Checks a kForward thunk's shapes, dimension numbers, window and group
// counts against each other (the HLO shape-inference rules) and derives its
// geometry.
StatusOr<ConvolutionGeometry> PlanConvolution(const thunks::ConvolutionThunk& conv);

// Output size of one spatial dimension of `input` elements under `w`.
int64_t WindowOutputSize(int64_t input, const thunks::WindowDimension& w);

}  // namespace kiln::kernels
