// Latency statistics; see latency_stats.h.
#include "tools/common/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace kiln::tools {

LatencyStats ComputeLatencyStats(std::vector<double> samples_us) {
  LatencyStats s;
  s.count = static_cast<int64_t>(samples_us.size());
  if (samples_us.empty()) return s;
  std::sort(samples_us.begin(), samples_us.end());
  size_t n = samples_us.size();
  s.min = samples_us.front();
  s.max = samples_us.back();
  s.median = n % 2 ? samples_us[n / 2] : (samples_us[n / 2 - 1] + samples_us[n / 2]) / 2;
  s.mean = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / static_cast<double>(n);
  size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  s.p90 = samples_us[std::max<size_t>(rank, 1) - 1];
  return s;
}

std::string FormatLatencyStats(const LatencyStats& s) {
  char line[256];
  std::snprintf(line, sizeof line,
                "latency (µs) over %lld iteration%s: min %.2f  median %.2f  mean %.2f  p90 %.2f  "
                "max %.2f",
                static_cast<long long>(s.count), s.count == 1 ? "" : "s", s.min, s.median, s.mean,
                s.p90, s.max);
  return line;
}

}  // namespace kiln::tools
