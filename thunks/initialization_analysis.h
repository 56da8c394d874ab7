// Initialization analysis: which allocations of a thunk program may be read
// before anything writes them in an execution, and so must start zeroed.
//
// Every execution used to zero every temporary and output, which costs
// memory bandwidth for nothing when the first access writes. A conservative
// forward dataflow over the thunk tree proves, byte range by byte range,
// that each read is preceded by a write on every path: the written ranges
// of each allocation grow thunk by thunk (entry: the arguments' slices and
// the constants); a while body is checked against what holds before its
// first iteration (later ones only see more written) and contributes its
// writes only when a known trip count says it runs; a conditional keeps what
// every branch writes. Partial writers count as reads of what they keep: an
// in-place kernel (dynamic-update-slice, scatter) reads the operand slice
// its output shares, a GEMM with beta != 0 reads its output, Cholesky and
// triangular solve read the matrix they overwrite, and calls whose write
// extent is not described (custom calls, LAPACK results, collective
// permutes) are taken to read their results. Finally the caller reads every
// result leaf. An allocation with any read not covered is zero-initialized.
#pragma once

#include <vector>

#include "thunks/program.h"

namespace kiln::thunks {

// needs_zeroing[a] for every allocation of `program`.
std::vector<bool> AllocationsReadBeforeWritten(const ThunkProgram& program);

// Sets Allocation::zero_initialize from AllocationsReadBeforeWritten.
void MarkZeroInitializedAllocations(ThunkProgram& program);

}  // namespace kiln::thunks
