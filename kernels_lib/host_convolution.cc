// Host convolution through im2col and cblas; see host_convolution.h.
#include "kernels_lib/host_convolution.h"

#include <cblas.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <string>
#include <vector>

#include "common/float_formats.h"
#include "kernels_lib/convolution_geometry.h"
#include "kernels_lib/depthwise_convolution.h"
#include "kernels_lib/im2col.h"
#include "kernels_lib/openblas_kernels.h"

namespace kiln::kernels {
namespace {

using ET = ElementType;

// ---- element conversion -------------------------------------------------------

// Exact f16 -> f32 (every f16 value is an f32 value).
float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    float v = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// f32 -> bf16 rounding to nearest even (NaN stays a quiet NaN), as
// EncodeNarrowFloat does, without its generic per-format path.
uint16_t FloatToBf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// f32 -> f16 rounding to nearest even: the compiler's _Float16 conversion
// where it has one.
uint16_t FloatToHalf(float f) {
#ifdef __FLT16_MAX__
  return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
#else
  return static_cast<uint16_t>(EncodeNarrowFloat(ET::kF16, f));
#endif
}

bool IsConvType(ET t) { return t == ET::kF16 || t == ET::kBF16 || t == ET::kF32 || t == ET::kF64; }

template <typename T>
constexpr ET kComputeType = std::is_same_v<T, double> ? ET::kF64 : ET::kF32;

// `count` elements of type `type` at `data` as T: `data` itself when it
// already holds T, otherwise converted into `storage`.
template <typename T>
const T* AsCompute(const void* data, ET type, int64_t count, std::vector<T>& storage) {
  if (type == kComputeType<T>) return static_cast<const T*>(data);
  storage.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    switch (type) {
      case ET::kF16: storage[i] = static_cast<T>(HalfToFloat(static_cast<const uint16_t*>(data)[i])); break;
      case ET::kBF16:
        storage[i] = static_cast<T>(std::bit_cast<float>(uint32_t{static_cast<const uint16_t*>(data)[i]} << 16));
        break;
      case ET::kF32: storage[i] = static_cast<T>(static_cast<const float*>(data)[i]); break;
      default: storage[i] = static_cast<T>(static_cast<const double*>(data)[i]); break;
    }
  }
  return storage.data();
}

// Rounds `count` computed values once to `type` (f16 and bf16 with
// ties-to-even, as XLA's converts do).
template <typename T>
void StoreAs(const std::vector<T>& values, ET type, void* out) {
  for (size_t i = 0; i < values.size(); ++i) {
    // From f64 (f64 results only) to a narrow type: one rounding, no f32 step.
    double v = static_cast<double>(values[i]);
    bool from_f32 = std::is_same_v<T, float>;
    switch (type) {
      case ET::kF16:
        static_cast<uint16_t*>(out)[i] =
            from_f32 ? FloatToHalf(static_cast<float>(v)) : static_cast<uint16_t>(EncodeNarrowFloat(type, v));
        break;
      case ET::kBF16:
        static_cast<uint16_t*>(out)[i] =
            from_f32 ? FloatToBf16(static_cast<float>(v)) : static_cast<uint16_t>(EncodeNarrowFloat(type, v));
        break;
      case ET::kF32: static_cast<float*>(out)[i] = static_cast<float>(v); break;
      default: static_cast<double*>(out)[i] = v; break;
    }
  }
}

// ---- GEMM -----------------------------------------------------------------------

// c[m x n] = a[m x k] * b[k x n], a and b dense row-major; c row-major
// with leading dimension ldc, or (column_major) stored transposed: element
// (i, j) at c[i + j * ldc]. A row-major matrix read column-major is its
// transpose, hence the Trans flags of the column-major call.
void Gemm(bool column_major, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
          int64_t ldc) {
  if (column_major) cblas_sgemm(CblasColMajor, CblasTrans, CblasTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, ldc);
  else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, ldc);
}
void Gemm(bool column_major, int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c,
          int64_t ldc) {
  if (column_major) cblas_dgemm(CblasColMajor, CblasTrans, CblasTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, ldc);
  else cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, ldc);
}

// Where the GEMM result tile goes: straight into the output when the
// output's layout lets a GEMM address it, otherwise through a scatter.
enum class OutputMode {
  kFeatureLast,   // position r, feature f at r * features + f (NHWC)
  kFeatureMajor,  // within a batch: position s, feature f at s + f * feature_stride (NCHW)
  kScatter,
};

// True if the output spatial positions, row-major, are `step` elements
// apart; returns in `span` the elements they cover.
bool SpatialIsDense(const ConvolutionGeometry& g, int64_t step, int64_t& span) {
  span = step;
  for (int64_t i = g.spatial_rank - 1; i >= 0; --i) {
    if (g.output_spatial.size[i] > 1 && g.output_spatial.stride[i] != span) return false;
    span *= g.output_spatial.size[i];
  }
  return true;
}

OutputMode ChooseOutputMode(const ConvolutionGeometry& g) {
  int64_t span = 0;
  if ((g.output_feature_stride == 1 || g.output_features == 1) && SpatialIsDense(g, g.output_features, span) &&
      (g.output_batch <= 1 || g.output_batch_stride == span))
    return OutputMode::kFeatureLast;
  if (SpatialIsDense(g, 1, span) && (g.output_features == 1 || g.output_feature_stride >= span))
    return OutputMode::kFeatureMajor;
  return OutputMode::kScatter;
}

// Writes tile c (rows x count, row-major) to the output at rows
// [row_begin, row_begin + rows), features [feature_begin, + count).
template <typename T>
void Scatter(const ConvolutionGeometry& g, const T* c, int64_t row_begin, int64_t rows, int64_t feature_begin,
             int64_t count, T* out) {
  const int64_t n = g.spatial_rank;
  const int64_t positions = g.OutputSpatialCount();
  int64_t b = row_begin / positions;
  std::vector<int64_t> o(static_cast<size_t>(n), 0);
  for (int64_t i = n - 1, rest = row_begin % positions; i >= 0; --i) {
    o[i] = rest % g.output_spatial.size[i];
    rest /= g.output_spatial.size[i];
  }
  const int64_t fs = g.output_feature_stride;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = b * g.output_batch_stride + feature_begin * fs;
    for (int64_t i = 0; i < n; ++i) offset += o[i] * g.output_spatial.stride[i];
    const T* src = c + r * count;
    for (int64_t f = 0; f < count; ++f) out[offset + f * fs] = src[f];
    int64_t i = n - 1;
    for (; i >= 0; --i) {
      if (++o[i] < g.output_spatial.size[i]) break;
      o[i] = 0;
    }
    if (i < 0) ++b;
  }
}

// The convolution in T: depthwise ones directly, the others as GEMMs.
// Output features are processed in blocks that share
// one feature group and one batch group: each block is one filter packing
// and, per tile of output positions, one im2col fill and one GEMM.
template <typename T>
void Convolve(const ConvolutionGeometry& g, const T* input, const T* kernel, T* out, int64_t budget) {
  if (IsDepthwise(g)) return DepthwiseConvolve(g, input, kernel, out);
  Im2Col im2col(g);
  const int64_t rows = im2col.rows(), columns = im2col.columns();
  if (rows == 0 || g.output_features == 0) return;
  if (columns == 0) {  // no input features: every sum is empty
    for (int64_t i = 0; i < g.output_elements; ++i) out[i] = T(0);
    return;
  }
  const int64_t per_feature_group = g.output_features / g.feature_group_count;
  const int64_t per_batch_group = g.output_features / g.batch_group_count;
  const int64_t block = std::gcd(per_feature_group, per_batch_group);
  const OutputMode mode = ChooseOutputMode(g);
  const bool in_place = mode != OutputMode::kScatter;
  const int64_t positions = g.OutputSpatialCount();
  const int64_t row_bytes = (columns + (in_place ? 0 : block)) * static_cast<int64_t>(sizeof(T));
  const int64_t tile = std::clamp<int64_t>(budget / row_bytes, 1, rows);
  std::vector<T> a(static_cast<size_t>(tile * columns));
  std::vector<T> b(static_cast<size_t>(columns * block));
  std::vector<T> c(in_place ? 0 : static_cast<size_t>(tile * block));
  for (int64_t f0 = 0; f0 < g.output_features; f0 += block) {
    const int64_t feature_group = f0 / per_feature_group, batch_group = f0 / per_batch_group;
    const T* group_input = input + batch_group * g.output_batch * g.input_batch_stride +
                           feature_group * g.kernel_input_features * g.input_feature_stride;
    im2col.PackFilter(kernel, f0, block, b.data());
    for (int64_t r0 = 0, m = 0; r0 < rows; r0 += m) {
      m = std::min(tile, rows - r0);
      // Feature-major tiles stay within one batch (one column-major matrix).
      if (mode == OutputMode::kFeatureMajor) m = std::min(m, positions - r0 % positions);
      im2col.Fill(group_input, r0, r0 + m, a.data());
      switch (mode) {
        case OutputMode::kFeatureLast:
          Gemm(false, m, block, columns, a.data(), b.data(), out + r0 * g.output_features + f0, g.output_features);
          break;
        case OutputMode::kFeatureMajor:
          Gemm(true, m, block, columns, a.data(), b.data(),
               out + (r0 / positions) * g.output_batch_stride + r0 % positions + f0 * g.output_feature_stride,
               std::max<int64_t>(1, std::max(g.output_feature_stride, m)));
          break;
        case OutputMode::kScatter:
          Gemm(false, m, block, columns, a.data(), b.data(), c.data(), block);
          Scatter(g, c.data(), r0, m, f0, block, out);
          break;
      }
    }
  }
}

template <typename T>
void Run(const ConvolutionGeometry& g, const thunks::ConvolutionThunk& conv, const void* input,
         const void* kernel, void* output, int64_t budget) {
  std::vector<T> input_storage, kernel_storage, output_storage;
  const T* in = AsCompute<T>(input, conv.operand_shapes[0].element_type(), g.input_elements, input_storage);
  const T* k = AsCompute<T>(kernel, conv.operand_shapes[1].element_type(), g.kernel_elements, kernel_storage);
  const ET out_type = conv.result_shape.element_type();
  if (out_type == kComputeType<T>) {
    Convolve(g, in, k, static_cast<T*>(output), budget);
    return;
  }
  output_storage.assign(static_cast<size_t>(g.output_elements), T(0));
  Convolve(g, in, k, output_storage.data(), budget);
  StoreAs(output_storage, out_type, output);
}

}  // namespace

Status HostConvolution(const thunks::ConvolutionThunk& conv, const void* input, const void* kernel,
                       void* output, int64_t im2col_budget_bytes) {
  EnsureOpenBlasKernelsMatchCpu();
  KILN_ASSIGN_OR_RETURN(ConvolutionGeometry g, PlanConvolution(conv));
  const ET in = conv.operand_shapes[0].element_type();
  const ET k = conv.operand_shapes[1].element_type();
  const ET out = conv.result_shape.element_type();
  if (!IsConvType(in) || !IsConvType(k) || !IsConvType(out))
    return Error("Unimplemented: host convolution of " + std::string(ElementTypeName(in)) + " x " +
                 std::string(ElementTypeName(k)) + " -> " + std::string(ElementTypeName(out)) +
                 " (only f16, bf16, f32 and f64)");
  if (out == ET::kF64) Run<double>(g, conv, input, kernel, output, im2col_budget_bytes);
  else Run<float>(g, conv, input, kernel, output, im2col_budget_bytes);
  return Status::Ok();
}

}  // namespace kiln::kernels
