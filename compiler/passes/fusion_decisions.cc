// Text form of fusion decisions on a fusion's backend_config (see
// fusion_decisions.h).
#include "compiler/passes/fusion_decisions.h"

#include <cstdio>
#include <cstdlib>

namespace kiln::passes {

std::string EncodeFusionDecisions(const std::vector<FusionDecision>& decisions) {
  std::string text;
  for (const FusionDecision& d : decisions) {
    char us[32];
    std::snprintf(us, sizeof us, "%.6g", d.saved_us);
    if (!text.empty()) text += ';';
    text += d.producer + '>' + d.consumer + '=' + us;
  }
  return text;
}

std::vector<FusionDecision> FusionDecisionsOf(const hlo::HloInstruction& fusion) {
  std::vector<FusionDecision> decisions;
  const auto* attr = fusion.GetAttribute<hlo::StringAttr>("backend_config");
  if (!attr) return decisions;
  std::string_view text = attr->value;
  while (!text.empty()) {
    size_t end = text.find(';');
    std::string_view item = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    size_t gt = item.find('>'), eq = item.rfind('=');
    if (gt == std::string_view::npos || eq == std::string_view::npos || eq < gt) return {};
    std::string us(item.substr(eq + 1));
    char* parsed_end = nullptr;
    double value = std::strtod(us.c_str(), &parsed_end);
    if (parsed_end == us.c_str() || *parsed_end) return {};
    decisions.push_back({std::string(item.substr(0, gt)), std::string(item.substr(gt + 1, eq - gt - 1)), value});
  }
  return decisions;
}

void SetFusionDecisions(hlo::HloInstruction& fusion, const std::vector<FusionDecision>& decisions) {
  if (decisions.empty()) {
    fusion.RemoveAttribute("backend_config");
    return;
  }
  fusion.SetAttribute("backend_config", hlo::StringAttr{EncodeFusionDecisions(decisions)});
}

}  // namespace kiln::passes
