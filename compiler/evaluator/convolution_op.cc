// Convolution for the reference evaluator (operation_semantics "Conv").
//
// Index rules, per spatial dimension, as XLA's HloEvaluator applies them:
// output position o and kernel position k read the base-dilated, padded input
// at u = o * stride - pad_low + k * rhs_dilation; u must be a multiple of
// lhs_dilation and u / lhs_dilation inside the input, otherwise the product
// is zero (padding and dilation holes). With window reversal the kernel is
// read at size - 1 - k. pad_high only shapes the output.
//
// Groups: with feature_group_count G the input features split into G groups
// of C/G and the output features into G groups; output feature f reads input
// group f / (F/G). With batch_group_count G the input batch splits into G
// groups of N/G and output feature f reads batch group f / (F/G); the output
// batch is N/G.
//
// Operands are converted to the result type first and products accumulate in
// double / complex<double> / wrapping uint64 (see contraction_util.h). The
// work is organised per output spatial position: the list of valid
// (input offset, kernel offset) pairs is built once and reused for every
// batch and output feature.
#include <string>

#include "compiler/evaluator/contraction_util.h"

namespace kiln::hlo {

namespace {

struct ConvPlan {
  int64_t spatial_rank = 0;
  std::vector<WindowDim> window;
  std::vector<int64_t> lhs_strides, rhs_strides, out_strides;
  std::vector<int64_t> kernel_sizes, out_spatial_sizes, in_spatial_sizes;
  int64_t out_batch = 0, out_features = 0;
  int64_t input_batch = 0;
  int64_t feature_group_size = 0;   // input features per feature group
  int64_t out_per_feature_group = 0;
  int64_t batch_group_count = 1, out_per_batch_group = 0, batch_group_size = 0;
};

// Output size of one spatial dimension (shape_inference's window rules).
int64_t WindowOutputSize(int64_t input, const WindowDim& w) {
  int64_t dilated_input = input == 0 ? 0 : (input - 1) * w.lhs_dilation + 1;
  int64_t padded = dilated_input + w.pad_low + w.pad_high;
  int64_t dilated_window = w.size == 0 ? 0 : (w.size - 1) * w.rhs_dilation + 1;
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

StatusOr<ConvPlan> PlanConvolution(const HloInstruction& inst, const Shape& lhs, const Shape& rhs) {
  const ConvDimensionNumbers* dn = inst.GetAttribute<ConvDimensionNumbers>("dim_labels");
  if (!dn) return Error(inst.DebugName() + ": convolution needs dim_labels");
  const Shape& out = inst.shape();
  ConvPlan p;
  p.spatial_rank = static_cast<int64_t>(dn->input_spatial.size());
  if (static_cast<int64_t>(dn->kernel_spatial.size()) != p.spatial_rank ||
      static_cast<int64_t>(dn->output_spatial.size()) != p.spatial_rank)
    return Error(inst.DebugName() + ": dim_labels have differing numbers of spatial dimensions");
  if (lhs.rank() != p.spatial_rank + 2 || rhs.rank() != p.spatial_rank + 2 ||
      out.rank() != p.spatial_rank + 2)
    return Error(inst.DebugName() + ": operand ranks do not match dim_labels");
  auto in_range = [](int64_t d, const Shape& s) { return d >= 0 && d < s.rank(); };
  bool ok = in_range(dn->input_batch, lhs) && in_range(dn->input_feature, lhs) &&
            in_range(dn->kernel_input_feature, rhs) && in_range(dn->kernel_output_feature, rhs) &&
            in_range(dn->output_batch, out) && in_range(dn->output_feature, out);
  for (int64_t i = 0; i < p.spatial_rank; ++i)
    ok = ok && in_range(dn->input_spatial[i], lhs) && in_range(dn->kernel_spatial[i], rhs) &&
         in_range(dn->output_spatial[i], out);
  if (!ok) return Error(inst.DebugName() + ": dim_labels out of range");

  const Window* window = inst.GetAttribute<Window>("window");
  for (int64_t i = 0; i < p.spatial_rank; ++i) {
    WindowDim w;
    if (window && static_cast<int64_t>(window->dims.size()) == p.spatial_rank) w = window->dims[i];
    else if (window && !window->dims.empty())
      return Error(inst.DebugName() + ": window has " + std::to_string(window->dims.size()) +
                   " dimensions, expected " + std::to_string(p.spatial_rank));
    else w.size = rhs.dim(dn->kernel_spatial[i]);
    if (w.size != rhs.dim(dn->kernel_spatial[i]))
      return Error(inst.DebugName() + ": window size does not match the kernel");
    if (w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1)
      return Error(inst.DebugName() + ": window stride and dilations must be positive");
    p.window.push_back(w);
    p.kernel_sizes.push_back(w.size);
    p.in_spatial_sizes.push_back(lhs.dim(dn->input_spatial[i]));
    p.out_spatial_sizes.push_back(out.dim(dn->output_spatial[i]));
    int64_t expected = WindowOutputSize(lhs.dim(dn->input_spatial[i]), w);
    if (expected != out.dim(dn->output_spatial[i]))
      return Error(inst.DebugName() + ": output spatial dimension " + std::to_string(i) +
                   " should be " + std::to_string(expected));
  }

  const int64_t fgc = inst.GetInt("feature_group_count", 1);
  const int64_t bgc = inst.GetInt("batch_group_count", 1);
  if (fgc < 1 || bgc < 1) return Error(inst.DebugName() + ": group counts must be positive");
  const int64_t in_features = lhs.dim(dn->input_feature);
  const int64_t kernel_in = rhs.dim(dn->kernel_input_feature);
  p.out_features = rhs.dim(dn->kernel_output_feature);
  p.input_batch = lhs.dim(dn->input_batch);
  if (in_features % fgc != 0 || kernel_in * fgc != in_features)
    return Error(inst.DebugName() + ": input features " + std::to_string(in_features) +
                 " must equal kernel input features " + std::to_string(kernel_in) +
                 " times feature_group_count " + std::to_string(fgc));
  if (p.out_features % fgc != 0 || p.out_features % bgc != 0 || p.input_batch % bgc != 0)
    return Error(inst.DebugName() + ": output features / batch not divisible by group counts");
  p.feature_group_size = kernel_in;
  p.out_per_feature_group = p.out_features / fgc;
  p.batch_group_count = bgc;
  p.out_per_batch_group = p.out_features / bgc;
  p.batch_group_size = p.input_batch / bgc;
  p.out_batch = p.input_batch / bgc;
  if (out.dim(dn->output_batch) != p.out_batch || out.dim(dn->output_feature) != p.out_features)
    return Error(inst.DebugName() + ": output batch/feature sizes do not match the operands");
  p.lhs_strides = RowMajorStrides(lhs.dims());
  p.rhs_strides = RowMajorStrides(rhs.dims());
  p.out_strides = RowMajorStrides(out.dims());
  return p;
}

// Valid (input offset, kernel offset) pairs of spatial dimension i at output
// position o, in increasing kernel position.
std::vector<std::pair<int64_t, int64_t>> ValidTaps(const ConvPlan& p, const ConvDimensionNumbers& dn,
                                                   int64_t i, int64_t o) {
  std::vector<std::pair<int64_t, int64_t>> taps;
  const WindowDim& w = p.window[i];
  for (int64_t k = 0; k < w.size; ++k) {
    int64_t u = o * w.stride - w.pad_low + k * w.rhs_dilation;
    if (u % w.lhs_dilation != 0) continue;
    int64_t x = u / w.lhs_dilation;
    if (x < 0 || x >= p.in_spatial_sizes[i]) continue;
    int64_t kk = w.reversal ? w.size - 1 - k : k;
    taps.emplace_back(x * p.lhs_strides[dn.input_spatial[i]],
                      kk * p.rhs_strides[dn.kernel_spatial[i]]);
  }
  return taps;
}

template <typename T>
std::vector<T> RunConvolution(const ConvPlan& p, const ConvDimensionNumbers& dn,
                              const std::vector<T>& lhs, const std::vector<T>& rhs,
                              int64_t out_count) {
  std::vector<T> out(out_count, T(0));
  if (out_count == 0) return out;
  const int64_t n = p.spatial_rank;
  // taps[i][o]: valid pairs of dimension i at output position o.
  std::vector<std::vector<std::vector<std::pair<int64_t, int64_t>>>> taps(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < p.out_spatial_sizes[i]; ++o) taps[i].push_back(ValidTaps(p, dn, i, o));

  const int64_t lhs_feature_stride = p.lhs_strides[dn.input_feature];
  const int64_t rhs_feature_stride = p.rhs_strides[dn.kernel_input_feature];
  std::vector<int64_t> pos(n, 0);  // output spatial position
  std::vector<std::pair<int64_t, int64_t>> window_taps;
  std::vector<int64_t> tap(n, 0);
  while (true) {
    // All valid window taps of this output spatial position (cross product).
    window_taps.clear();
    int64_t out_spatial_offset = 0;
    bool empty = false;
    for (int64_t i = 0; i < n; ++i) {
      out_spatial_offset += pos[i] * p.out_strides[dn.output_spatial[i]];
      empty = empty || taps[i][pos[i]].empty();
    }
    if (!empty) {
      std::fill(tap.begin(), tap.end(), 0);
      while (true) {
        int64_t lo = 0, ro = 0;
        for (int64_t i = 0; i < n; ++i) {
          lo += taps[i][pos[i]][tap[i]].first;
          ro += taps[i][pos[i]][tap[i]].second;
        }
        window_taps.emplace_back(lo, ro);
        int64_t d = n - 1;
        for (; d >= 0; --d) {
          if (++tap[d] < static_cast<int64_t>(taps[d][pos[d]].size())) break;
          tap[d] = 0;
        }
        if (d < 0) break;
      }
    }
    for (int64_t b = 0; b < p.out_batch && !window_taps.empty(); ++b) {
      for (int64_t f = 0; f < p.out_features; ++f) {
        const int64_t feature_group = f / p.out_per_feature_group;
        int64_t in_batch = b;
        if (p.batch_group_count > 1) in_batch += (f / p.out_per_batch_group) * p.batch_group_size;
        const int64_t lhs_base = in_batch * p.lhs_strides[dn.input_batch] +
                                 feature_group * p.feature_group_size * lhs_feature_stride;
        const int64_t rhs_base = f * p.rhs_strides[dn.kernel_output_feature];
        T acc = T(0);
        for (const auto& [lo, ro] : window_taps) {
          const T* l = lhs.data() + lhs_base + lo;
          const T* r = rhs.data() + rhs_base + ro;
          for (int64_t z = 0; z < p.feature_group_size; ++z)
            acc += l[z * lhs_feature_stride] * r[z * rhs_feature_stride];
        }
        out[out_spatial_offset + b * p.out_strides[dn.output_batch] +
            f * p.out_strides[dn.output_feature]] = acc;
      }
    }
    int64_t d = n - 1;
    for (; d >= 0; --d) {
      if (++pos[d] < p.out_spatial_sizes[d]) break;
      pos[d] = 0;
    }
    if (d < 0) break;
  }
  return out;
}

}  // namespace

StatusOr<Literal> EvalConvolution(const HloInstruction& inst, const Operands& operands) {
  if (operands.size() != 2) return Error(inst.DebugName() + ": convolution takes two operands");
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const Shape& shape = inst.shape();
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray() || !shape.IsArray())
    return Error(inst.DebugName() + ": convolution operands and result must be arrays");
  KILN_ASSIGN_OR_RETURN(ConvPlan plan, PlanConvolution(inst, lhs.shape(), rhs.shape()));
  const ConvDimensionNumbers& dn = *inst.GetAttribute<ConvDimensionNumbers>("dim_labels");
  const ElementType type = shape.element_type();
  const int64_t count = shape.ElementCount();
  switch (AccumKindFor(type)) {
    case AccumKind::kReal:
      return StoreReal(shape, RunConvolution(plan, dn, ReadAsReal(lhs, type),
                                             ReadAsReal(rhs, type), count));
    case AccumKind::kInteger:
      return StoreInteger(shape, RunConvolution(plan, dn, ReadAsInteger(lhs, type),
                                                ReadAsInteger(rhs, type), count));
    case AccumKind::kComplex:
      return StoreComplex(shape, RunConvolution(plan, dn, ReadAsComplex(lhs, type),
                                                ReadAsComplex(rhs, type), count));
  }
  return UnsupportedOp(inst);
}

}  // namespace kiln::hlo
