// XLA CPU custom-calls: see cpu_custom_calls.h.
#include "compiler/evaluator/cpu_custom_calls.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "thunks/thunk.h"

namespace kiln::hlo {
namespace {

using json = nlohmann::json;

bool IsLayerNormType(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kBF16 || t == ElementType::kF16;
}

// The onednn_layer_norm_config of `call`'s backend_config.
StatusOr<OneDnnLayerNormConfig> ParseLayerNormConfig(const HloInstruction& call) {
  const std::string what = call.DebugName() + ": " + kOneDnnLayerNormTarget + " ";
  OneDnnLayerNormConfig config;
  const std::string text = call.BackendConfig();
  if (text.empty()) return config;  // every field at its proto3 default
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return Error(what + "needs a JSON object as backend_config");
  if (!root.contains("onednn_layer_norm_config")) return config;
  const json& c = root["onednn_layer_norm_config"];
  if (!c.is_object()) return Error(what + "has a malformed onednn_layer_norm_config");
  if (c.contains("rescale")) {
    const json& r = c["rescale"];
    if (!(r == "SCALE_AND_SHIFT" || r == "UNDEFINED" || r == 3 || r == 0))
      return Error(what + "with rescale " + r.dump() + " is not supported (only SCALE_AND_SHIFT)");
  }
  for (const char* key : {"epsilon_typecast", "epsilonTypecast"}) {
    if (!c.contains(key)) continue;
    const json& e = c[key];
    // proto3 JSON writes an int32 as a number, and may quote it.
    int64_t bits = 0;
    if (e.is_number_integer()) bits = e.get<int64_t>();
    else if (e.is_string()) bits = std::stoll(e.get<std::string>());
    else return Error(what + "has a non-integer epsilon_typecast");
    if (bits < INT32_MIN || bits > INT32_MAX) return Error(what + "has an epsilon_typecast outside int32");
    const int32_t word = static_cast<int32_t>(bits);
    std::memcpy(&config.epsilon, &word, sizeof word);
  }
  for (const char* key : {"fusions", "fused_ops"}) {
    if (!c.contains(key)) continue;
    const json& f = c[key];
    bool empty = f.is_null() || (f.is_array() && f.empty()) ||
                 (f.is_object() && (!f.contains("ops") || (f["ops"].is_array() && f["ops"].empty())));
    if (!empty) return Error(what + "with fused ops " + f.dump() + " is not supported");
  }
  if (!std::isfinite(config.epsilon) || config.epsilon < 0)
    return Error(what + "has an invalid epsilon " + std::to_string(config.epsilon));
  return config;
}

}  // namespace

bool IsCustomCallTo(const HloInstruction& inst, const char* target) {
  return inst.opcode() == HloOpcode::kCustomCall && inst.GetString("custom_call_target") == target;
}

Status CheckGetRngSeed(const HloInstruction& call) {
  if (call.operand_count() != 0 || !call.shape().IsArray() || call.shape().element_type() != ElementType::kU64 ||
      call.shape().rank() != 0)
    return Error(call.DebugName() + ": " + kGetRngSeedTarget + " takes no operands and returns u64[], not " +
                 call.shape().ToString(false));
  return Status::Ok();
}

StatusOr<OneDnnLayerNormConfig> ParseOneDnnLayerNorm(const HloInstruction& call) {
  const std::string what = call.DebugName() + ": " + kOneDnnLayerNormTarget + " ";
  if (call.operand_count() != 3) return Error(what + "takes (x, scale, shift)");
  const Shape& x = call.operand(0)->shape();
  if (!x.IsArray() || x.rank() < 1 || !IsLayerNormType(x.element_type()))
    return Error(what + "normalizes an f32, bf16 or f16 array of rank >= 1, not " + x.ToString(false));
  if (!call.shape().IsArray() || call.shape().element_type() != x.element_type() || call.shape().dims() != x.dims())
    return Error(what + "returns its input's shape " + x.ToString(false) + ", not " + call.shape().ToString(false));
  const Shape channel(x.element_type(), {x.dim(x.rank() - 1)});
  for (int64_t i = 1; i <= 2; ++i) {
    const Shape& s = call.operand(i)->shape();
    if (!s.IsArray() || s.element_type() != channel.element_type() || s.dims() != channel.dims())
      return Error(what + (i == 1 ? "scale" : "shift") + " must be " + channel.ToString(false) + ", not " +
                   s.ToString(false));
  }
  return ParseLayerNormConfig(call);
}

StatusOr<Literal> EvalGetRngSeed(const HloInstruction& call, int64_t execution) {
  KILN_RETURN_IF_ERROR(CheckGetRngSeed(call));
  const unsigned __int128 state = thunks::kRngStateInitialValue + static_cast<unsigned __int128>(execution);
  Literal seed(call.shape());
  seed.SetU64(0, RngSeedFromState(static_cast<uint64_t>(state), static_cast<uint64_t>(state >> 64)));
  return seed;
}

StatusOr<Literal> EvalOneDnnLayerNorm(const HloInstruction& call, const Literal& x, const Literal& scale,
                                      const Literal& shift) {
  KILN_ASSIGN_OR_RETURN(OneDnnLayerNormConfig config, ParseOneDnnLayerNorm(call));
  const int64_t c = x.shape().dim(x.shape().rank() - 1);
  const int64_t rows = c == 0 ? 0 : x.element_count() / c;
  Literal y(call.shape());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, variance = 0;
    for (int64_t i = 0; i < c; ++i) mean += x.GetF64(r * c + i);
    mean /= static_cast<double>(c);
    for (int64_t i = 0; i < c; ++i) variance += (x.GetF64(r * c + i) - mean) * (x.GetF64(r * c + i) - mean);
    variance /= static_cast<double>(c);
    const double inv = 1.0 / std::sqrt(variance + static_cast<double>(config.epsilon));
    for (int64_t i = 0; i < c; ++i)
      y.SetF64(r * c + i, (x.GetF64(r * c + i) - mean) * inv * scale.GetF64(i) + shift.GetF64(i));
  }
  return y;
}

}  // namespace kiln::hlo
