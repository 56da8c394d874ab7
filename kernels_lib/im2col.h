// Im2col: the input patches of a convolution laid out as a dense matrix, so
// that one feature group of the convolution is one GEMM with the packed
// filter (the classic im2col lowering used by Caffe and XLA's CPU runtime
// before it had Eigen's spatial convolution).
//
// For a group with C input features and a window of K taps:
//   A[row][tap * C + c]   = input value under window tap `tap` of output
//                           position `row`, feature c of the group (0 in
//                           padding and in lhs-dilation holes),
//   B[tap * C + c][f]     = filter value of tap `tap` (reversal applied),
//                           input feature c, output feature f of the group,
//   out[row][f]           = (A x B)[row][f].
// Rows are output positions (batch, spatial...) in row-major order.
// Columns keep the feature fastest, which makes A's rows runs of
// contiguous copies for feature-last (NHWC) inputs.
//
// Where an output position reads input position x along a spatial
// dimension: u = o * stride - padding_low + window_tap * rhs_dilation must
// be a multiple of lhs_dilation, and x = u / lhs_dilation inside the input
// (operation_semantics "Conv"); these are precomputed per dimension as tap
// tables, so filling a row is table lookups and copies.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_lib/convolution_geometry.h"

namespace kiln::kernels {

class Im2Col {
 public:
  explicit Im2Col(const ConvolutionGeometry& geometry);

  // Output positions (A's rows): output batch x output spatial positions.
  int64_t rows() const { return rows_; }
  // Contraction length (A's columns): window taps x input features per group.
  int64_t columns() const { return taps_ * geometry_.kernel_input_features; }

  // Writes rows [row_begin, row_end) of A, columns() per row, to `a`.
  // `group_input` points at element (batch 0 of the batch group, feature 0
  // of the feature group) of the input.
  template <typename T>
  void Fill(const T* group_input, int64_t row_begin, int64_t row_end, T* a) const;

  // Writes B for output features [feature_begin, feature_begin + count):
  // columns() rows of `count` values. `kernel` is the whole filter.
  template <typename T>
  void PackFilter(const T* kernel, int64_t feature_begin, int64_t count, T* b) const;

 private:
  static constexpr int64_t kOutside = -1;

  const ConvolutionGeometry& geometry_;
  int64_t rows_ = 0, taps_ = 0, spatial_positions_ = 0;
  // offsets_[i][o * window_size + k]: element offset along spatial
  // dimension i of the input read by output position o at window tap k,
  // or kOutside.
  std::vector<std::vector<int64_t>> offsets_;
};

}  // namespace kiln::kernels
