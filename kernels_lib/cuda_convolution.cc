// CUDA convolution through cuDNN; see cuda_convolution.h.
#include "kernels_lib/cuda_convolution.h"

#include <algorithm>
#include <climits>
#include <string>

#include "kernels_lib/convolution_geometry.h"

namespace kiln::kernels {
namespace {

namespace th = ::kiln::thunks;
using Kind = th::ConvolutionKind;

std::string Str(int64_t v) { return std::to_string(v); }

Status Unsupported(const std::string& what) { return Error("Unimplemented: cuDNN cannot express " + what); }

bool FitsInt(int64_t v) { return v >= INT_MIN && v <= INT_MAX; }

// Shapes of x, w and y, by the kind's operand order (thunk.h).
struct Roles {
  const Shape *x, *w, *y;
};
StatusOr<Roles> RolesOf(const th::ConvolutionThunk& c) {
  if (c.operands.size() != 2 || c.operand_shapes.size() != 2)
    return Error("convolution: expected 2 operands, got " + Str(c.operand_shapes.size()));
  const Shape* a = &c.operand_shapes[0];
  const Shape* b = &c.operand_shapes[1];
  switch (c.kind) {
    case Kind::kForward: return Roles{a, b, &c.result_shape};
    case Kind::kBackwardInput: return Roles{&c.result_shape, b, a};
    case Kind::kBackwardFilter: return Roles{a, &c.result_shape, b};
  }
  return Error("convolution: unknown kind");
}

StatusOr<cudnnDataType_t> DataType(ElementType t) {
  switch (t) {
    case ElementType::kF32: return CUDNN_DATA_FLOAT;
    case ElementType::kF64: return CUDNN_DATA_DOUBLE;
    case ElementType::kF16: return CUDNN_DATA_HALF;
    case ElementType::kBF16: return CUDNN_DATA_BFLOAT16;
    default: return Error("Unimplemented: cuda convolution of " + std::string(ElementTypeName(t)) +
                          " (only f16, bf16, f32 and f64)");
  }
}

// cuDNN pads both sides by one amount p. Per spatial dimension, finds p,
// the extent of x cuDNN sees and the elements of x it skips at the start,
// such that cuDNN's output size is the thunk's and every tap an output
// reads is the same element (or the same zero) as under the thunk's
// (low, high) padding. Negative padding crops x; a high padding that
// differs from the low one is matched by the extent of x, when one gives
// the same output size without moving a tap across the end of x (`direct`).
// Otherwise x goes through scratch with its padding written out as zeros
// (low and high below, cuDNN padding 0).
struct DimPadding {
  int64_t pad = 0, extent = 0, skip = 0;
  bool direct = true;
  int64_t low = 0, high = 0;  // zeros around the cropped x when !direct
};
StatusOr<DimPadding> SolvePadding(int64_t input, int64_t output, const th::WindowDimension& w, bool x_is_read) {
  DimPadding d;
  d.skip = w.padding_low < 0 ? -w.padding_low : 0;
  int64_t crop_high = w.padding_high < 0 ? -w.padding_high : 0;
  d.low = d.pad = w.padding_low > 0 ? w.padding_low : 0;
  d.high = w.padding_high > 0 ? w.padding_high : 0;
  d.extent = input - d.skip - crop_high;
  if (d.extent < 1)
    return Unsupported("padding " + Str(w.padding_low) + "_" + Str(w.padding_high) + " over " + Str(input) +
                       " elements (nothing of the input is read)");
  int64_t window = (w.size - 1) * w.rhs_dilation + 1;
  auto cudnn_output = [&](int64_t e) {
    int64_t padded = e + 2 * d.pad;
    return padded < window ? 0 : (padded - window) / w.stride + 1;
  };
  // A written x (backward input) must be written whole: symmetric padding only.
  if (!x_is_read) {
    d.direct = !d.skip && !crop_high && d.low == d.high;
    return d;
  }
  if (cudnn_output(d.extent) == output) return d;
  // The last tap any output reads, relative to the cropped x: every x
  // position up to it keeps its value under a smaller extent.
  int64_t last_tap = (output - 1) * w.stride - d.pad + window - 1;
  if (last_tap + 1 < d.extent && cudnn_output(last_tap + 1) == output) {
    d.extent = last_tap + 1;
    return d;
  }
  d.direct = false;
  return d;
}

// Whether the thunk's filter already is packed in cuDNN's filter format:
// KCRS, or KRSC (channel-minor) for CUDNN_TENSOR_NHWC.
bool IsPackedFilter(const ConvolutionGeometry& g, cudnnTensorFormat_t format) {
  const bool krsc = format == CUDNN_TENSOR_NHWC;
  int64_t stride = 1;  // the packed stride of the next dimension outwards
  auto next = [&](int64_t size, int64_t actual) {
    bool ok = size <= 1 || actual == stride;
    stride *= size;
    return ok;
  };
  if (krsc && !next(g.kernel_input_features, g.kernel_input_stride)) return false;  // C innermost
  for (int64_t i = g.spatial_rank - 1; i >= 0; --i)
    if (!next(g.kernel_spatial.size[i], g.kernel_spatial.stride[i])) return false;
  if (!krsc && !next(g.kernel_input_features, g.kernel_input_stride)) return false;  // C outside the taps
  return g.output_features <= 1 || g.kernel_output_stride == stride;
}

// A forward convolution with lhs dilation L (and window stride 1) is the
// input gradient of the convolution with stride L of the same filter,
// reversed: out[j] sums x[i] * w[r] over i*L = j - low + r*D, which is
// cuDNN's dx[j] = sum dy[i] * w'[r'] over i*L - P + r'*D = j with
// r' = R-1-r and P = (R-1)*D - low. cuDNN's output size relation then holds
// when 0 <= high - low < L; otherwise the strided convolution's high padding
// differs from P.
//
// With G feature groups the filter's features swap roles as a whole
// (thunk: C/G in x K out; cuDNN: C in x K/G out), so the thunk handed on
// carries a filter shape of cuDNN's sizes for the geometry checks, and the
// caller stages the real filter as [G, C/G, K/G, spatial...]
// (GroupedTransposedFilter).
StatusOr<th::ConvolutionThunk> AsBackwardInput(const th::ConvolutionThunk& c) {
  if (c.batch_group_count != 1)
    return Unsupported("lhs_dilation (a transposed convolution) with batch_group_count " +
                       Str(c.batch_group_count));
  if (c.operand_shapes.size() != 2) return Error("convolution: expected 2 operands");
  const int64_t groups = c.feature_group_count;
  th::ConvolutionThunk t;
  t.kind = Kind::kBackwardInput;
  t.operands = c.operands;
  t.operand_shapes = c.operand_shapes;
  t.result = c.result;
  t.result_shape = c.result_shape;
  if (groups != 1) {
    const Shape& k = c.operand_shapes[1];
    const th::ConvolutionDimensions& d = c.dimensions;
    if (d.kernel_input_feature < 0 || d.kernel_input_feature >= k.rank() || d.kernel_output_feature < 0 ||
        d.kernel_output_feature >= k.rank() || groups < 1 || k.dim(d.kernel_output_feature) % groups != 0)
      return Error("convolution: filter " + k.ToString() + " does not match feature_group_count " + Str(groups));
    std::vector<int64_t> dims = k.dims();
    // The thunk's output-feature dimension becomes cuDNN's C/G, its
    // input-feature dimension cuDNN's K (= the convolution's C).
    dims[d.kernel_output_feature] = k.dim(d.kernel_output_feature) / groups;
    dims[d.kernel_input_feature] = k.dim(d.kernel_input_feature) * groups;
    t.operand_shapes[1].set_dims(dims);
  }
  const th::ConvolutionDimensions& d = c.dimensions;
  // x (the gradient written) is the thunk's output, y (read) its input; the
  // filter's input and output features swap roles.
  t.dimensions = {d.output_batch,         d.output_feature,       d.output_spatial,
                  d.kernel_output_feature, d.kernel_input_feature, d.kernel_spatial,
                  d.input_batch,          d.input_feature,        d.input_spatial};
  t.feature_group_count = groups;
  t.batch_group_count = 1;
  for (const th::WindowDimension& w : c.window) {
    int64_t window = (w.size - 1) * w.rhs_dilation + 1;
    int64_t pad = window - 1 - w.padding_low, extra = w.padding_high - w.padding_low;
    if (w.stride != 1) return Unsupported("lhs_dilation (a transposed convolution) with window stride " + Str(w.stride));
    // The strided convolution's padding: symmetric when 0 <= high - low < L,
    // else one that gives the same output size, with the input gradient
    // then staged (or cropped) like any asymmetrically padded x.
    int64_t high = extra >= 0 && extra < w.lhs_dilation ? pad : pad - extra;
    t.window.push_back({w.size, w.lhs_dilation, pad, high, 1, w.rhs_dilation, !w.reversal});
  }
  return t;
}

// The thunk's filter of a grouped transposed convolution as cuDNN's
// backward-data filter [C, K/G, spatial...] split as [G, C/G, K/G,
// spatial...]: element (g, ci, ko, r) is the thunk's (ci, g*K/G + ko, r).
StatusOr<CudnnTensorShape> GroupedTransposedFilter(const th::ConvolutionThunk& c, size_t cudnn_spatial) {
  const Shape& k = c.operand_shapes[1];
  const th::ConvolutionDimensions& d = c.dimensions;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, ElementStrides(k));
  const int64_t groups = c.feature_group_count, out_per_group = k.dim(d.kernel_output_feature) / groups;
  std::vector<int64_t> dims{groups, k.dim(d.kernel_input_feature), out_per_group},
      steps{out_per_group * strides[d.kernel_output_feature], strides[d.kernel_input_feature],
            strides[d.kernel_output_feature]};
  for (int64_t s : d.kernel_spatial) dims.push_back(k.dim(s)), steps.push_back(strides[s]);
  while (dims.size() < cudnn_spatial + 3) dims.push_back(1), steps.push_back(1);
  CudnnTensorShape t;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!FitsInt(dims[i]) || !FitsInt(steps[i])) return Unsupported("a filter dimension beyond the int range");
    t.dims.push_back(static_cast<int>(dims[i]));
    t.strides.push_back(static_cast<int>(steps[i]));
  }
  return t;
}

std::vector<int> PackedStrides(const std::vector<int>& dims) {
  std::vector<int> s(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) s[i - 1] = s[i] * dims[i];
  return s;
}

// Packed strides for `dims` that keep the dimension order of a tensor with
// strides `like` (outermost = largest stride): a staged x in the thunk's
// own layout, so that cuDNN sees x and y in one layout, the combination
// its kernels are built for, rather than an NCHW x beside an NHWC y.
std::vector<int> PackedStridesLike(const std::vector<int>& dims, const std::vector<int64_t>& like) {
  std::vector<size_t> order(dims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return like[a] > like[b]; });
  std::vector<int> s(dims.size(), 1);
  int stride = 1;
  for (size_t k = order.size(); k-- > 0;) {
    s[order[k]] = stride;
    stride *= dims[order[k]];
  }
  return s;
}

}  // namespace

StatusOr<CudnnConvolutionPlan> PlanCudnnConvolution(const th::ConvolutionThunk& c) {
  for (const th::WindowDimension& w : c.window) {
    if (w.lhs_dilation != 1) {
      if (c.kind != Kind::kForward)
        return Unsupported("lhs_dilation on a " + std::string(th::ConvolutionKindName(c.kind)) + " convolution");
      KILN_ASSIGN_OR_RETURN(th::ConvolutionThunk transposed, AsBackwardInput(c));
      KILN_ASSIGN_OR_RETURN(CudnnConvolutionPlan p, PlanCudnnConvolution(transposed));
      if (c.feature_group_count != 1) {
        KILN_ASSIGN_OR_RETURN(p.filter_source, GroupedTransposedFilter(c, p.filter_flip.size()));
      }
      return p;
    }
  }
  KILN_ASSIGN_OR_RETURN(Roles r, RolesOf(c));
  // The geometry of the forward convolution x * w -> y checks the shapes,
  // dimension numbers and window against each other.
  th::ConvolutionThunk fwd;
  fwd.operands = c.operands;
  fwd.operand_shapes = {*r.x, *r.w};
  fwd.result_shape = *r.y;
  fwd.dimensions = c.dimensions;
  fwd.window = c.window;
  fwd.feature_group_count = c.feature_group_count;
  fwd.batch_group_count = c.batch_group_count;
  KILN_ASSIGN_OR_RETURN(ConvolutionGeometry g, PlanConvolution(fwd));

  CudnnConvolutionPlan p;
  p.kind = c.kind;
  ElementType type = r.x->element_type();
  if (r.w->element_type() != type || r.y->element_type() != type)
    return Error("Unimplemented: cuda convolution of mixed element types " + r.x->ToString(false) + ", " +
                 r.w->ToString(false) + ", " + r.y->ToString(false));
  KILN_ASSIGN_OR_RETURN(p.data_type, DataType(type));
  p.element_bytes = StorageBytes(type);
  p.compute_type = type == ElementType::kF64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  // f32 and f64 stay on the FMA units (no TF32 rounding of the operands);
  // f16 and bf16 take the tensor cores with f32 accumulation.
  p.math = (type == ElementType::kF16 || type == ElementType::kBF16) ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  if (g.spatial_rank > 3) return Unsupported(Str(g.spatial_rank) + " spatial dimensions (at most 3)");
  int reversed = 0;
  for (const th::WindowDimension& w : g.window) reversed += w.reversal ? 1 : 0;
  // CUDNN_CONVOLUTION flips the filter in every spatial dimension; some
  // dimensions only are flipped while staging the filter.
  bool all_reversed = reversed > 0 && reversed == g.spatial_rank;
  p.mode = all_reversed ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
  p.groups = static_cast<int>(g.feature_group_count);
  const int64_t bgc = g.batch_group_count;
  p.batch_groups = static_cast<int>(bgc);
  const int64_t k_per_call = g.output_features / bgc;

  bool x_is_read = c.kind != Kind::kBackwardInput;
  std::vector<int64_t> x_dims{g.output_batch, g.input_features}, x_strides{g.input_batch_stride, g.input_feature_stride};
  std::vector<int64_t> y_dims{g.output_batch, k_per_call}, y_strides{g.output_batch_stride, g.output_feature_stride};
  std::vector<int64_t> w_dims{g.output_features, g.kernel_input_features},
      w_strides{g.kernel_output_stride, g.kernel_input_stride};
  std::vector<int64_t> padding, stride, dilation;
  std::vector<DimPadding> pads;
  bool direct = true;
  for (int64_t i = 0; i < g.spatial_rank; ++i) {
    KILN_ASSIGN_OR_RETURN(DimPadding d,
                          SolvePadding(g.input_spatial.size[i], g.output_spatial.size[i], g.window[i], x_is_read));
    direct = direct && d.direct;
    pads.push_back(d);
  }
  // Staged x: [N, C, spatial...] packed, the cropped x inside its zeros.
  std::vector<int64_t> staged_dims{g.input_batch, g.input_features}, interior_dims{g.input_batch, g.input_features},
      source_strides{g.input_batch_stride, g.input_feature_stride}, whole_dims{g.input_batch, g.input_features};
  bool crops = false;
  for (int64_t i = 0; i < g.spatial_rank; ++i) {
    const th::WindowDimension& w = g.window[i];
    DimPadding d = pads[i];
    if (!direct) {
      // Recomputed without the smaller-extent match: the staged x holds all
      // of the cropped x and both paddings.
      d.extent = g.input_spatial.size[i] - d.skip - (w.padding_high < 0 ? -w.padding_high : 0);
      staged_dims.push_back(d.low + d.extent + d.high);
      interior_dims.push_back(d.extent);
      source_strides.push_back(g.input_spatial.stride[i]);
      whole_dims.push_back(g.input_spatial.size[i]);
      crops = crops || d.extent != g.input_spatial.size[i];
      d.pad = 0;
    }
    p.x_offset_elements += d.skip * g.input_spatial.stride[i];
    x_dims.push_back(d.extent);
    x_strides.push_back(g.input_spatial.stride[i]);
    y_dims.push_back(g.output_spatial.size[i]);
    y_strides.push_back(g.output_spatial.stride[i]);
    w_dims.push_back(g.kernel_spatial.size[i]);
    w_strides.push_back(g.kernel_spatial.stride[i]);
    padding.push_back(d.pad);
    stride.push_back(w.stride);
    dilation.push_back(w.rhs_dilation);
    p.filter_flip.push_back(w.reversal && !all_reversed);
  }
  // cuDNN convolves 2 or 3 spatial dimensions: pad with unit ones.
  for (int64_t i = g.spatial_rank; i < 2; ++i) {
    for (auto* v : {&x_dims, &x_strides, &y_dims, &y_strides, &w_dims, &w_strides, &stride, &dilation, &staged_dims,
                    &interior_dims, &source_strides, &whole_dims})
      v->push_back(1);
    padding.push_back(0);
    p.filter_flip.push_back(false);
  }
  auto to_int = [](const std::vector<int64_t>& v, std::vector<int>& out) {
    out.clear();
    for (int64_t x : v) {
      if (!FitsInt(x)) return false;
      out.push_back(static_cast<int>(x));
    }
    return true;
  };
  CudnnTensorShape w_source;
  if (!to_int(x_dims, p.x.dims) || !to_int(x_strides, p.x.strides) || !to_int(y_dims, p.y.dims) ||
      !to_int(y_strides, p.y.strides) || !to_int(w_dims, p.filter_dims) || !to_int(w_dims, w_source.dims) ||
      !to_int(w_strides, w_source.strides) || !to_int(padding, p.padding) || !to_int(stride, p.stride) ||
      !to_int(dilation, p.dilation))
    return Unsupported("a dimension, stride or padding beyond the int range");
  p.filter_dims[0] = static_cast<int>(k_per_call);
  bool flips = reversed > 0 && !all_reversed;
  // Channel-minor tensors of a backward-data convolution: a KRSC filter.
  bool channel_minor = g.input_features > 1 && g.input_feature_stride == 1 && g.output_feature_stride == 1;
  if (c.kind == Kind::kBackwardInput && p.groups == 1 && channel_minor) p.filter_format = CUDNN_TENSOR_NHWC;
  if (flips || !IsPackedFilter(g, p.filter_format)) p.filter_source = w_source;
  p.x_elements = g.input_elements;
  p.filter_elements = g.kernel_elements;
  p.y_elements = g.output_elements;
  p.x_group_offset = g.output_batch * g.input_batch_stride;
  if (!direct) {
    CudnnXStaging st;
    std::vector<int> staged, interior, strides, whole;
    if (!to_int(staged_dims, staged) || !to_int(interior_dims, interior) || !to_int(source_strides, strides) ||
        !to_int(whole_dims, whole))
      return Unsupported("a padded input beyond the int range");
    st.padded = {staged, PackedStridesLike(staged, source_strides)};
    st.interior = {interior, st.padded.strides};
    st.source = {interior, strides};
    if (crops && !x_is_read) st.whole = CudnnTensorShape{whole, strides};
    for (size_t i = 0; i < pads.size(); ++i) st.interior_offset += pads[i].low * st.padded.strides[i + 2];
    st.elements = 1;
    for (int v : staged) st.elements *= v;
    // cuDNN sees the staged x of one batch group, unpadded.
    p.x.dims = staged;
    p.x.dims[0] = static_cast<int>(g.output_batch);
    p.x.strides = st.padded.strides;
    p.x_group_offset = g.output_batch * st.padded.strides[0];
    p.x_staging = st;
  }
  p.y_group_offset = k_per_call * g.output_feature_stride;
  p.filter_group_offset = g.kernel_elements / bgc;
  return p;
}

// The descriptors of one prepared convolution, destroyed with it.
class CudnnDescriptorSet {
 public:
  explicit CudnnDescriptorSet(const CudnnLibrary& lib) : lib_(lib) {}
  ~CudnnDescriptorSet() {
    for (cudnnTensorDescriptor_t t : tensors_) lib_.cudnnDestroyTensorDescriptor(t);
    if (filter_) lib_.cudnnDestroyFilterDescriptor(filter_);
    if (conv_) lib_.cudnnDestroyConvolutionDescriptor(conv_);
  }
  CudnnDescriptorSet(const CudnnDescriptorSet&) = delete;
  CudnnDescriptorSet& operator=(const CudnnDescriptorSet&) = delete;

  StatusOr<cudnnTensorDescriptor_t> Tensor(cudnnDataType_t type, const CudnnTensorShape& s) {
    cudnnTensorDescriptor_t t = nullptr;
    KILN_RETURN_IF_ERROR(lib_.Check(lib_.cudnnCreateTensorDescriptor(&t), "cudnnCreateTensorDescriptor"));
    tensors_.push_back(t);
    KILN_RETURN_IF_ERROR(lib_.Check(lib_.cudnnSetTensorNdDescriptor(t, type, static_cast<int>(s.dims.size()),
                                                                     s.dims.data(), s.strides.data()),
                                    "cudnnSetTensorNdDescriptor"));
    return t;
  }
  StatusOr<cudnnFilterDescriptor_t> Filter(const CudnnConvolutionPlan& p) {
    KILN_RETURN_IF_ERROR(lib_.Check(lib_.cudnnCreateFilterDescriptor(&filter_), "cudnnCreateFilterDescriptor"));
    KILN_RETURN_IF_ERROR(lib_.Check(
        lib_.cudnnSetFilterNdDescriptor(filter_, p.data_type, p.filter_format, static_cast<int>(p.filter_dims.size()),
                                        p.filter_dims.data()),
        "cudnnSetFilterNdDescriptor"));
    return filter_;
  }
  StatusOr<cudnnConvolutionDescriptor_t> Convolution(const CudnnConvolutionPlan& p) {
    KILN_RETURN_IF_ERROR(
        lib_.Check(lib_.cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor"));
    KILN_RETURN_IF_ERROR(lib_.Check(
        lib_.cudnnSetConvolutionNdDescriptor(conv_, static_cast<int>(p.padding.size()), p.padding.data(),
                                             p.stride.data(), p.dilation.data(), p.mode, p.compute_type),
        "cudnnSetConvolutionNdDescriptor"));
    KILN_RETURN_IF_ERROR(
        lib_.Check(lib_.cudnnSetConvolutionGroupCount(conv_, p.groups), "cudnnSetConvolutionGroupCount"));
    KILN_RETURN_IF_ERROR(lib_.Check(lib_.cudnnSetConvolutionMathType(conv_, p.math), "cudnnSetConvolutionMathType"));
    return conv_;
  }

 private:
  const CudnnLibrary& lib_;
  std::vector<cudnnTensorDescriptor_t> tensors_;
  cudnnFilterDescriptor_t filter_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
};

namespace {

// The first algorithm cuDNN's heuristics rank usable.
template <typename Perf>
StatusOr<Perf> FirstUsable(const CudnnLibrary& lib, cudnnStatus_t status, const Perf* perf, int count,
                           const char* call) {
  KILN_RETURN_IF_ERROR(lib.Check(status, call));
  std::string statuses;
  for (int i = 0; i < count; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS) return perf[i];
    statuses += (statuses.empty() ? "" : ", ") + std::to_string(static_cast<int>(perf[i].algo)) + ": " +
                lib.StatusText(perf[i].status);
  }
  return Error(std::string(call) + " found no algorithm for this convolution (" +
               (statuses.empty() ? "none returned" : statuses) + ")");
}

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

// Copies the filter between the thunk's layout and packed KCRS (to_packed:
// that way), reversing the taps of the filter_flip dimensions: one
// cudnnTransformTensor per combination of taps of the flipped dimensions
// (one call when none is flipped). The two descriptors (one piece of the
// thunk's filter, one piece of the packed one) are made once.
Status CudnnConvolution::PrepareFilterStaging() {
  const CudnnConvolutionPlan& p = plan_;
  const CudnnTensorShape& source = *p.filter_source;
  std::vector<int> packed_strides = PackedStrides(source.dims);
  if (p.filter_format == CUDNN_TENSOR_NHWC) {
    // KRSC: K outermost, then the spatial dimensions, C innermost.
    std::vector<int64_t> order(source.dims.size());
    for (size_t i = 2; i < order.size(); ++i) order[i] = static_cast<int64_t>(order.size() - i);
    order[0] = static_cast<int64_t>(order.size());
    packed_strides = PackedStridesLike(source.dims, order);
  }
  CudnnTensorShape piece_source = source, piece_packed{source.dims, packed_strides};
  // The spatial dimensions are the last ones (after [K, C] or [G, C/G, K/G]).
  const size_t first = source.dims.size() - p.filter_flip.size();
  filter_pieces_ = 1;
  for (size_t i = 0; i < p.filter_flip.size(); ++i) {
    if (!p.filter_flip[i]) continue;
    filter_pieces_ *= source.dims[first + i];
    piece_source.dims[first + i] = piece_packed.dims[first + i] = 1;
  }
  filter_packed_strides_ = packed_strides;
  KILN_ASSIGN_OR_RETURN(filter_piece_source_d_, descriptors_->Tensor(p.data_type, piece_source));
  KILN_ASSIGN_OR_RETURN(filter_piece_packed_d_, descriptors_->Tensor(p.data_type, piece_packed));
  return Status::Ok();
}

Status CudnnConvolution::StageFilter(cudnnHandle_t handle, uint64_t thunk_filter, uint64_t packed, bool to_packed,
                                     const void* one, const void* zero) const {
  const CudnnConvolutionPlan& p = plan_;
  const CudnnTensorShape& source = *p.filter_source;
  const size_t first = source.dims.size() - p.filter_flip.size();
  for (int64_t piece = 0; piece < filter_pieces_; ++piece) {
    int64_t rest = piece, source_offset = 0, packed_offset = 0;
    for (size_t i = p.filter_flip.size(); i-- > 0;) {
      if (!p.filter_flip[i]) continue;
      int64_t size = source.dims[first + i], tap = rest % size;
      rest /= size;
      source_offset += tap * source.strides[first + i];
      packed_offset += (size - 1 - tap) * filter_packed_strides_[first + i];
    }
    auto at = [&](uint64_t base, int64_t offset) { return reinterpret_cast<void*>(base + offset * p.element_bytes); };
    cudnnStatus_t s = to_packed ? lib_.cudnnTransformTensor(handle, one, filter_piece_source_d_,
                                                            at(thunk_filter, source_offset), zero,
                                                            filter_piece_packed_d_, at(packed, packed_offset))
                                : lib_.cudnnTransformTensor(handle, one, filter_piece_packed_d_,
                                                            at(packed, packed_offset), zero, filter_piece_source_d_,
                                                            at(thunk_filter, source_offset));
    KILN_RETURN_IF_ERROR(lib_.Check(s, "cudnnTransformTensor of the filter"));
  }
  return Status::Ok();
}

CudnnConvolution::CudnnConvolution(const CudnnLibrary& lib, CudnnConvolutionPlan plan)
    : lib_(lib), plan_(std::move(plan)), descriptors_(std::make_unique<CudnnDescriptorSet>(lib)) {}

CudnnConvolution::~CudnnConvolution() = default;

StatusOr<std::unique_ptr<CudnnConvolution>> CudnnConvolution::Create(const CudnnLibrary& lib, cudnnHandle_t handle,
                                                                     const th::ConvolutionThunk& conv) {
  KILN_ASSIGN_OR_RETURN(CudnnConvolutionPlan plan, PlanCudnnConvolution(conv));
  std::unique_ptr<CudnnConvolution> c(new CudnnConvolution(lib, std::move(plan)));
  KILN_RETURN_IF_ERROR(c->Prepare(handle));
  return c;
}

bool CudnnConvolution::empty_result() const {
  const CudnnConvolutionPlan& p = plan_;
  switch (p.kind) {
    case Kind::kForward: return p.y_elements == 0;
    case Kind::kBackwardInput: return p.x_elements == 0;
    case Kind::kBackwardFilter: return p.filter_elements == 0;
  }
  return false;
}

// Descriptors, the algorithm cuDNN's heuristics rank first among the usable
// ones and the workspace it needs: once per thunk, since cuDNN's heuristics
// cost far more than the convolution itself for small ones.
Status CudnnConvolution::Prepare(cudnnHandle_t handle) {
  const CudnnConvolutionPlan& p = plan_;
  if (empty_result()) return Status::Ok();
  if (p.x_elements == 0 || p.y_elements == 0 || p.filter_elements == 0)
    return Error("Unimplemented: cuda convolution with an empty operand");
  CudnnDescriptorSet& d = *descriptors_;
  const CudnnLibrary& lib = lib_;
  KILN_ASSIGN_OR_RETURN(xd_, d.Tensor(p.data_type, p.x));
  KILN_ASSIGN_OR_RETURN(yd_, d.Tensor(p.data_type, p.y));
  KILN_ASSIGN_OR_RETURN(wd_, d.Filter(p));
  KILN_ASSIGN_OR_RETURN(cd_, d.Convolution(p));
  if (p.filter_source) KILN_RETURN_IF_ERROR(PrepareFilterStaging());
  if (p.x_staging) {
    KILN_ASSIGN_OR_RETURN(interior_d_, d.Tensor(p.data_type, p.x_staging->interior));
    KILN_ASSIGN_OR_RETURN(source_d_, d.Tensor(p.data_type, p.x_staging->source));
    KILN_ASSIGN_OR_RETURN(padded_d_, d.Tensor(p.data_type, p.x_staging->padded));
    if (p.x_staging->whole) {
      KILN_ASSIGN_OR_RETURN(whole_d_, d.Tensor(p.data_type, *p.x_staging->whole));
    }
  }
  constexpr int kMaxAlgos = 8;
  int returned = 0;
  switch (p.kind) {
    case Kind::kForward: {
      cudnnConvolutionFwdAlgoPerf_t perf[kMaxAlgos];
      cudnnStatus_t s = lib.cudnnGetConvolutionForwardAlgorithm_v7(handle, xd_, wd_, cd_, yd_, kMaxAlgos, &returned, perf);
      KILN_ASSIGN_OR_RETURN(cudnnConvolutionFwdAlgoPerf_t best,
                            FirstUsable(lib, s, perf, returned, "cudnnGetConvolutionForwardAlgorithm_v7"));
      algo_ = best.algo;
      KILN_RETURN_IF_ERROR(
          lib.Check(lib.cudnnGetConvolutionForwardWorkspaceSize(handle, xd_, wd_, cd_, yd_, best.algo, &workspace_),
                    "cudnnGetConvolutionForwardWorkspaceSize"));
      break;
    }
    case Kind::kBackwardInput: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMaxAlgos];
      cudnnStatus_t s =
          lib.cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, wd_, yd_, cd_, xd_, kMaxAlgos, &returned, perf);
      KILN_ASSIGN_OR_RETURN(cudnnConvolutionBwdDataAlgoPerf_t best,
                            FirstUsable(lib, s, perf, returned, "cudnnGetConvolutionBackwardDataAlgorithm_v7"));
      algo_ = best.algo;
      KILN_RETURN_IF_ERROR(lib.Check(
          lib.cudnnGetConvolutionBackwardDataWorkspaceSize(handle, wd_, yd_, cd_, xd_, best.algo, &workspace_),
          "cudnnGetConvolutionBackwardDataWorkspaceSize"));
      break;
    }
    case Kind::kBackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMaxAlgos];
      cudnnStatus_t s =
          lib.cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, xd_, yd_, cd_, wd_, kMaxAlgos, &returned, perf);
      KILN_ASSIGN_OR_RETURN(cudnnConvolutionBwdFilterAlgoPerf_t best,
                            FirstUsable(lib, s, perf, returned, "cudnnGetConvolutionBackwardFilterAlgorithm_v7"));
      algo_ = best.algo;
      KILN_RETURN_IF_ERROR(lib.Check(
          lib.cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, xd_, yd_, cd_, wd_, best.algo, &workspace_),
          "cudnnGetConvolutionBackwardFilterWorkspaceSize"));
      break;
    }
  }
  // Scratch: the packed KCRS filter (when the thunk's is not), the padded
  // x (when staged), then cuDNN's workspace.
  filter_bytes_ = p.filter_source ? AlignUp(static_cast<uint64_t>(p.filter_elements * p.element_bytes), 256) : 0;
  x_bytes_ = p.x_staging ? AlignUp(static_cast<uint64_t>(p.x_staging->elements * p.element_bytes), 256) : 0;
  return Status::Ok();
}

Status CudnnConvolution::Run(cudnnHandle_t handle, const std::vector<uint64_t>& operands, uint64_t result,
                             const CudaScratch& scratch) const {
  const CudnnConvolutionPlan& p = plan_;
  const CudnnLibrary& lib = lib_;
  if (operands.size() != 2) return Error("convolution: expected 2 operand addresses");
  if (empty_result()) return Status::Ok();
  uint64_t x = 0, w = 0, y = 0;
  switch (p.kind) {
    case Kind::kForward: x = operands[0], w = operands[1], y = result; break;
    case Kind::kBackwardInput: y = operands[0], w = operands[1], x = result; break;
    case Kind::kBackwardFilter: x = operands[0], y = operands[1], w = result; break;
  }
  x += static_cast<uint64_t>(p.x_offset_elements * p.element_bytes);

  uint64_t base = 0;
  if (filter_bytes_ + x_bytes_ + workspace_ > 0) {
    KILN_ASSIGN_OR_RETURN(base, scratch(filter_bytes_ + x_bytes_ + workspace_));
  }
  void* ws = workspace_ ? reinterpret_cast<void*>(base + filter_bytes_ + x_bytes_) : nullptr;
  uint64_t packed_w = p.filter_source ? base : w;
  const uint64_t thunk_x = x;  // the thunk's x, past any cropped start
  if (p.x_staging) x = base + filter_bytes_;
  const uint64_t zero_value = 0;  // 0 in every data type (cudnnSetTensor's value)
  auto staged_interior = [&](uint64_t a) {
    return reinterpret_cast<void*>(a + static_cast<uint64_t>(p.x_staging->interior_offset * p.element_bytes));
  };

  float one_f = 1, zero_f = 0;
  double one_d = 1, zero_d = 0;
  bool f64 = p.compute_type == CUDNN_DATA_DOUBLE;
  const void* one = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  if (p.filter_source && p.kind != Kind::kBackwardFilter)
    KILN_RETURN_IF_ERROR(StageFilter(handle, w, packed_w, /*to_packed=*/true, one, zero));
  if (p.x_staging && p.kind != Kind::kBackwardInput) {
    KILN_RETURN_IF_ERROR(lib.Check(lib.cudnnSetTensor(handle, padded_d_, reinterpret_cast<void*>(x), &zero_value),
                                   "cudnnSetTensor of the padded input"));
    KILN_RETURN_IF_ERROR(lib.Check(lib.cudnnTransformTensor(handle, one, source_d_, reinterpret_cast<void*>(thunk_x),
                                                            zero, interior_d_, staged_interior(x)),
                                   "cudnnTransformTensor of the input into its padding"));
  }
  auto at = [&](uint64_t a, int64_t group, int64_t group_offset) {
    return reinterpret_cast<void*>(a + static_cast<uint64_t>(group * group_offset * p.element_bytes));
  };
  for (int64_t g = 0; g < p.batch_groups; ++g) {
    void* xg = at(x, g, p.x_group_offset);
    void* yg = at(y, g, p.y_group_offset);
    void* wg = at(packed_w, g, p.filter_group_offset);
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    const char* call = "";
    switch (p.kind) {
      case Kind::kForward:
        call = "cudnnConvolutionForward";
        s = lib.cudnnConvolutionForward(handle, one, xd_, xg, wd_, wg, cd_,
                                        static_cast<cudnnConvolutionFwdAlgo_t>(algo_), ws, workspace_, zero, yd_, yg);
        break;
      case Kind::kBackwardInput:
        call = "cudnnConvolutionBackwardData";
        s = lib.cudnnConvolutionBackwardData(handle, one, wd_, wg, yd_, yg, cd_,
                                             static_cast<cudnnConvolutionBwdDataAlgo_t>(algo_), ws, workspace_, zero,
                                             xd_, xg);
        break;
      case Kind::kBackwardFilter:
        call = "cudnnConvolutionBackwardFilter";
        s = lib.cudnnConvolutionBackwardFilter(handle, one, xd_, xg, yd_, yg, cd_,
                                               static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo_), ws, workspace_,
                                               zero, wd_, wg);
        break;
    }
    KILN_RETURN_IF_ERROR(lib.Check(s, call));
  }
  if (p.x_staging && p.kind == Kind::kBackwardInput) {
    if (p.x_staging->whole) {
      // The cropped parts of x get no gradient: zeros.
      uint64_t x_start = thunk_x - static_cast<uint64_t>(p.x_offset_elements * p.element_bytes);
      KILN_RETURN_IF_ERROR(lib.Check(lib.cudnnSetTensor(handle, whole_d_, reinterpret_cast<void*>(x_start), &zero_value),
                                     "cudnnSetTensor of the input gradient"));
    }
    KILN_RETURN_IF_ERROR(lib.Check(lib.cudnnTransformTensor(handle, one, interior_d_, staged_interior(x), zero,
                                                            source_d_, reinterpret_cast<void*>(thunk_x)),
                                   "cudnnTransformTensor of the input gradient out of its padding"));
  }
  if (p.filter_source && p.kind == Kind::kBackwardFilter)
    return StageFilter(handle, w, packed_w, /*to_packed=*/false, one, zero);
  return Status::Ok();
}

Status CudaConvolution(const CudnnLibrary& lib, cudnnHandle_t handle, const th::ConvolutionThunk& conv,
                       const std::vector<uint64_t>& operands, uint64_t result, const CudaScratch& scratch) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CudnnConvolution> c, CudnnConvolution::Create(lib, handle, conv));
  return c->Run(handle, operands, result, scratch);
}

}  // namespace kiln::kernels
