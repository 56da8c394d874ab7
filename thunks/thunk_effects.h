// Thunk effects: the buffer slices a thunk reads and writes.
//
// Two analyses need them: which allocations may be read before anything
// writes them (initialization_analysis.h), and which thunks may run
// concurrently on different streams (the compiler's stream assignment).
// Partial writers count as reads of what they keep: an in-place kernel
// (dynamic-update-slice, scatter) reads the operand slice its output
// shares, a GEMM with beta != 0 reads its output, Cholesky and triangular
// solve read the matrix they overwrite, and calls whose write extent is not
// described (custom calls, LAPACK results, collective permutes) are taken
// to read their results.
#pragma once

#include <vector>

#include "thunks/thunk.h"

namespace kiln::thunks {

struct SliceEffects {
  std::vector<BufferSlice> reads, writes;
  void ReadWrite(const BufferSlice& s) {
    reads.push_back(s);
    writes.push_back(s);
  }
};

// The slices a thunk itself reads (before it writes) and writes; empty for
// control flow (whose children have their own) and for collective-done
// (whose start thunk names the buffers).
SliceEffects DirectEffects(const Thunk& thunk);

}  // namespace kiln::thunks
