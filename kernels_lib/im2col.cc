// Im2col patch and filter packing; see im2col.h.
#include "kernels_lib/im2col.h"

#include <algorithm>
#include <cstring>

namespace kiln::kernels {

Im2Col::Im2Col(const ConvolutionGeometry& g) : geometry_(g) {
  spatial_positions_ = g.OutputSpatialCount();
  rows_ = g.output_batch * spatial_positions_;
  taps_ = g.KernelSpatialCount();
  offsets_.resize(static_cast<size_t>(g.spatial_rank));
  for (int64_t i = 0; i < g.spatial_rank; ++i) {
    const thunks::WindowDimension& w = g.window[i];
    const int64_t out_size = g.output_spatial.size[i];
    std::vector<int64_t>& table = offsets_[i];
    table.assign(static_cast<size_t>(out_size * w.size), kOutside);
    for (int64_t o = 0; o < out_size; ++o) {
      for (int64_t k = 0; k < w.size; ++k) {
        int64_t u = o * w.stride - w.padding_low + k * w.rhs_dilation;
        if (u < 0 || u % w.lhs_dilation != 0) continue;
        int64_t x = u / w.lhs_dilation;
        if (x >= g.input_spatial.size[i]) continue;
        table[o * w.size + k] = x * g.input_spatial.stride[i];
      }
    }
  }
}

template <typename T>
void Im2Col::Fill(const T* group_input, int64_t row_begin, int64_t row_end, T* a) const {
  const ConvolutionGeometry& g = geometry_;
  const int64_t n = g.spatial_rank;
  const int64_t c = g.kernel_input_features;
  const int64_t feature_stride = g.input_feature_stride;
  const std::vector<int64_t>& wsize = g.kernel_spatial.size;
  // Output position of row_begin: batch b, spatial multi-index o.
  int64_t b = spatial_positions_ > 0 ? row_begin / spatial_positions_ : 0;
  std::vector<int64_t> o(static_cast<size_t>(n), 0);
  for (int64_t i = n - 1, rest = spatial_positions_ > 0 ? row_begin % spatial_positions_ : 0; i >= 0; --i) {
    o[i] = rest % g.output_spatial.size[i];
    rest /= g.output_spatial.size[i];
  }
  // Per row: the tap table slice of each dimension at o[i].
  std::vector<const int64_t*> row_taps(static_cast<size_t>(n));
  std::vector<int64_t> k(static_cast<size_t>(n), 0);
  for (int64_t row = row_begin; row < row_end; ++row) {
    const T* base = group_input + b * g.input_batch_stride;
    for (int64_t i = 0; i < n; ++i) row_taps[i] = offsets_[i].data() + o[i] * wsize[i];
    std::fill(k.begin(), k.end(), 0);
    T* dst = a + (row - row_begin) * columns();
    for (int64_t tap = 0; tap < taps_; ++tap, dst += c) {
      int64_t offset = 0;
      bool inside = true;
      for (int64_t i = 0; i < n; ++i) {
        int64_t v = row_taps[i][k[i]];
        inside &= v != kOutside;
        offset += v;
      }
      if (!inside) {
        std::fill(dst, dst + c, T(0));
      } else if (feature_stride == 1) {
        std::memcpy(dst, base + offset, static_cast<size_t>(c) * sizeof(T));
      } else {
        const T* src = base + offset;
        for (int64_t z = 0; z < c; ++z) dst[z] = src[z * feature_stride];
      }
      for (int64_t i = n - 1; i >= 0; --i) {  // next window tap, last dimension fastest
        if (++k[i] < wsize[i]) break;
        k[i] = 0;
      }
    }
    // Next output position.
    int64_t i = n - 1;
    for (; i >= 0; --i) {
      if (++o[i] < g.output_spatial.size[i]) break;
      o[i] = 0;
    }
    if (i < 0) ++b;
  }
}

template <typename T>
void Im2Col::PackFilter(const T* kernel, int64_t feature_begin, int64_t count, T* b) const {
  const ConvolutionGeometry& g = geometry_;
  const int64_t n = g.spatial_rank;
  const int64_t c = g.kernel_input_features;
  std::vector<int64_t> k(static_cast<size_t>(n), 0);
  for (int64_t tap = 0; tap < taps_; ++tap) {
    // The filter element under window tap k (reversed where the window says).
    int64_t spatial_offset = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t kk = g.window[i].reversal ? g.window[i].size - 1 - k[i] : k[i];
      spatial_offset += kk * g.kernel_spatial.stride[i];
    }
    for (int64_t z = 0; z < c; ++z) {
      const T* src = kernel + spatial_offset + z * g.kernel_input_stride + feature_begin * g.kernel_output_stride;
      T* dst = b + (tap * c + z) * count;
      for (int64_t f = 0; f < count; ++f) dst[f] = src[f * g.kernel_output_stride];
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      if (++k[i] < g.kernel_spatial.size[i]) break;
      k[i] = 0;
    }
  }
}

template void Im2Col::Fill<float>(const float*, int64_t, int64_t, float*) const;
template void Im2Col::Fill<double>(const double*, int64_t, int64_t, double*) const;
template void Im2Col::PackFilter<float>(const float*, int64_t, int64_t, float*) const;
template void Im2Col::PackFilter<double>(const double*, int64_t, int64_t, double*) const;

}  // namespace kiln::kernels
