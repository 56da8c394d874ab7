// ConvolutionCanonicalization: every convolution in the form library thunks
// take (cuDNN, host im2col + GEMM), or a dot when it is one.
//
// Canonical is feature-last (NHWC-style) throughout, as XLA's CPU conv
// canonicalization uses: input b01f, kernel 01io, output b01f (b0f_0io->b0f
// in 1D, b012f_012io->b012f in 3D); the feature-major NCHW/KCRS form
// (bf01_oi01->bf01), which cuDNN takes as it is, is left alone too, and
// feature-major activations keep their order (only the kernel moves).
// Other dim_labels get transposes of the
// operands into that order and a transpose of the result back; window,
// group counts and every other attribute stay as they are, since relabelling
// dimensions changes neither the window nor the sums (spatial dimensions
// keep their order, so the window's per-dimension entries still match).
//
// A convolution with a 1x1 kernel, no padding, stride or dilation and no
// groups is a matrix product over the features:
//   out[b, s..., o] = sum_i in[b, s..., i] * kernel[i, o]
// so it becomes reshape -> dot -> reshape (plus a transpose where the input
// keeps the feature between other dimensions, and one of the result where
// the output order differs) and reaches the GEMM thunk through
// DotCanonicalization, which runs after this pass. Only the convolutions
// the libraries take (passes::IsLibraryConvolution) are rewritten: integer,
// pred and mixed-type ones are kernel ops that codegen reads in any
// dim_labels, so transposing them would only add kernels.
#include <algorithm>

#include "compiler/passes/dot_precision.h"
#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"

namespace kiln::passes {
namespace {

using hlo::ConvDimensionNumbers;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Dimension orders that put each operand into canonical order:
// [batch, spatial..., feature] (input and output) and
// [spatial..., input feature, output feature] (kernel).
std::vector<int64_t> BatchSpatialFeature(int64_t batch, const std::vector<int64_t>& spatial,
                                         int64_t feature) {
  std::vector<int64_t> order{batch};
  order.insert(order.end(), spatial.begin(), spatial.end());
  order.push_back(feature);
  return order;
}
std::vector<int64_t> CanonicalInputOrder(const ConvDimensionNumbers& dn) {
  return BatchSpatialFeature(dn.input_batch, dn.input_spatial, dn.input_feature);
}
std::vector<int64_t> CanonicalOutputOrder(const ConvDimensionNumbers& dn) {
  return BatchSpatialFeature(dn.output_batch, dn.output_spatial, dn.output_feature);
}
std::vector<int64_t> CanonicalKernelOrder(const ConvDimensionNumbers& dn) {
  std::vector<int64_t> order = dn.kernel_spatial;
  order.push_back(dn.kernel_input_feature);
  order.push_back(dn.kernel_output_feature);
  return order;
}

// The canonical dim_labels for `spatial` spatial dimensions.
ConvDimensionNumbers CanonicalLabels(int64_t spatial) {
  ConvDimensionNumbers dn;
  dn.input_batch = dn.output_batch = 0;
  dn.input_feature = dn.output_feature = spatial + 1;
  dn.kernel_input_feature = spatial;
  dn.kernel_output_feature = spatial + 1;
  for (int64_t i = 0; i < spatial; ++i) {
    dn.input_spatial.push_back(i + 1);
    dn.output_spatial.push_back(i + 1);
    dn.kernel_spatial.push_back(i);
  }
  return dn;
}

// The feature-major (NCHW / KCRS) orders: [batch, feature, spatial...] and
// [output feature, input feature, spatial...].
std::vector<int64_t> LeadingPair(int64_t a, int64_t b, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> order{a, b};
  order.insert(order.end(), spatial.begin(), spatial.end());
  return order;
}
std::vector<int64_t> FeatureMajorInputOrder(const ConvDimensionNumbers& dn) {
  return LeadingPair(dn.input_batch, dn.input_feature, dn.input_spatial);
}
std::vector<int64_t> FeatureMajorOutputOrder(const ConvDimensionNumbers& dn) {
  return LeadingPair(dn.output_batch, dn.output_feature, dn.output_spatial);
}
std::vector<int64_t> FeatureMajorKernelOrder(const ConvDimensionNumbers& dn) {
  return LeadingPair(dn.kernel_output_feature, dn.kernel_input_feature, dn.kernel_spatial);
}

// bf01_oi01->bf01 for two spatial dimensions.
ConvDimensionNumbers FeatureMajorLabels(int64_t spatial) {
  ConvDimensionNumbers dn;
  dn.input_batch = dn.output_batch = dn.kernel_output_feature = 0;
  dn.input_feature = dn.output_feature = dn.kernel_input_feature = 1;
  for (int64_t i = 0; i < spatial; ++i) {
    dn.input_spatial.push_back(i + 2);
    dn.output_spatial.push_back(i + 2);
    dn.kernel_spatial.push_back(i + 2);
  }
  return dn;
}

// The permutation p with p[perm[i]] = i.
std::vector<int64_t> Inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return inverse;
}

// A 1x1 convolution without padding, stride, dilation or groups over real
// floating-point values: a dot over the features.
bool IsDotLike(const HloInstruction& conv, const ConvDimensionNumbers& dn) {
  if (conv.GetInt("feature_group_count", 1) != 1 || conv.GetInt("batch_group_count", 1) != 1) return false;
  for (const Shape* s : {&conv.shape(), &conv.operand(0)->shape(), &conv.operand(1)->shape()})
    if (!IsFloat(s->element_type())) return false;
  for (int64_t d : dn.kernel_spatial)
    if (conv.operand(1)->shape().dim(d) != 1) return false;
  if (const hlo::Window* window = conv.GetAttribute<hlo::Window>("window"))
    for (const hlo::WindowDim& w : window->dims)
      if (w.size != 1 || w.stride != 1 || w.pad_low != 0 || w.pad_high != 0 || w.lhs_dilation != 1 ||
          w.rhs_dilation != 1)
        return false;
  return true;
}

class ConvRewriter {
 public:
  ConvRewriter(HloInstruction* conv, const ConvDimensionNumbers& dn, NameUniquer& names)
      : conv_(conv), dn_(dn), comp_(*conv->parent()), names_(names) {}

  // Transposes in, canonical convolution, transpose back out.
  // Activations already feature-major (NCHW) keep that order, which cuDNN
  // takes, and only the kernel moves; anything else goes feature-last.
  Status ToCanonical() {
    const int64_t spatial = static_cast<int64_t>(dn_.input_spatial.size());
    bool feature_major = IsIdentityPermutation(FeatureMajorInputOrder(dn_)) &&
                         IsIdentityPermutation(FeatureMajorOutputOrder(dn_));
    std::vector<int64_t> in_order = feature_major ? FeatureMajorInputOrder(dn_) : CanonicalInputOrder(dn_);
    std::vector<int64_t> k_order = feature_major ? FeatureMajorKernelOrder(dn_) : CanonicalKernelOrder(dn_);
    std::vector<int64_t> out_order = feature_major ? FeatureMajorOutputOrder(dn_) : CanonicalOutputOrder(dn_);
    HloInstruction* input = Transpose(conv_->operand(0), in_order, conv_->operand(0)->name() + ".conv_t");
    HloInstruction* kernel = Transpose(conv_->operand(1), k_order, conv_->operand(1)->name() + ".conv_t");
    std::unique_ptr<HloInstruction> clone =
        conv_->CloneWithOperands({input, kernel}, names_.Get(conv_->name() + ".canonical"));
    clone->mutable_shape() = Permuted(conv_->shape(), out_order);
    clone->SetAttribute("dim_labels", feature_major ? FeatureMajorLabels(spatial) : CanonicalLabels(spatial));
    clone->set_location(conv_->location());
    HloInstruction* canonical = comp_.AddInstruction(std::move(clone));
    return Replace(Transpose(canonical, Inverse(out_order), conv_->name() + ".result"));
  }

  // reshape -> dot -> reshape, for IsDotLike convolutions.
  Status ToDot() {
    const Shape& in_shape = conv_->operand(0)->shape();
    const Shape& k_shape = conv_->operand(1)->shape();
    // The input's other dimensions, in its order, become the dot's M.
    std::vector<int64_t> rows, row_dims;
    for (int64_t d = 0; d < in_shape.rank(); ++d)
      if (d != dn_.input_feature) rows.push_back(d), row_dims.push_back(in_shape.dim(d));
    int64_t m = 1;
    for (int64_t size : row_dims) m *= size;
    const int64_t c = in_shape.dim(dn_.input_feature);
    const int64_t o = k_shape.dim(dn_.kernel_output_feature);
    // A feature dimension first or last is absorbed by the dot ([c,m] or
    // [m,c]); one in the middle is moved last.
    HloInstruction* lhs = conv_->operand(0);
    bool feature_first = dn_.input_feature == 0;
    if (!feature_first && dn_.input_feature != in_shape.rank() - 1) {
      std::vector<int64_t> perm = rows;
      perm.push_back(dn_.input_feature);
      lhs = Transpose(lhs, perm, lhs->name() + ".conv_t");
    }
    lhs = Reshape(lhs, feature_first ? std::vector<int64_t>{c, m} : std::vector<int64_t>{m, c},
                  conv_->operand(0)->name() + ".conv_r");
    // The kernel's spatial dimensions are all 1: a reshape drops them.
    bool kernel_oi = dn_.kernel_output_feature < dn_.kernel_input_feature;
    HloInstruction* rhs =
        Reshape(conv_->operand(1), kernel_oi ? std::vector<int64_t>{o, c} : std::vector<int64_t>{c, o},
                conv_->operand(1)->name() + ".conv_r");
    HloInstruction* dot = Add(HloOpcode::kDot, Shape(conv_->shape().element_type(), {m, o}), {lhs, rhs},
                              conv_->name() + ".dot");
    dot->SetAttribute("lhs_contracting_dims", std::vector<int64_t>{feature_first ? 0 : 1});
    dot->SetAttribute("rhs_contracting_dims", std::vector<int64_t>{kernel_oi ? 1 : 0});
    if (const hlo::Attribute* md = conv_->FindAttribute("metadata")) dot->SetAttribute("metadata", md->value);
    CopyDotPrecision(*conv_, *dot);
    // [m, o] is [input's other dimensions..., o] row-major.
    std::vector<int64_t> position = DotResultPositions(rows);
    row_dims.push_back(o);
    HloInstruction* out =
        Reshape(dot, row_dims, conv_->name() + (IsIdentityPermutation(position) ? ".result" : ".dot_r"));
    return Replace(Transpose(out, position, conv_->name() + ".result"));
  }

 private:
  // For each output dimension, its position in [rows..., output feature]
  // (`rows`: the input's dimensions other than the feature, in order): the
  // transpose from the dot's reshaped result to the output.
  std::vector<int64_t> DotResultPositions(const std::vector<int64_t>& rows) const {
    auto row_of = [&](int64_t input_dim) {
      return static_cast<int64_t>(std::find(rows.begin(), rows.end(), input_dim) - rows.begin());
    };
    std::vector<int64_t> position(conv_->shape().rank());
    position[dn_.output_batch] = row_of(dn_.input_batch);
    for (size_t i = 0; i < dn_.output_spatial.size(); ++i)
      position[dn_.output_spatial[i]] = row_of(dn_.input_spatial[i]);
    position[dn_.output_feature] = static_cast<int64_t>(rows.size());
    return position;
  }

  HloInstruction* Add(HloOpcode opcode, const Shape& shape, std::vector<HloInstruction*> operands,
                      const std::string& name) {
    HloInstruction* inst = AddInstruction(comp_, opcode, shape, operands, names_.Get(name));
    inst->set_location(conv_->location());
    return inst;
  }

  static Shape Permuted(const Shape& shape, const std::vector<int64_t>& perm) {
    std::vector<int64_t> dims;
    for (int64_t d : perm) dims.push_back(shape.dim(d));
    return Shape(shape.element_type(), dims);
  }

  // transpose(v), dimensions=perm; v itself for the identity.
  HloInstruction* Transpose(HloInstruction* v, const std::vector<int64_t>& perm, const std::string& name) {
    if (IsIdentityPermutation(perm)) return v;
    HloInstruction* t = Add(HloOpcode::kTranspose, Permuted(v->shape(), perm), {v}, name);
    t->SetAttribute("dimensions", perm);
    return t;
  }

  // reshape(v) to `dims`; v itself when it has them.
  HloInstruction* Reshape(HloInstruction* v, const std::vector<int64_t>& dims, const std::string& name) {
    if (v->shape().dims() == dims) return v;
    return Add(HloOpcode::kReshape, Shape(v->shape().element_type(), dims), {v}, name);
  }

  Status Replace(HloInstruction* result) {
    conv_->ReplaceAllUsesWith(result);
    return comp_.RemoveInstruction(conv_);
  }

  HloInstruction* conv_;
  const ConvDimensionNumbers& dn_;
  hlo::HloComputation& comp_;
  NameUniquer& names_;
};

bool IsFeatureMajor(const ConvDimensionNumbers& dn) {
  return IsIdentityPermutation(FeatureMajorInputOrder(dn)) &&
         IsIdentityPermutation(FeatureMajorKernelOrder(dn)) &&
         IsIdentityPermutation(FeatureMajorOutputOrder(dn));
}

// Feature-last (b01f_01io->b01f), or the feature-major NCHW form
// (bf01_oi01->bf01) that cuDNN also takes directly: transposing those would
// only add two kernels per convolution.
bool IsCanonical(const ConvDimensionNumbers& dn) {
  bool feature_last = IsIdentityPermutation(CanonicalInputOrder(dn)) &&
                      IsIdentityPermutation(CanonicalKernelOrder(dn)) &&
                      IsIdentityPermutation(CanonicalOutputOrder(dn));
  return feature_last || IsFeatureMajor(dn);
}

}  // namespace

StatusOr<bool> ConvolutionCanonicalization::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  for (hlo::HloComputation* comp : module.computations()) {
    for (HloInstruction* inst : comp->PostOrder()) {
      if (inst->opcode() != HloOpcode::kConvolution) continue;
      const ConvDimensionNumbers* dn = inst->GetAttribute<ConvDimensionNumbers>("dim_labels");
      if (!dn || inst->operand_count() != 2) return Error(inst->DebugName() + ": malformed convolution");
      if (!IsLibraryConvolution(*inst)) continue;
      ConvDimensionNumbers labels = *dn;  // the rewrite removes `inst`
      ConvRewriter rewriter(inst, labels, names);
      if (IsDotLike(*inst, labels)) KILN_RETURN_IF_ERROR(rewriter.ToDot());
      else if (!IsCanonical(labels)) KILN_RETURN_IF_ERROR(rewriter.ToCanonical());
      else continue;
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln::passes
