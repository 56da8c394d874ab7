// JSON and text forms of CompileStats.
#include "compiler/driver/compile_stats.h"

#include <cstdio>

namespace kiln::compiler {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", s);
  return buf;
}

std::string SecondsObject(const std::vector<std::pair<std::string, double>>& seconds) {
  std::string out = "{";
  for (size_t i = 0; i < seconds.size(); ++i)
    out += (i ? ", " : "") + Quote(seconds[i].first) + ": " + Seconds(seconds[i].second);
  return out + "}";
}

std::string TableLine(const std::string& name, double seconds) {
  char line[96];
  std::snprintf(line, sizeof line, "%-32s %9.6f\n", name.c_str(), seconds);
  return line;
}

}  // namespace

std::string CompileStatsToJson(const CompileStats& s) {
  std::string out = "{\n";
  auto field = [&](const char* name, const std::string& value) {
    out += std::string("  ") + Quote(name) + ": " + value + ",\n";
  };
  field("instructions", std::to_string(s.instructions));
  field("instructions_after_passes", std::to_string(s.instructions_after_passes));
  field("fusions", std::to_string(s.fusions));
  field("kernels", std::to_string(s.kernels));
  field("distinct_kernels", std::to_string(s.distinct_kernels));
  field("thunks", std::to_string(s.thunks));
  field("streams", std::to_string(s.streams));
  field("stream_events", std::to_string(s.stream_events));
  field("bytes_accessed_unfused", std::to_string(s.bytes_accessed_unfused));
  field("bytes_accessed_fused", std::to_string(s.bytes_accessed_fused));
  field("temp_peak_bytes", std::to_string(s.temp_peak_bytes));
  field("temp_lower_bound_bytes", std::to_string(s.temp_lower_bound_bytes));
  field("compile_seconds", Seconds(s.compile_seconds));
  field("passes_seconds", Seconds(s.passes_seconds));
  field("buffer_assignment_seconds", Seconds(s.buffer_assignment_seconds));
  field("emit_seconds", Seconds(s.emit_seconds));
  field("codegen_seconds", Seconds(s.codegen_seconds));
  field("artifact_cache_hits", std::to_string(s.artifact_cache_hits));
  field("artifact_cache_misses", std::to_string(s.artifact_cache_misses));
  field("kernels_compiled", std::to_string(s.kernels_compiled));
  field("kernels_from_cache", std::to_string(s.kernels_from_cache));
  field("host_objects_shared", std::to_string(s.host_objects_shared));
  if (!s.cache_warning.empty()) field("cache_warning", Quote(s.cache_warning));
  out += "  \"pass_seconds\": " + SecondsObject(s.pass_seconds) + ",\n";
  out += "  \"codegen_stage_seconds\": " + SecondsObject(s.codegen_stage_seconds) + "\n}\n";
  return out;
}

std::string PassTimingTable(const CompileStats& s) {
  std::string out = "pass                               seconds\n";
  for (const auto& [name, seconds] : s.pass_seconds) out += TableLine(name, seconds);
  out += TableLine("total", s.passes_seconds);
  if (s.codegen_stage_seconds.empty()) return out;
  // Thread seconds: with several threads they add up to more than the
  // codegen wall time.
  out += "codegen stage (thread seconds)     seconds\n";
  for (const auto& [name, seconds] : s.codegen_stage_seconds) out += TableLine(name, seconds);
  return out + TableLine("codegen wall time", s.codegen_seconds);
}

}  // namespace kiln::compiler
