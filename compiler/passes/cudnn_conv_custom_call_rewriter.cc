// CudnnConvCustomCallRewriter: see cudnn_conv_custom_call_rewriter.h.
#include "compiler/passes/cudnn_conv_custom_call_rewriter.h"

#include <cmath>
#include <string>
#include <vector>

#include "compiler/evaluator/cudnn_conv_calls.h"
#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

using ConvKind = hlo::CudnnConvKind;
using ConvConfig = hlo::CudnnConvConfig;

class Rewrite {
 public:
  Rewrite(HloInstruction* call, ConvKind kind, NameUniquer& names)
      : call_(call), kind_(kind), comp_(*call->parent()), names_(names) {}

  StatusOr<HloInstruction*> Run() {
    KILN_ASSIGN_OR_RETURN(ConvConfig config, hlo::ParseCudnnConvConfig(*call_));
    const Shape& shape = call_->shape();
    const Shape* out = &shape;
    if (shape.IsTuple()) {
      if (shape.tuple_size() != 2 || !shape.tuple_shape(0).IsArray() || !shape.tuple_shape(1).IsArray() ||
          shape.tuple_shape(1).element_type() != ElementType::kU8)
        return Malformed("its result must be (result, u8[] scratch)");
      out = &shape.tuple_shape(0);
    }
    if (!out->IsArray()) return Malformed("its result must be an array");
    out_ = Shape(out->element_type(), out->dims());
    dn_ = call_->GetAttribute<hlo::ConvDimensionNumbers>("dim_labels");
    if (!dn_) return Malformed("no dim_labels");
    const size_t spatial = dn_->input_spatial.size();
    const int64_t operands = kind_ == ConvKind::kBiasActivation ? call_->operand_count() : 2;
    if (call_->operand_count() != operands || operands < 2 || operands > 4)
      return Malformed("it takes " + std::string(kind_ == ConvKind::kBiasActivation ? "3 or 4" : "2") + " operands");
    for (int64_t i = 0; i < operands; ++i)
      if (!call_->operand(i)->shape().IsArray()) return Malformed("an operand is not an array");
    const Shape& filter = kind_ == ConvKind::kBackwardFilter ? out_ : call_->operand(1)->shape();
    const int64_t rank = static_cast<int64_t>(spatial) + 2;
    if (call_->operand(0)->shape().rank() != rank || call_->operand(1)->shape().rank() != rank || out_.rank() != rank)
      return Malformed("operand and result ranks must match dim_labels");
    if (const hlo::Window* w = call_->GetAttribute<hlo::Window>("window")) {
      window_ = *w;
    } else {
      for (int64_t s : dn_->kernel_spatial) window_.dims.push_back(hlo::WindowDim{filter.dim(s)});
    }
    if (window_.dims.size() != spatial) return Malformed("the window and dim_labels disagree");
    feature_groups_ = call_->GetInt("feature_group_count", 1);
    batch_groups_ = call_->GetInt("batch_group_count", 1);
    if (kind_ == ConvKind::kBiasActivation && operands == 3 && config.side_input_scale != 0)
      return Malformed("side_input_scale without a side input");

    HloInstruction* r = nullptr;
    switch (kind_) {
      case ConvKind::kForward:
      case ConvKind::kBiasActivation:
        r = Convolution(call_->operand(0), call_->operand(1), *dn_, window_, feature_groups_, batch_groups_);
        break;
      case ConvKind::kBackwardInput: {
        KILN_ASSIGN_OR_RETURN(r, BackwardInput());
        break;
      }
      case ConvKind::kBackwardFilter: {
        KILN_ASSIGN_OR_RETURN(r, BackwardFilter());
        break;
      }
    }
    if (config.conv_result_scale != 1) r = Bin(HloOpcode::kMultiply, r, Splat(config.conv_result_scale));
    if (kind_ == ConvKind::kBiasActivation) {
      if (operands == 4 && config.side_input_scale != 0) {
        if (call_->operand(3)->shape().dims() != out_.dims()) return Malformed("the side input's shape");
        HloInstruction* side = Convert(call_->operand(3));
        if (config.side_input_scale != 1) side = Bin(HloOpcode::kMultiply, side, Splat(config.side_input_scale));
        r = Bin(HloOpcode::kAdd, r, side);
      }
      const Shape& bias = call_->operand(2)->shape();
      if (bias.rank() != 1 || bias.dim(0) != out_.dim(dn_->output_feature))
        return Malformed("the bias must hold one value per output feature");
      HloInstruction* b = Add(HloOpcode::kBroadcast, out_, {Convert(call_->operand(2))});
      b->SetAttribute("dimensions", std::vector<int64_t>{dn_->output_feature});
      r = Bin(HloOpcode::kAdd, r, b);
      KILN_ASSIGN_OR_RETURN(r, Activate(r, config));
    } else if (config.activation != "kNone") {
      return Malformed("activation_mode " + config.activation + " on a convolution without bias");
    }
    if (!shape.IsTuple()) return r;
    HloInstruction* scratch = AddSplat(comp_, WithoutLayout(shape.tuple_shape(1)), 0, names_, call_->name() + ".scratch");
    return Add(HloOpcode::kTuple, Shape::Tuple({out_, WithoutLayout(shape.tuple_shape(1))}), {r, scratch});
  }

 private:
  Status Malformed(const std::string& why) const {
    return Error(call_->DebugName() + ": malformed " + call_->GetString("custom_call_target") + " call (" + why + ")");
  }
  HloInstruction* Add(HloOpcode op, const Shape& shape, const std::vector<HloInstruction*>& operands) {
    return AddInstruction(comp_, op, shape, operands, names_.Get(call_->name() + "." + std::string(hlo::OpcodeName(op))));
  }
  HloInstruction* Bin(HloOpcode op, HloInstruction* a, HloInstruction* b) { return Add(op, out_, {a, b}); }
  HloInstruction* Splat(double value) { return AddSplat(comp_, out_, value, names_, call_->name()); }
  HloInstruction* Convert(HloInstruction* x) {
    if (x->shape().element_type() == out_.element_type()) return x;
    return Add(HloOpcode::kConvert, Shape(out_.element_type(), x->shape().dims()), {x});
  }

  HloInstruction* Convolution(HloInstruction* lhs, HloInstruction* rhs, const hlo::ConvDimensionNumbers& dn,
                              const hlo::Window& window, int64_t feature_groups, int64_t batch_groups) {
    HloInstruction* conv = Add(HloOpcode::kConvolution, out_, {lhs, rhs});
    conv->SetAttribute("window", window);
    conv->SetAttribute("dim_labels", dn);
    if (feature_groups != 1) conv->SetAttribute("feature_group_count", feature_groups);
    if (batch_groups != 1) conv->SetAttribute("batch_group_count", batch_groups);
    return conv;
  }

  // The gradient forms are defined for plain forward windows only.
  Status CheckGradientWindow() const {
    if (batch_groups_ != 1) return Malformed("batch_group_count on a backward convolution");
    for (const hlo::WindowDim& w : window_.dims)
      if (w.lhs_dilation != 1 || w.reversal || w.stride < 1 || w.rhs_dilation < 1)
        return Malformed("a backward convolution's window must have no lhs dilation or reversal");
    return Status::Ok();
  }

  // dx = conv(dy, w'), w' the filter reversed in space (window reversal)
  // with, per feature group g, w'[r, k, g*C/G + c] = w[r, c, g*K/G + k]:
  // without groups just w with its feature roles swapped, no data moved.
  StatusOr<HloInstruction*> BackwardInput() {
    KILN_RETURN_IF_ERROR(CheckGradientWindow());
    HloInstruction* dy = call_->operand(0);
    HloInstruction* filter = call_->operand(1);
    const Shape& ws = filter->shape();
    const hlo::ConvDimensionNumbers& d = *dn_;
    const int64_t spatial = static_cast<int64_t>(d.kernel_spatial.size()), groups = feature_groups_;
    const int64_t c_per_group = ws.dim(d.kernel_input_feature), k = ws.dim(d.kernel_output_feature);
    if (groups < 1 || k % groups != 0) return Malformed("feature_group_count does not divide the filter's outputs");
    hlo::ConvDimensionNumbers g;
    g.input_batch = d.output_batch;
    g.input_feature = d.output_feature;
    g.input_spatial = d.output_spatial;
    g.kernel_spatial = d.kernel_spatial;
    g.kernel_input_feature = d.kernel_output_feature;
    g.kernel_output_feature = d.kernel_input_feature;
    g.output_batch = d.input_batch;
    g.output_feature = d.input_feature;
    g.output_spatial = d.input_spatial;
    if (groups != 1) {
      // [s, C/G, K] -> [s, C/G, G, K/G] -> [s, K/G, G, C/G] -> [s, K/G, C].
      std::vector<int64_t> perm(d.kernel_spatial.begin(), d.kernel_spatial.end());
      perm.push_back(d.kernel_input_feature);
      perm.push_back(d.kernel_output_feature);
      std::vector<int64_t> spatial_dims;
      for (int64_t s : d.kernel_spatial) spatial_dims.push_back(ws.dim(s));
      auto with = [&](std::vector<int64_t> tail) {
        std::vector<int64_t> v = spatial_dims;
        v.insert(v.end(), tail.begin(), tail.end());
        return Shape(ws.element_type(), v);
      };
      if (!IsIdentityPermutation(perm)) {
        filter = Add(HloOpcode::kTranspose, with({c_per_group, k}), {filter});
        filter->SetAttribute("dimensions", perm);
      }
      filter = Add(HloOpcode::kReshape, with({c_per_group, groups, k / groups}), {filter});
      std::vector<int64_t> regroup;
      for (int64_t i = 0; i < spatial; ++i) regroup.push_back(i);
      regroup.insert(regroup.end(), {spatial + 2, spatial + 1, spatial});
      filter = Add(HloOpcode::kTranspose, with({k / groups, groups, c_per_group}), {filter});
      filter->SetAttribute("dimensions", regroup);
      filter = Add(HloOpcode::kReshape, with({k / groups, groups * c_per_group}), {filter});
      g.kernel_spatial.clear();
      for (int64_t i = 0; i < spatial; ++i) g.kernel_spatial.push_back(i);
      g.kernel_input_feature = spatial;
      g.kernel_output_feature = spatial + 1;
    }
    hlo::Window window;
    for (int64_t i = 0; i < spatial; ++i) {
      const hlo::WindowDim& f = window_.dims[i];
      const int64_t in = out_.dim(d.input_spatial[i]), out = dy->shape().dim(d.output_spatial[i]);
      const int64_t taps = ws.dim(d.kernel_spatial[i]);
      const int64_t dilated_window = (taps - 1) * f.rhs_dilation + 1;
      const int64_t dilated_out = out == 0 ? 0 : (out - 1) * f.stride + 1;
      hlo::WindowDim b;
      b.size = taps;
      b.pad_low = dilated_window - 1 - f.pad_low;
      b.pad_high = in - dilated_out + f.pad_low;
      b.lhs_dilation = f.stride;
      b.rhs_dilation = f.rhs_dilation;
      b.reversal = true;
      window.dims.push_back(b);
    }
    return Convolution(dy, filter, g, window, groups, 1);
  }

  // dw = conv(x, dy): x's features are the batch, its batch the features.
  StatusOr<HloInstruction*> BackwardFilter() {
    KILN_RETURN_IF_ERROR(CheckGradientWindow());
    HloInstruction* x = call_->operand(0);
    HloInstruction* dy = call_->operand(1);
    const hlo::ConvDimensionNumbers& d = *dn_;
    const int64_t spatial = static_cast<int64_t>(d.input_spatial.size());
    hlo::ConvDimensionNumbers g;
    g.input_batch = d.input_feature;
    g.input_feature = d.input_batch;
    g.input_spatial = d.input_spatial;
    g.kernel_input_feature = d.output_batch;
    g.kernel_output_feature = d.output_feature;
    g.kernel_spatial = d.output_spatial;
    g.output_batch = d.kernel_input_feature;
    g.output_feature = d.kernel_output_feature;
    g.output_spatial = d.kernel_spatial;
    hlo::Window window;
    for (int64_t i = 0; i < spatial; ++i) {
      const hlo::WindowDim& f = window_.dims[i];
      const int64_t in = x->shape().dim(d.input_spatial[i]), out = dy->shape().dim(d.output_spatial[i]);
      const int64_t taps = out_.dim(d.kernel_spatial[i]);
      const int64_t dilated_out = out == 0 ? 0 : (out - 1) * f.stride + 1;
      hlo::WindowDim b;
      b.size = out;
      b.stride = f.rhs_dilation;
      b.pad_low = f.pad_low;
      b.pad_high = (taps - 1) * f.rhs_dilation + dilated_out - in - f.pad_low;
      b.rhs_dilation = f.stride;
      window.dims.push_back(b);
    }
    return Convolution(x, dy, g, window, 1, feature_groups_);
  }

  // cuDNN's activations (dnn.proto's ActivationMode).
  StatusOr<HloInstruction*> Activate(HloInstruction* x, const ConvConfig& c) {
    const std::string& a = c.activation;
    auto unary = [&](HloOpcode op, HloInstruction* v) { return Add(op, out_, {v}); };
    if (a == "kNone") return x;
    if (a == "kSigmoid") return unary(HloOpcode::kLogistic, x);
    if (a == "kTanh") return unary(HloOpcode::kTanh, x);
    if (a == "kRelu") return Bin(HloOpcode::kMaximum, x, Splat(0));
    if (a == "kRelu6") return Bin(HloOpcode::kMinimum, Bin(HloOpcode::kMaximum, x, Splat(0)), Splat(6));
    if (a == "kElu" || a == "kLeakyRelu") {
      // x > 0 ? x : (elu: e^x - 1, leaky: alpha x)
      HloInstruction* positive = Add(HloOpcode::kCompare, Shape(ElementType::kPred, out_.dims()), {x, Splat(0)});
      positive->SetAttribute("direction", hlo::EnumAttr{"GT"});
      HloInstruction* negative = a == "kElu" ? unary(HloOpcode::kExpm1, x)
                                             : Bin(HloOpcode::kMultiply, x, Splat(c.leakyrelu_alpha));
      return Add(HloOpcode::kSelect, out_, {positive, x, negative});
    }
    if (a == "kGeluExact") {
      // 0.5 x (1 + erf(x / sqrt(2)))
      HloInstruction* erf = unary(HloOpcode::kErf, Bin(HloOpcode::kMultiply, x, Splat(M_SQRT1_2)));
      return Bin(HloOpcode::kMultiply, Bin(HloOpcode::kMultiply, x, Splat(0.5)), Bin(HloOpcode::kAdd, erf, Splat(1)));
    }
    return Error(call_->DebugName() + ": " + call_->GetString("custom_call_target") + " with activation_mode " + a +
                 " is not supported (its bound is not in the HLO)");
  }

  HloInstruction* call_;
  ConvKind kind_;
  hlo::HloComputation& comp_;
  NameUniquer& names_;
  Shape out_;
  const hlo::ConvDimensionNumbers* dn_ = nullptr;
  hlo::Window window_;
  int64_t feature_groups_ = 1, batch_groups_ = 1;
};

}  // namespace

StatusOr<bool> CudnnConvCustomCallRewriter::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module,
      [](const HloInstruction& inst) {
        return inst.opcode() == HloOpcode::kCustomCall &&
               hlo::CudnnConvKindOf(inst.GetString("custom_call_target")).has_value();
      },
      [](HloInstruction* call, NameUniquer& names) {
        return Rewrite(call, *hlo::CudnnConvKindOf(call->GetString("custom_call_target")), names).Run();
      });
}

}  // namespace kiln::passes
