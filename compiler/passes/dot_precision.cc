// DotAllowsTf32 and CopyDotPrecision: see dot_precision.h.
#include "compiler/passes/dot_precision.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <variant>

namespace kiln::passes {
namespace {

// The attribute's text as written (a raw list, a bare word or a string),
// lower-cased: XLA prints precisions as "default" and older dumps as
// "DEFAULT".
std::string LowerText(const hlo::HloInstruction& inst, std::string_view name) {
  const hlo::Attribute* a = inst.FindAttribute(name);
  if (!a) return "";
  std::string text;
  if (const auto* raw = std::get_if<hlo::RawAttr>(&a->value)) text = raw->text;
  else if (const auto* e = std::get_if<hlo::EnumAttr>(&a->value)) text = e->value;
  else if (const auto* s = std::get_if<hlo::StringAttr>(&a->value)) text = s->value;
  else return "?";  // a form no dump uses: not DEFAULT
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

bool DotAllowsTf32(const hlo::HloInstruction& dot) {
  // operand_precision={default,default}: every listed word must be default.
  std::string precision = LowerText(dot, "operand_precision");
  std::string word;
  for (char c : precision + ",") {
    if (c == '{' || c == '}' || c == ' ') continue;
    if (c != ',') {
      word += c;
      continue;
    }
    if (!word.empty() && word != "default") return false;
    word.clear();
  }
  std::string algorithm = LowerText(dot, "algorithm");
  return algorithm.empty() || algorithm == "unset" || algorithm == "dot_tf32_tf32_f32";
}

void CopyDotPrecision(const hlo::HloInstruction& from, hlo::HloInstruction& to) {
  for (const char* name : {"operand_precision", "algorithm"})
    if (const hlo::Attribute* a = from.FindAttribute(name)) to.SetAttribute(name, a->value);
}

}  // namespace kiln::passes
