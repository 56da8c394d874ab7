// Best-fit heap simulation over live intervals (see heap_simulator.h).
#include "compiler/pipeline/heap_simulator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <random>

namespace kiln::pipeline {
namespace {

struct Placed {
  int64_t offset;
  int64_t end;  // offset + aligned size
};

// The lowest-waste offset (or with `first_fit`, the lowest offset) for
// `size` bytes given the byte ranges of the
// interfering buffers, sorted by offset.
int64_t BestFit(std::vector<Placed>& busy, int64_t size, bool first_fit) {
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
        if (first_fit) break;
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

namespace {

// Places the requests one by one in `order`, each at its best-fit offset
// among the already placed requests it meets in time.
HeapResult PlaceInOrder(const std::vector<HeapRequest>& requests, const std::vector<size_t>& order,
                        int64_t alignment, bool first_fit) {
  HeapResult result;
  result.offsets.assign(requests.size(), 0);
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
    int64_t offset = BestFit(busy, bytes, first_fit);
    result.offsets[i] = offset;
    result.arena_size = std::max(result.arena_size, offset + bytes);
    placed.push_back(i);
  }
  return result;
}

// Placement orders tried in turn, like XLA's heap simulator alternatives.
// Every key ends in (earlier start, request index) so results are
// deterministic.
enum class Order { kSize, kLifetime, kArea, kStart, kSizeClassThenStart, kEnd };

std::vector<size_t> SortedOrder(const std::vector<HeapRequest>& requests, Order kind, int64_t alignment) {
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](size_t i) -> int64_t {
    const HeapRequest& r = requests[i];
    int64_t life = r.end - r.start + 1;
    switch (kind) {
      case Order::kSize: return r.size;
      case Order::kLifetime: return life;
      case Order::kArea: return AlignUp(r.size, alignment) / alignment * life;
      case Order::kStart: return -r.start;
      case Order::kSizeClassThenStart: {
        // Power-of-two size class first, earlier start within a class.
        int64_t cls = 0;
        for (int64_t b = AlignUp(r.size, alignment); b > 1; b >>= 1) ++cls;
        return cls * (int64_t{1} << 40) - r.start;
      }
      case Order::kEnd: return r.end;
    }
    return 0;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    int64_t ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    if (requests[a].size != requests[b].size) return requests[a].size > requests[b].size;
    return requests[a].start < requests[b].start;
  });
  return order;
}

}  // namespace

HeapResult SimulateHeap(const std::vector<HeapRequest>& requests, int64_t alignment) {
  const int64_t bound = LiveLowerBound(requests, alignment);
  HeapResult best;
  bool have = false;
  // Decreasing size first (XLA's default); the others only replace it when
  // strictly smaller, and the search stops once an arena meets the bound.
  auto consider = [&](const std::vector<size_t>& order, bool first_fit) {
    HeapResult r = PlaceInOrder(requests, order, alignment, first_fit);
    if (!have || r.arena_size < best.arena_size) {
      best = std::move(r);
      have = true;
    }
    return best.arena_size <= bound;
  };
  for (bool first_fit : {false, true})
    for (Order kind : {Order::kSize, Order::kArea, Order::kLifetime, Order::kStart, Order::kSizeClassThenStart,
                       Order::kEnd})
      if (consider(SortedOrder(requests, kind, alignment), first_fit)) {
        best.lower_bound = bound;
        return best;
      }
  // Still above the bound: decreasing size with each size scaled by a
  // pseudo-random factor in [1, 2) or [1, 4), from a fixed seed (deterministic), as
  // many times as a budget of ~2e7 interval tests allows (at most 1024),
  // until the arena is within 1% of the bound.
  const int64_t n = static_cast<int64_t>(requests.size());
  const int64_t attempts = std::min<int64_t>(1024, 20'000'000 / std::max<int64_t>(1, n * n));
  std::mt19937_64 rng(0x6b696c6e);  // "kiln"
  std::vector<int64_t> key(requests.size());
  for (int64_t t = 0; t < attempts; ++t) {
    const uint64_t spread = t % 4 < 2 ? 64 : 192;
    for (size_t i = 0; i < requests.size(); ++i)
      key[i] = AlignUp(requests[i].size, alignment) / alignment * static_cast<int64_t>(64 + rng() % spread);
    std::vector<size_t> order(requests.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (key[a] != key[b]) return key[a] > key[b];
      return requests[a].start < requests[b].start;
    });
    consider(order, t % 2 == 1);
    if (best.arena_size <= bound + bound / 100) break;
  }
  best.lower_bound = bound;
  return best;
}

}  // namespace kiln::pipeline
