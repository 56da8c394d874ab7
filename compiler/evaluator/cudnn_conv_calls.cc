// XLA GPU's cuDNN convolution custom calls; see cudnn_conv_calls.h.
#include "compiler/evaluator/cudnn_conv_calls.h"

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "compiler/evaluator/contraction_util.h"
#include "compiler/hlo/custom_call_targets.h"

namespace kiln::hlo {
namespace {

using json = nlohmann::json;

// dnn.proto's ActivationMode names, in enum order.
constexpr const char* kActivationNames[] = {"kNone", "kSigmoid",  "kRelu", "kRelu6",     "kReluX",
                                            "kTanh", "kBandPass", "kElu",  "kLeakyRelu", "kGeluExact"};

// proto3 JSON writes doubles as numbers (or strings) and enums by name;
// older dumps write enums as numbers in strings ("0").
StatusOr<double> Number(const json& v, const std::string& field) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return d;
  }
  return Error("cudnn_conv_backend_config " + field + " is not a number");
}

StatusOr<std::string> Activation(const json& v) {
  if (v.is_string())
    for (const char* name : kActivationNames)
      if (v.get<std::string>() == name) return std::string(name);
  StatusOr<double> n = Number(v, "activation_mode");
  const double count = static_cast<double>(std::size(kActivationNames));
  if (!n.ok() || *n < 0 || *n >= count || *n != std::floor(*n))
    return Error("cudnn_conv_backend_config has an unknown activation_mode " + v.dump());
  return std::string(kActivationNames[static_cast<size_t>(*n)]);
}

// The shapes of the forward convolution x * w -> y that describes the call.
struct ConvRoles {
  Shape x, w, y;
};

// Row-major strides of `s`.
std::vector<int64_t> Strides(const Shape& s) { return RowMajorStrides(s.dims()); }

double Activate(double v, const CudnnConvConfig& c) {
  const std::string& a = c.activation;
  if (a == "kSigmoid") return 1 / (1 + std::exp(-v));
  if (a == "kTanh") return std::tanh(v);
  if (a == "kRelu") return std::max(v, 0.0);
  if (a == "kRelu6") return std::min(std::max(v, 0.0), 6.0);
  if (a == "kElu") return v > 0 ? v : std::expm1(v);
  if (a == "kLeakyRelu") return v > 0 ? v : c.leakyrelu_alpha * v;
  if (a == "kGeluExact") return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  return v;
}

}  // namespace

std::optional<CudnnConvKind> CudnnConvKindOf(std::string_view target) {
  if (target == "__cudnn$convForward") return CudnnConvKind::kForward;
  if (target == "__cudnn$convBackwardInput") return CudnnConvKind::kBackwardInput;
  if (target == "__cudnn$convBackwardFilter") return CudnnConvKind::kBackwardFilter;
  if (target == "__cudnn$convBiasActivationForward") return CudnnConvKind::kBiasActivation;
  return std::nullopt;
}

StatusOr<CudnnConvConfig> ParseCudnnConvConfig(const HloInstruction& call) {
  CudnnConvConfig c;
  const std::string text = call.BackendConfig();
  if (text.empty() || text == "{}") return c;
  const std::string name = call.DebugName() + ": " + call.GetString("custom_call_target");
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return Error(name + " needs a JSON backend_config");
  const json& config = root.contains("cudnn_conv_backend_config") ? root["cudnn_conv_backend_config"] : root;
  if (!config.is_object()) return Error(name + ": cudnn_conv_backend_config is not an object");
  for (auto [field, value] : {std::pair<const char*, double*>{"conv_result_scale", &c.conv_result_scale},
                              {"side_input_scale", &c.side_input_scale},
                              {"leakyrelu_alpha", &c.leakyrelu_alpha}}) {
    if (!config.contains(field)) continue;
    StatusOr<double> v = Number(config[field], field);
    if (!v.ok()) return Error(name + ": " + v.status().message());
    *value = *v;
  }
  if (config.contains("activation_mode")) {
    StatusOr<std::string> a = Activation(config["activation_mode"]);
    if (!a.ok()) return Error(name + ": " + a.status().message());
    c.activation = *a;
  }
  return c;
}

StatusOr<Literal> EvalCudnnConvCall(const HloInstruction& call, const Operands& operands) {
  const std::string target = call.GetString("custom_call_target");
  const std::optional<CudnnConvKind> kind = CudnnConvKindOf(target);
  auto malformed = [&](const std::string& why) {
    return Error(call.DebugName() + ": malformed " + target + " call (" + why + ")");
  };
  if (!kind) return UnsupportedCustomCallTarget(call, "the reference evaluator");
  KILN_ASSIGN_OR_RETURN(CudnnConvConfig config, ParseCudnnConvConfig(call));
  const bool fused = *kind == CudnnConvKind::kBiasActivation;
  if (fused ? operands.size() != 3 && operands.size() != 4 : operands.size() != 2)
    return malformed("operand count");
  const Shape& shape = call.shape();
  if (shape.IsTuple() && (shape.tuple_size() != 2 || !shape.tuple_shape(1).IsArray()))
    return malformed("its result must be (result, u8[] scratch)");
  const Shape& out = shape.IsTuple() ? shape.tuple_shape(0) : shape;
  if (!out.IsArray() || !IsFloat(out.element_type()))
    return malformed("cuDNN convolves real floating-point arrays");
  if (!fused && config.activation != "kNone") return malformed("an activation without bias");
  if (fused && config.activation != "kNone" && config.activation != "kSigmoid" && config.activation != "kTanh" &&
      config.activation != "kRelu" && config.activation != "kRelu6" && config.activation != "kElu" &&
      config.activation != "kLeakyRelu" && config.activation != "kGeluExact")
    return Error(call.DebugName() + ": the reference evaluator does not support " + target +
                 " with activation_mode " + config.activation);

  ConvRoles r;
  switch (*kind) {
    case CudnnConvKind::kForward:
    case CudnnConvKind::kBiasActivation: r = {operands[0]->shape(), operands[1]->shape(), out}; break;
    case CudnnConvKind::kBackwardInput: r = {out, operands[1]->shape(), operands[0]->shape()}; break;
    case CudnnConvKind::kBackwardFilter: r = {operands[0]->shape(), out, operands[1]->shape()}; break;
  }
  const ConvDimensionNumbers* dn = call.GetAttribute<ConvDimensionNumbers>("dim_labels");
  if (!dn) return malformed("no dim_labels");
  const int64_t spatial = static_cast<int64_t>(dn->input_spatial.size()), rank = spatial + 2;
  if (r.x.rank() != rank || r.w.rank() != rank || r.y.rank() != rank) return malformed("ranks");
  std::vector<WindowDim> window;
  if (const Window* w = call.GetAttribute<Window>("window")) window = w->dims;
  else
    for (int64_t s : dn->kernel_spatial) window.push_back(WindowDim{r.w.dim(s)});
  if (static_cast<int64_t>(window.size()) != spatial) return malformed("the window and dim_labels disagree");
  for (int64_t i = 0; i < spatial; ++i) {
    const WindowDim& w = window[i];
    if (w.lhs_dilation != 1 || w.reversal || w.stride < 1 || w.rhs_dilation < 1 ||
        w.size != r.w.dim(dn->kernel_spatial[i]))
      return malformed("window dimension " + std::to_string(i));
  }
  const int64_t groups = call.GetInt("feature_group_count", 1);
  const int64_t batch = r.x.dim(dn->input_batch), features = r.x.dim(dn->input_feature);
  const int64_t group_in = r.w.dim(dn->kernel_input_feature), outputs = r.w.dim(dn->kernel_output_feature);
  if (call.GetInt("batch_group_count", 1) != 1) return malformed("batch_group_count");
  if (groups < 1 || group_in * groups != features || outputs % groups != 0 || r.y.dim(dn->output_batch) != batch ||
      r.y.dim(dn->output_feature) != outputs)
    return malformed("feature sizes and feature_group_count");

  // The three arrays in double; the kind's result accumulates.
  const ElementType f64 = ElementType::kF64;
  std::vector<double> x(r.x.ElementCount()), w(r.w.ElementCount()), y(r.y.ElementCount());
  switch (*kind) {
    case CudnnConvKind::kForward:
    case CudnnConvKind::kBiasActivation:
      x = ReadAsReal(*operands[0], f64), w = ReadAsReal(*operands[1], f64);
      break;
    case CudnnConvKind::kBackwardInput: y = ReadAsReal(*operands[0], f64), w = ReadAsReal(*operands[1], f64); break;
    case CudnnConvKind::kBackwardFilter: x = ReadAsReal(*operands[0], f64), y = ReadAsReal(*operands[1], f64); break;
  }
  const std::vector<int64_t> xs = Strides(r.x), ws = Strides(r.w), ys = Strides(r.y);
  std::vector<int64_t> o(spatial, 0), k(spatial, 0);
  const int64_t per_group = outputs / groups;
  auto next = [](std::vector<int64_t>& index, const std::function<int64_t(int64_t)>& size) {
    for (int64_t i = static_cast<int64_t>(index.size()) - 1; i >= 0; --i) {
      if (++index[i] < size(i)) return true;
      index[i] = 0;
    }
    return false;
  };
  const bool empty = r.y.ElementCount() == 0 || r.w.ElementCount() == 0;
  // Every output position o and tap k of the forward convolution.
  for (bool more_o = !empty; more_o; more_o = next(o, [&](int64_t i) { return r.y.dim(dn->output_spatial[i]); })) {
    for (bool more_k = true; more_k; more_k = next(k, [&](int64_t i) { return window[i].size; })) {
      int64_t x_at = 0, w_at = 0, y_at = 0;
      bool inside = true;
      for (int64_t i = 0; i < spatial && inside; ++i) {
        const int64_t u = o[i] * window[i].stride - window[i].pad_low + k[i] * window[i].rhs_dilation;
        inside = u >= 0 && u < r.x.dim(dn->input_spatial[i]);
        x_at += u * xs[dn->input_spatial[i]];
        w_at += k[i] * ws[dn->kernel_spatial[i]];
        y_at += o[i] * ys[dn->output_spatial[i]];
      }
      if (!inside) continue;
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t f = 0; f < outputs; ++f)
          for (int64_t c = 0; c < group_in; ++c) {
            const int64_t xi = x_at + n * xs[dn->input_batch] + ((f / per_group) * group_in + c) * xs[dn->input_feature];
            const int64_t wi = w_at + c * ws[dn->kernel_input_feature] + f * ws[dn->kernel_output_feature];
            const int64_t yi = y_at + n * ys[dn->output_batch] + f * ys[dn->output_feature];
            switch (*kind) {
              case CudnnConvKind::kBackwardInput: x[xi] += y[yi] * w[wi]; break;
              case CudnnConvKind::kBackwardFilter: w[wi] += x[xi] * y[yi]; break;
              default: y[yi] += x[xi] * w[wi]; break;
            }
          }
    }
  }
  std::vector<double> result = *kind == CudnnConvKind::kBackwardInput ? x
                               : *kind == CudnnConvKind::kBackwardFilter ? w : y;
  std::vector<double> bias, side;
  if (fused) {
    const Shape& b = operands[2]->shape();
    if (b.rank() != 1 || b.dim(0) != outputs) return malformed("the bias must hold one value per output feature");
    bias = ReadAsReal(*operands[2], f64);
    if (operands.size() == 4) {
      if (operands[3]->shape().dims() != out.dims()) return malformed("the side input's shape");
      side = ReadAsReal(*operands[3], f64);
    } else if (config.side_input_scale != 0) {
      return malformed("side_input_scale without a side input");
    }
  }
  const std::vector<int64_t> out_strides = Strides(out);
  for (size_t i = 0; i < result.size(); ++i) {
    double v = config.conv_result_scale * result[i];
    if (fused) {
      if (!side.empty()) v += config.side_input_scale * side[i];
      v += bias[(static_cast<int64_t>(i) / out_strides[dn->output_feature]) % outputs];
      v = Activate(v, config);
    }
    result[i] = v;
  }
  Literal value = StoreReal(Shape(out.element_type(), out.dims()), result);
  if (!shape.IsTuple()) return value;
  std::vector<Literal> parts;
  parts.push_back(std::move(value));
  parts.push_back(Literal(shape.tuple_shape(1)));  // the scratch: zeros
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace kiln::hlo
