// Allocation table; see memory_report.h.
#include "tools/common/memory_report.h"

#include <array>
#include <cstdio>

namespace kiln::tools {

namespace th = ::kiln::thunks;

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

namespace {

// Every role of an allocation: "parameter 1 {0}, output {1}".
std::string Roles(const th::ThunkProgram& p, const th::Allocation& a) {
  std::string s;
  auto add = [&](const std::string& role) { s += (s.empty() ? "" : ", ") + role; };
  if (a.parameter)
    add("parameter " + std::to_string(a.parameter->number) + " " +
        ShapeIndexToString(a.parameter->index));
  if (a.constant) {
    std::string role = "constant " + std::to_string(*a.constant);
    if (*a.constant >= 0 && *a.constant < static_cast<int64_t>(p.constants.size()) &&
        !p.constants[*a.constant].name.empty())
      role += " '" + p.constants[*a.constant].name + "'";
    add(role);
  }
  if (a.output) add("output " + ShapeIndexToString(*a.output));
  return s;
}

}  // namespace

std::string FormatMemoryReport(const th::ThunkProgram& p) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%6s  %-10s %12s %6s  %s\n", "alloc", "kind", "bytes", "align",
                "role");
  out += line;
  constexpr int kKinds = 4;  // AllocationKind values, in enum order
  std::array<int64_t, kKinds> count{}, bytes{};
  int64_t total = 0;
  for (size_t i = 0; i < p.allocations.size(); ++i) {
    const th::Allocation& a = p.allocations[i];
    int kind = static_cast<int>(a.kind());
    ++count[kind];
    bytes[kind] += a.size;
    total += a.size;
    std::snprintf(line, sizeof line, "%6zu  %-10s %12lld %6lld  %s\n", i,
                  std::string(th::AllocationKindName(a.kind())).c_str(),
                  static_cast<long long>(a.size), static_cast<long long>(a.alignment),
                  Roles(p, a).c_str());
    std::string row = line;
    // No trailing blanks for allocations without a role (temps).
    row.erase(row.find_last_not_of(" \n") + 1);
    out += row + "\n";
  }
  static constexpr th::AllocationKind kOrder[] = {th::AllocationKind::kParameter,
                                                  th::AllocationKind::kOutput,
                                                  th::AllocationKind::kConstant,
                                                  th::AllocationKind::kTemp};
  static constexpr const char* kPlural[] = {"parameters", "outputs", "constants", "temps"};
  for (size_t k = 0; k < kKinds; ++k) {
    int kind = static_cast<int>(kOrder[k]);
    std::snprintf(line, sizeof line, "%-11s %4lld allocation%s %12lld bytes (%s)\n", kPlural[k],
                  static_cast<long long>(count[kind]), count[kind] == 1 ? " " : "s",
                  static_cast<long long>(bytes[kind]), FormatBytes(bytes[kind]).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "%-11s %4zu allocation%s %12lld bytes (%s)\n", "total",
                p.allocations.size(), p.allocations.size() == 1 ? " " : "s",
                static_cast<long long>(total), FormatBytes(total).c_str());
  out += line;
  return out;
}

}  // namespace kiln::tools
