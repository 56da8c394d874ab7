// Lenient readers of integer attributes for the evaluator's op groups.
//
// Why: HLO text writes single integers both bare ("iota_dimension=0") and in
// braces ("dimensions={1}"), so an attribute may reach the evaluator as an
// int64 or as a one-element list; these accept either form.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "compiler/hlo/instruction.h"

namespace kiln::hlo::eval {

inline std::optional<int64_t> IntAttr(const HloInstruction& inst, std::string_view name) {
  if (const auto* v = inst.GetAttribute<int64_t>(name)) return *v;
  if (const auto* list = inst.GetAttribute<std::vector<int64_t>>(name))
    if (list->size() == 1) return (*list)[0];
  return std::nullopt;
}

inline std::optional<std::vector<int64_t>> IntsAttr(const HloInstruction& inst,
                                                    std::string_view name) {
  if (const auto* list = inst.GetAttribute<std::vector<int64_t>>(name)) return *list;
  if (const auto* v = inst.GetAttribute<int64_t>(name)) return std::vector<int64_t>{*v};
  return std::nullopt;
}

}  // namespace kiln::hlo::eval
