// Latency statistics of repeated runs (bef-run --iterations), in the style
// of trtexec's performance summary: min, median, mean, p90 and max.
#pragma once

#include <string>
#include <vector>

namespace kiln::tools {

struct LatencyStats {
  int64_t count = 0;
  double min = 0, median = 0, mean = 0, p90 = 0, max = 0;  // microseconds
};

// Statistics of `samples_us`. The median of an even count is the mean of
// the two middle samples; p90 is the nearest-rank percentile (the smallest
// sample with at least 90% of the samples at or below it).
LatencyStats ComputeLatencyStats(std::vector<double> samples_us);

// "latency (µs) over 10 iterations: min 1.2  median 1.5  mean 1.6  p90 2.0  max 3.1"
std::string FormatLatencyStats(const LatencyStats& stats);

}  // namespace kiln::tools
