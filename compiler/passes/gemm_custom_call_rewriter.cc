// GemmCustomCallRewriter: see gemm_custom_call_rewriter.h.
#include "compiler/passes/gemm_custom_call_rewriter.h"

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using json = nlohmann::json;

// What a gemm_backend_config says.
struct GemmConfig {
  double alpha = 1, alpha_imag = 0, beta = 0;
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
  std::string epilogue = "DEFAULT";
  // precision_config, as the dot's attribute texts ("{default,default}",
  // "dot_tf32_tf32_f32"); empty when the config has none.
  std::string operand_precision, algorithm;
};

// precision_config {operand_precision: ["DEFAULT", "HIGHEST"], algorithm:
// "ALG_DOT_TF32_TF32_F32"} in HLO text's spelling.
void ParsePrecision(const json& g, GemmConfig& c) {
  const json& p = g.value("precision_config", json::object());
  auto lower = [](std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  if (p.contains("operand_precision") && p["operand_precision"].is_array()) {
    std::string list;
    for (const json& v : p["operand_precision"])
      list += (list.empty() ? "" : ",") + lower(v.is_string() ? v.get<std::string>() : "?");
    c.operand_precision = "{" + list + "}";
  }
  std::string algorithm = lower(p.value("algorithm", std::string()));
  if (algorithm.rfind("alg_", 0) == 0) algorithm = algorithm.substr(4);
  if (algorithm != "unset") c.algorithm = algorithm;
}

// XLA prints the dimension lists' int64s as JSON strings ("1") or numbers.
StatusOr<std::vector<int64_t>> Ints(const json& dims, const char* field) {
  std::vector<int64_t> out;
  if (!dims.contains(field)) return out;
  for (const json& v : dims[field]) {
    if (v.is_number_integer()) out.push_back(v.get<int64_t>());
    else if (v.is_string()) out.push_back(std::stoll(v.get<std::string>()));
    else return Error(std::string("gemm_backend_config: ") + field + " holds a non-integer");
  }
  return out;
}

StatusOr<GemmConfig> ParseConfig(const HloInstruction& call) {
  json root = json::parse(call.BackendConfig(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object() || !root.contains("gemm_backend_config"))
    return Error(call.DebugName() + ": " + call.GetString("custom_call_target") +
                 " needs a JSON backend_config with gemm_backend_config");
  const json& g = root["gemm_backend_config"];
  GemmConfig c;
  try {
    c.alpha = g.value("alpha_real", 1.0);
    c.alpha_imag = g.value("alpha_imag", 0.0);
    c.beta = g.value("beta", 0.0);
    c.epilogue = g.value("epilogue", std::string("DEFAULT"));
    const json& dims = g.value("dot_dimension_numbers", json::object());
    KILN_ASSIGN_OR_RETURN(c.lhs_contracting, Ints(dims, "lhs_contracting_dimensions"));
    KILN_ASSIGN_OR_RETURN(c.rhs_contracting, Ints(dims, "rhs_contracting_dimensions"));
    KILN_ASSIGN_OR_RETURN(c.lhs_batch, Ints(dims, "lhs_batch_dimensions"));
    KILN_ASSIGN_OR_RETURN(c.rhs_batch, Ints(dims, "rhs_batch_dimensions"));
    ParsePrecision(g, c);
  } catch (const std::exception& e) {
    return Error(call.DebugName() + ": malformed gemm_backend_config: " + e.what());
  }
  return c;
}

class Rewrite {
 public:
  Rewrite(HloInstruction* call, NameUniquer& names) : call_(call), comp_(*call->parent()), names_(names) {}

  StatusOr<HloInstruction*> Run() {
    KILN_ASSIGN_OR_RETURN(GemmConfig c, ParseConfig(*call_));
    const Shape& shape = call_->shape();
    const Shape& out = shape.IsTuple() ? shape.tuple_shape(0) : shape;
    bool bias = c.epilogue.rfind("BIAS", 0) == 0;
    std::string activation = bias ? c.epilogue.substr(std::min<size_t>(c.epilogue.size(), 5)) : c.epilogue;
    if (activation == "DEFAULT") activation.clear();
    if (c.alpha_imag != 0 || !(activation.empty() || activation == "RELU" || activation == "GELU"))
      return Error(call_->DebugName() + ": " + call_->GetString("custom_call_target") + " with epilogue " +
                   c.epilogue + (c.alpha_imag != 0 ? " and a complex alpha" : "") + " is not supported");
    int64_t operands = 2 + (c.beta != 0) + bias;
    if (call_->operand_count() != operands || !out.IsArray())
      return Error(call_->DebugName() + ": " + call_->GetString("custom_call_target") + " has " +
                   std::to_string(call_->operand_count()) + " operands; its config needs " + std::to_string(operands));
    type_ = out.element_type();
    dims_ = out.dims();
    HloInstruction* dot = Add(HloOpcode::kDot, Full(), {call_->operand(0), call_->operand(1)});
    dot->SetAttribute("lhs_contracting_dims", c.lhs_contracting);
    dot->SetAttribute("rhs_contracting_dims", c.rhs_contracting);
    if (!c.lhs_batch.empty()) dot->SetAttribute("lhs_batch_dims", c.lhs_batch);
    if (!c.rhs_batch.empty()) dot->SetAttribute("rhs_batch_dims", c.rhs_batch);
    if (!c.operand_precision.empty()) dot->SetAttribute("operand_precision", hlo::RawAttr{c.operand_precision});
    if (!c.algorithm.empty()) dot->SetAttribute("algorithm", hlo::EnumAttr{c.algorithm});
    HloInstruction* r = dot;
    if (c.alpha != 1) r = Add(HloOpcode::kMultiply, Full(), {r, Splat(c.alpha)});
    if (c.beta != 0) {
      HloInstruction* beta_c = Add(HloOpcode::kMultiply, Full(), {call_->operand(2), Splat(c.beta)});
      r = Add(HloOpcode::kAdd, Full(), {r, beta_c});
    }
    if (bias) {
      HloInstruction* b = Add(HloOpcode::kBroadcast, Full(), {call_->operand(operands - 1)});
      b->SetAttribute("dimensions", std::vector<int64_t>{static_cast<int64_t>(dims_.size()) - 1});
      r = Add(HloOpcode::kAdd, Full(), {r, b});
    }
    if (activation == "RELU") r = Add(HloOpcode::kMaximum, Full(), {r, Splat(0)});
    if (activation == "GELU") r = Gelu(r);
    if (!shape.IsTuple()) return r;
    std::vector<HloInstruction*> elements{r};
    for (int64_t i = 1; i < shape.tuple_size(); ++i) {
      const Shape& s = shape.tuple_shape(i);
      if (!s.IsArray()) return Error(call_->DebugName() + ": unexpected tuple element in a GEMM custom-call");
      elements.push_back(AddSplat(comp_, s, 0, names_, call_->name() + ".workspace"));
    }
    return Add(HloOpcode::kTuple, shape, elements);
  }

 private:
  Shape Full() const { return Shape(type_, dims_); }
  HloInstruction* Add(HloOpcode op, const Shape& shape, const std::vector<HloInstruction*>& operands) {
    return AddInstruction(comp_, op, shape, operands, names_.Get(call_->name() + "." + std::string(hlo::OpcodeName(op))));
  }
  HloInstruction* Splat(double value) { return AddSplat(comp_, Full(), value, names_, call_->name()); }
  // cuBLASLt's GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  HloInstruction* Gelu(HloInstruction* x) {
    auto mul = [&](HloInstruction* a, HloInstruction* b) { return Add(HloOpcode::kMultiply, Full(), {a, b}); };
    HloInstruction* cube = mul(mul(x, x), x);
    HloInstruction* inner = Add(HloOpcode::kAdd, Full(), {x, mul(cube, Splat(0.044715))});
    HloInstruction* t = Add(HloOpcode::kTanh, Full(), {mul(inner, Splat(std::sqrt(2.0 / M_PI)))});
    return mul(mul(x, Splat(0.5)), Add(HloOpcode::kAdd, Full(), {t, Splat(1)}));
  }

  HloInstruction* call_;
  hlo::HloComputation& comp_;
  NameUniquer& names_;
  ElementType type_ = ElementType::kF32;
  std::vector<int64_t> dims_;
};

}  // namespace

bool IsGemmCustomCallTarget(std::string_view target) {
  return target == "__cublas$gemm" || target == "__cublas$lt$matmul";
}

StatusOr<bool> GemmCustomCallRewriter::Run(hlo::HloModule& module) {
  return ExpandInstructions(
      module,
      [](const HloInstruction& inst) {
        return inst.opcode() == HloOpcode::kCustomCall && IsGemmCustomCallTarget(inst.GetString("custom_call_target"));
      },
      [](HloInstruction* call, NameUniquer& names) { return Rewrite(call, names).Run(); });
}

}  // namespace kiln::passes
