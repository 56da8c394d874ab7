// Direct depthwise convolution; see depthwise_convolution.h.
#include "kernels_lib/depthwise_convolution.h"

#include <algorithm>
#include <vector>

namespace kiln::kernels {
namespace {

constexpr int64_t kOutside = -1;

// offsets[o * size + k]: input element offset along spatial dimension i read
// by output position o at window tap k, or kOutside (see im2col.h).
std::vector<int64_t> TapOffsets(const ConvolutionGeometry& g, int64_t i) {
  const thunks::WindowDimension& w = g.window[i];
  std::vector<int64_t> table(static_cast<size_t>(g.output_spatial.size[i] * w.size), kOutside);
  for (int64_t o = 0; o < g.output_spatial.size[i]; ++o) {
    for (int64_t k = 0; k < w.size; ++k) {
      int64_t u = o * w.stride - w.padding_low + k * w.rhs_dilation;
      if (u < 0 || u % w.lhs_dilation != 0 || u / w.lhs_dilation >= g.input_spatial.size[i]) continue;
      table[o * w.size + k] = u / w.lhs_dilation * g.input_spatial.stride[i];
    }
  }
  return table;
}

// Advances multi-index `index` below `sizes` (last fastest); false after
// the last one.
bool Next(std::vector<int64_t>& index, const std::vector<int64_t>& sizes) {
  for (int64_t i = static_cast<int64_t>(index.size()) - 1; i >= 0; --i) {
    if (++index[i] < sizes[i]) return true;
    index[i] = 0;
  }
  return false;
}

// out[o * os] += w * in[...] for every output position o along the last
// spatial dimension whose window tap `k` falls inside the input.
template <typename T>
void AccumulateRow(const ConvolutionGeometry& g, const std::vector<int64_t>& last_taps, int64_t k, T w,
                   const T* in, T* out) {
  const int64_t last = g.spatial_rank - 1;
  const thunks::WindowDimension& win = g.window[last];
  const int64_t out_size = g.output_spatial.size[last], in_size = g.input_spatial.size[last];
  const int64_t os = g.output_spatial.stride[last], is = g.input_spatial.stride[last];
  if (win.lhs_dilation != 1) {
    for (int64_t o = 0; o < out_size; ++o)
      if (int64_t v = last_taps[o * win.size + k]; v != kOutside) out[o * os] += w * in[v];
    return;
  }
  // Input position x = o * s + d; o in [lo, hi) keeps it inside.
  const int64_t s = win.stride, d = k * win.rhs_dilation - win.padding_low;
  const int64_t lo = d >= 0 ? 0 : (-d + s - 1) / s;
  const int64_t hi = in_size - 1 - d < 0 ? 0 : std::min(out_size, (in_size - 1 - d) / s + 1);
  if (os == 1 && is == 1 && s == 1) {
    T* dst = out + lo;
    const T* src = in + lo + d;
    for (int64_t j = 0; j < hi - lo; ++j) dst[j] += w * src[j];
    return;
  }
  for (int64_t o = lo; o < hi; ++o) out[o * os] += w * in[(o * s + d) * is];
}

}  // namespace

bool IsDepthwise(const ConvolutionGeometry& g) {
  return g.kernel_input_features == 1 && g.feature_group_count > 1 && g.batch_group_count == 1 &&
         g.spatial_rank >= 1;
}

template <typename T>
void DepthwiseConvolve(const ConvolutionGeometry& g, const T* input, const T* kernel, T* out) {
  std::fill(out, out + g.output_elements, T(0));
  const int64_t n = g.spatial_rank, outer = n - 1;
  const int64_t multiplier = g.output_features / g.feature_group_count;
  std::vector<std::vector<int64_t>> taps;
  for (int64_t i = 0; i < n; ++i) taps.push_back(TapOffsets(g, i));
  std::vector<int64_t> outer_sizes(g.output_spatial.size.begin(), g.output_spatial.size.end() - 1);
  std::vector<int64_t> window_sizes(g.kernel_spatial.size.begin(), g.kernel_spatial.size.end() - 1);
  if (std::find(outer_sizes.begin(), outer_sizes.end(), 0) != outer_sizes.end()) return;
  const thunks::WindowDimension& last = g.window[outer];
  std::vector<int64_t> o(static_cast<size_t>(outer)), k(static_cast<size_t>(outer));
  for (int64_t f = 0; f < g.output_features; ++f) {
    const int64_t channel = f / multiplier;
    for (int64_t b = 0; b < g.output_batch; ++b) {
      const T* in_plane = input + b * g.input_batch_stride + channel * g.input_feature_stride;
      T* out_plane = out + b * g.output_batch_stride + f * g.output_feature_stride;
      std::fill(o.begin(), o.end(), 0);
      do {  // each output row: all spatial dimensions but the last fixed
        T* out_row = out_plane;
        for (int64_t i = 0; i < outer; ++i) out_row += o[i] * g.output_spatial.stride[i];
        std::fill(k.begin(), k.end(), 0);
        do {  // each window tap of those dimensions
          int64_t in_offset = 0, kernel_offset = f * g.kernel_output_stride;
          bool inside = true;
          for (int64_t i = 0; i < outer && inside; ++i) {
            int64_t v = taps[i][o[i] * g.window[i].size + k[i]];
            inside = v != kOutside;
            in_offset += v;
            int64_t kk = g.window[i].reversal ? g.window[i].size - 1 - k[i] : k[i];
            kernel_offset += kk * g.kernel_spatial.stride[i];
          }
          if (!inside) continue;
          for (int64_t kl = 0; kl < last.size; ++kl) {
            int64_t kk = last.reversal ? last.size - 1 - kl : kl;
            T w = kernel[kernel_offset + kk * g.kernel_spatial.stride[outer]];
            AccumulateRow(g, taps[outer], kl, w, in_plane + in_offset, out_row);
          }
        } while (Next(k, window_sizes));
      } while (Next(o, outer_sizes));
    }
  }
}

template void DepthwiseConvolve<float>(const ConvolutionGeometry&, const float*, const float*, float*);
template void DepthwiseConvolve<double>(const ConvolutionGeometry&, const double*, const double*, double*);

}  // namespace kiln::kernels
