// Roofline targets, their text form and the optimal-time bound; see roofline.h.
#include "thunks/roofline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kiln::thunks {
namespace {

// A positive, finite number, the whole of `text`.
StatusOr<double> ParseRate(std::string_view key, std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  double value = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(value) || value <= 0)
    return Error("roofline: '" + std::string(key) + "' needs a positive number, got '" + s + "'");
  return value;
}

// The field `key` names, or nullptr.
double* RateField(RooflineTarget& target, std::string_view key) {
  if (key == "bw") return &target.bytes_per_second;
  if (key == "flops") return &target.flops_per_second;
  if (key == "tensor_flops") return &target.tensor_flops_per_second;
  if (key == "trans") return &target.transcendentals_per_second;
  return nullptr;
}

Status ApplyItem(std::string_view item, RooflineTarget& target) {
  size_t eq = item.find('=');
  if (eq == std::string_view::npos)
    return Error("roofline: expected key=value, got '" + std::string(item) + "'");
  std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
  if (key == "name") {
    if (value.empty()) return Error("roofline: 'name' needs a value");
    target.name = std::string(value);
    return Status::Ok();
  }
  double* field = RateField(target, key);
  if (!field)
    return Error("roofline: unknown key '" + std::string(key) +
                 "' (expected bw, flops, tensor_flops, trans or name)");
  KILN_ASSIGN_OR_RETURN(*field, ParseRate(key, value));
  return Status::Ok();
}

}  // namespace

RooflineTarget CudaRooflineTarget() { return {"cuda-h100", 3.0e12, 6.0e13, 7.5e14, 3.9e12}; }

RooflineTarget HostRooflineTarget() { return {"host-x86-2core", 2.0e10, 5.0e10, 5.0e10, 5.0e9}; }

StatusOr<RooflineTarget> ParseRooflineTarget(std::string_view spec, RooflineTarget base) {
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    KILN_RETURN_IF_ERROR(ApplyItem(item, base));
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
    if (spec.empty()) return Error("roofline: trailing ','");
  }
  return base;
}

StatusOr<RooflineTarget> ApplyRooflineEnvironment(RooflineTarget base) {
  const char* spec = std::getenv("KILN_ROOFLINE");
  if (!spec) return base;
  StatusOr<RooflineTarget> target = ParseRooflineTarget(spec, std::move(base));
  if (!target.ok()) return Error("KILN_ROOFLINE: " + target.status().message());
  return target;
}

double OptimalSeconds(const CostEstimate& cost, const RooflineTarget& target, bool tensor_core) {
  // A term whose rate is unknown (0) bounds nothing.
  auto bound = [](double amount, double rate) { return rate > 0 ? amount / rate : 0.0; };
  double flop_rate = tensor_core ? target.tensor_flops_per_second : target.flops_per_second;
  double bytes = static_cast<double>(cost.bytes_read + cost.bytes_written);
  return std::max({bound(bytes, target.bytes_per_second),
                   bound(static_cast<double>(cost.flops), flop_rate),
                   bound(static_cast<double>(cost.transcendentals), target.transcendentals_per_second)});
}

std::string RooflineTargetToString(const RooflineTarget& t) {
  char text[256];
  std::snprintf(text, sizeof text,
                "%s: %.2e B/s, %.2e FLOP/s, %.2e tensor FLOP/s, %.2e transcendentals/s", t.name.c_str(),
                t.bytes_per_second, t.flops_per_second, t.tensor_flops_per_second,
                t.transcendentals_per_second);
  return text;
}

}  // namespace kiln::thunks
