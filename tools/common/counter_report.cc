// The emulator counter table; see counter_report.h.
#include "tools/common/counter_report.h"

#include <algorithm>
#include <cstdio>

namespace kiln::tools {

namespace {

std::string Dims(const uint32_t d[3]) {
  if (d[0] == 0) return "library";  // a library call (the cuBLAS double), no kernel geometry
  std::string s = std::to_string(d[0]);
  if (d[1] != 1 || d[2] != 1) s += "x" + std::to_string(d[1]);
  if (d[2] != 1) s += "x" + std::to_string(d[2]);
  return s;
}

std::string Ratio(double num, double den, const char* format = "%.2f") {
  if (den <= 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, format, num / den);
  return b;
}

std::string Mix(const KilnEmuCounters& c, uint64_t total) {
  static const char* kNames[KILN_EMU_CLASS_COUNT] = {"fp32", "fp64", "fp16", "int",
                                                     "sfu",  "mem",  "ctl"};
  std::string s;
  for (int i = 0; i < KILN_EMU_CLASS_COUNT; ++i) {
    if (c.warp_instructions[i] == 0) continue;
    char b[32];
    std::snprintf(b, sizeof b, "%s%s %.0f", s.empty() ? "" : " ", kNames[i],
                  100.0 * c.warp_instructions[i] / total);
    s += b;
  }
  return s;
}

}  // namespace

std::string FormatCounterReport(const ProfileReport& report) {
  bool any = false;
  for (const ProfileRow& row : report.rows) any |= row.counters && row.counters->launches > 0;
  if (!any) return "";
  std::string out =
      "\nEmulator counters per execution (exact; sectors are 32 bytes, req = warp-level request):\n";
  char line[1024];
  const char* kFormat = "%-24s %4s %12s %9s %4s %12s %7s %10s %10s %6s %10s %6s %9s %8s %6s %8s %8s  %s\n";
  std::snprintf(line, sizeof line, kFormat, "thunk", "lnch", "grid", "block", "regs", "warp inst",
                "active", "max/thr", "gld req", "sec/rq", "gst req", "sec/rq", "unique MB",
                "shm req", "wav/rq", "barriers", "atomics", "mix %");
  out += line;
  for (const ProfileRow& row : report.rows) {
    if (!row.counters || row.counters->launches == 0 || row.count() == 0) continue;
    const KilnEmuCounters& c = *row.counters;
    double n = static_cast<double>(row.count());
    uint64_t warp = 0;
    for (uint64_t w : c.warp_instructions) warp += w;
    uint64_t shared = c.shared_load_requests + c.shared_store_requests;
    double unique_mb = (c.global_unique_load_sectors + c.global_unique_store_sectors) * 32.0 / 1e6 / n;
    std::string name = row.name.size() > 24 ? row.name.substr(0, 21) + "..." : row.name;
    std::snprintf(line, sizeof line, kFormat, name.c_str(), Ratio(c.launches, n, "%.0f").c_str(),
                  Dims(c.grid).c_str(), Dims(c.block).c_str(),
                  std::to_string(c.registers_per_thread).c_str(), Ratio(warp, n, "%.0f").c_str(),
                  (Ratio(100.0 * c.thread_instructions, 32.0 * warp, "%.1f") + "%").c_str(),
                  std::to_string(c.max_thread_instructions).c_str(),
                  Ratio(c.global_load_requests, n, "%.0f").c_str(),
                  Ratio(c.global_load_sectors, c.global_load_requests).c_str(),
                  Ratio(c.global_store_requests, n, "%.0f").c_str(),
                  Ratio(c.global_store_sectors, c.global_store_requests).c_str(),
                  Ratio(unique_mb, 1, "%.3f").c_str(), Ratio(shared, n, "%.0f").c_str(),
                  Ratio(c.shared_wavefronts, shared).c_str(), Ratio(c.barriers, n, "%.0f").c_str(),
                  Ratio(c.atomics, n, "%.0f").c_str(), Mix(c, warp).c_str());
    out += line;
  }
  return out;
}

}  // namespace kiln::tools
