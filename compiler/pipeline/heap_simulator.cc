// Best-fit heap simulation over live intervals (see heap_simulator.h).
#include "compiler/pipeline/heap_simulator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

namespace kiln::pipeline {
namespace {

struct Placed {
  int64_t offset;
  int64_t end;  // offset + aligned size
};

// The lowest-waste offset for `size` bytes given the byte ranges of the
// interfering buffers, sorted by offset.
int64_t BestFit(std::vector<Placed>& busy, int64_t size) {
  std::sort(busy.begin(), busy.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
  int64_t best = -1;
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  int64_t cursor = 0;  // first byte not covered by the ranges seen so far
  for (const Placed& p : busy) {
    if (p.offset > cursor) {
      int64_t gap = p.offset - cursor;
      if (gap >= size && gap < best_gap) {
        best = cursor;
        best_gap = gap;
      }
    }
    cursor = std::max(cursor, p.end);
  }
  return best >= 0 ? best : cursor;
}

// Max over positions of the summed aligned sizes live there (sweep over
// interval endpoints; an interval [s, e] adds at s and removes after e).
int64_t LiveLowerBound(const std::vector<HeapRequest>& requests, int64_t alignment) {
  std::map<int64_t, int64_t> delta;
  for (const HeapRequest& r : requests) {
    int64_t bytes = AlignUp(r.size, alignment);
    delta[r.start] += bytes;
    delta[r.end + 1] -= bytes;
  }
  int64_t live = 0, peak = 0;
  for (const auto& [pos, d] : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace

int64_t AlignUp(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

HeapResult SimulateHeap(const std::vector<HeapRequest>& requests, int64_t alignment) {
  HeapResult result;
  result.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  // Larger first; ties by earlier start, then request order, so the result
  // is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].size != requests[b].size) return requests[a].size > requests[b].size;
    return requests[a].start < requests[b].start;
  });
  std::vector<size_t> placed;
  std::vector<Placed> busy;
  for (size_t i : order) {
    const HeapRequest& r = requests[i];
    int64_t bytes = AlignUp(r.size, alignment);
    if (bytes == 0) continue;  // empty buffers occupy nothing; offset 0
    busy.clear();
    for (size_t j : placed) {
      const HeapRequest& q = requests[j];
      if (q.start <= r.end && r.start <= q.end)
        busy.push_back({result.offsets[j], result.offsets[j] + AlignUp(q.size, alignment)});
    }
    int64_t offset = BestFit(busy, bytes);
    result.offsets[i] = offset;
    result.arena_size = std::max(result.arena_size, offset + bytes);
    placed.push_back(i);
  }
  result.lower_bound = LiveLowerBound(requests, alignment);
  return result;
}

}  // namespace kiln::pipeline
