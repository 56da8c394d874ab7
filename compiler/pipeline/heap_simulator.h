// Heap simulation: packs buffers with known live intervals into one arena.
//
// Buffers are placed in decreasing size order (XLA's "global decreasing
// size" heuristic); each goes into the smallest gap, among the buffers
// already placed whose live intervals overlap its own, that fits it, or
// past the end of them. When that arena exceeds the live-bytes lower bound,
// the same best-fit placement is retried in decreasing size x lifetime,
// decreasing lifetime and increasing start order, and the smallest arena
// wins (XLA likewise keeps the best of several heap algorithms). Two buffers may share bytes only when their closed
// intervals [start, end] are disjoint, so memory is reused after last use
// but never within the instruction that last reads a buffer.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::pipeline {

struct HeapRequest {
  int64_t size = 0;   // bytes; 0 is allowed (placed at offset 0)
  int64_t start = 0;  // first schedule position it is live at
  int64_t end = 0;    // last schedule position it is live at (>= start)
};

struct HeapResult {
  std::vector<int64_t> offsets;  // per request, multiples of `alignment`
  int64_t arena_size = 0;        // max over requests of offset + aligned size
  int64_t lower_bound = 0;       // max over positions of live aligned bytes
};

int64_t AlignUp(int64_t value, int64_t alignment);

HeapResult SimulateHeap(const std::vector<HeapRequest>& requests, int64_t alignment);

}  // namespace kiln::pipeline
