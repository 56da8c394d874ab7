// Convolution geometry from a ConvolutionThunk; see convolution_geometry.h.
#include "kernels_lib/convolution_geometry.h"

#include <string>

namespace kiln::kernels {
namespace {

namespace th = ::kiln::thunks;

std::string Str(int64_t v) { return std::to_string(v); }

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Sizes and strides of `dims` (one role's spatial dimensions) of `shape`.
SpatialDims Spatial(const Shape& shape, const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& dims) {
  SpatialDims s;
  for (int64_t d : dims) {
    s.size.push_back(shape.dim(d));
    s.stride.push_back(strides[d]);
  }
  return s;
}

Status CheckTypes(const th::ConvolutionThunk& c) {
  if (c.kind != th::ConvolutionKind::kForward)
    return Error("Unimplemented: host convolution of kind " + std::string(th::ConvolutionKindName(c.kind)) +
                 " (only forward)");
  if (c.operands.size() != 2 || c.operand_shapes.size() != 2)
    return Error("convolution: a forward convolution takes 2 operands, got " + Str(c.operands.size()));
  return Status::Ok();
}

// The dimension numbers must name every dimension of each operand once.
bool IsPermutation(int64_t a, int64_t b, const std::vector<int64_t>& rest, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  auto mark = [&](int64_t d) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
    return true;
  };
  if (!mark(a) || !mark(b)) return false;
  for (int64_t d : rest)
    if (!mark(d)) return false;
  return static_cast<int64_t>(rest.size()) + 2 == rank;
}

}  // namespace

int64_t ConvolutionGeometry::KernelSpatialCount() const { return Product(kernel_spatial.size); }
int64_t ConvolutionGeometry::OutputSpatialCount() const { return Product(output_spatial.size); }

int64_t WindowOutputSize(int64_t input, const th::WindowDimension& w) {
  int64_t dilated_input = input == 0 ? 0 : (input - 1) * w.lhs_dilation + 1;
  int64_t padded = dilated_input + w.padding_low + w.padding_high;
  int64_t dilated_window = w.size == 0 ? 0 : (w.size - 1) * w.rhs_dilation + 1;
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

StatusOr<std::vector<int64_t>> ElementStrides(const Shape& shape) {
  if (!shape.IsArray()) return Error("convolution: operand " + shape.ToString() + " is not an array");
  if (shape.has_layout() && (!shape.layout()->tiles.empty() || shape.layout()->element_size_in_bits != 0))
    return Error("Unimplemented: host convolution of " + shape.ToString() + " (tiled or packed layout)");
  std::vector<int64_t> m2m = shape.MinorToMajor();
  if (static_cast<int64_t>(m2m.size()) != shape.rank())
    return Error("convolution: layout of " + shape.ToString() + " does not match its rank");
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 0);
  int64_t stride = 1;
  for (int64_t d : m2m) {
    if (d < 0 || d >= shape.rank()) return Error("convolution: bad layout in " + shape.ToString());
    strides[d] = stride;
    stride *= shape.dim(d);
  }
  return strides;
}

StatusOr<ConvolutionGeometry> PlanConvolution(const th::ConvolutionThunk& c) {
  KILN_RETURN_IF_ERROR(CheckTypes(c));
  const Shape& in = c.operand_shapes[0];
  const Shape& k = c.operand_shapes[1];
  const Shape& out = c.result_shape;
  const th::ConvolutionDimensions& d = c.dimensions;
  const int64_t n = static_cast<int64_t>(c.window.size());
  if (!IsPermutation(d.input_batch, d.input_feature, d.input_spatial, in.rank()) ||
      !IsPermutation(d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial, k.rank()) ||
      !IsPermutation(d.output_batch, d.output_feature, d.output_spatial, out.rank()) ||
      static_cast<int64_t>(d.input_spatial.size()) != n)
    return Error("convolution: dimension numbers do not match " + in.ToString() + " x " + k.ToString() + " -> " +
                 out.ToString() + " with " + Str(n) + " spatial dimensions");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> is, ElementStrides(in));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ks, ElementStrides(k));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> os, ElementStrides(out));

  ConvolutionGeometry g;
  g.spatial_rank = n;
  g.window = c.window;
  g.input_batch = in.dim(d.input_batch);
  g.input_features = in.dim(d.input_feature);
  g.input_batch_stride = is[d.input_batch];
  g.input_feature_stride = is[d.input_feature];
  g.input_spatial = Spatial(in, is, d.input_spatial);
  g.kernel_input_features = k.dim(d.kernel_input_feature);
  g.output_features = k.dim(d.kernel_output_feature);
  g.kernel_input_stride = ks[d.kernel_input_feature];
  g.kernel_output_stride = ks[d.kernel_output_feature];
  g.kernel_spatial = Spatial(k, ks, d.kernel_spatial);
  g.output_batch = out.dim(d.output_batch);
  g.output_batch_stride = os[d.output_batch];
  g.output_feature_stride = os[d.output_feature];
  g.output_spatial = Spatial(out, os, d.output_spatial);
  g.feature_group_count = c.feature_group_count;
  g.batch_group_count = c.batch_group_count;
  g.input_elements = in.ElementCount();
  g.kernel_elements = k.ElementCount();
  g.output_elements = out.ElementCount();

  for (int64_t i = 0; i < n; ++i) {
    const th::WindowDimension& w = c.window[i];
    if (w.size < 1 || w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1)
      return Error("convolution: window dimension " + Str(i) + " has a non-positive size, stride or dilation");
    if (w.size != g.kernel_spatial.size[i])
      return Error("convolution: window size " + Str(w.size) + " differs from kernel spatial size " +
                   Str(g.kernel_spatial.size[i]));
    int64_t expected = WindowOutputSize(g.input_spatial.size[i], w);
    if (expected != g.output_spatial.size[i])
      return Error("convolution: output spatial dimension " + Str(i) + " is " + Str(g.output_spatial.size[i]) +
                   ", the window gives " + Str(expected));
  }
  const int64_t fgc = g.feature_group_count, bgc = g.batch_group_count;
  if (fgc < 1 || bgc < 1) return Error("convolution: group counts must be positive");
  if (g.kernel_input_features * fgc != g.input_features)
    return Error("convolution: input features " + Str(g.input_features) + " != kernel input features " +
                 Str(g.kernel_input_features) + " x feature_group_count " + Str(fgc));
  if (g.output_features % fgc != 0 || g.output_features % bgc != 0 || g.input_batch % bgc != 0)
    return Error("convolution: output features " + Str(g.output_features) + " / batch " + Str(g.input_batch) +
                 " not divisible by the group counts");
  if (g.output_batch != g.input_batch / bgc || out.dim(d.output_feature) != g.output_features)
    return Error("convolution: output " + out.ToString() + " does not match the operands' batch and features");
  return g;
}

}  // namespace kiln::kernels
