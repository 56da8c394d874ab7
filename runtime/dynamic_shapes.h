// Bounded dynamic shapes at the runtime's edge (see thunks::DynamicDimension).
//
// The program computes on every dynamic dimension's bound. On the way in, a
// caller's argument of its actual extent is copied into a zero-padded buffer
// of the bound and each size becomes an s32[] argument of its own; on the way
// out, each result leaf is cut to the sizes the program computed and the
// size leaves are dropped. Buffers are dense row-major, so both directions
// copy runs of the minor dimension.
#pragma once

#include <vector>

#include "runtime/backend.h"

namespace kiln::runtime {

// The caller's arguments -> the program's: dynamic leaves padded, the size
// leaves appended. `args` were checked by CheckCallerArgument.
StatusOr<std::vector<Buffer>> ProgramArguments(const ProgramBinding& b, std::vector<Buffer> args);

// Whether `actual` may be passed where the caller signature says `want`:
// compatible, except that a dynamic dimension may be anything up to its
// bound. Returns a one-line reason when not.
Status CheckCallerArgument(const Shape& actual, const Shape& want);

// The program's outputs -> the caller's: leaves with dynamic dimensions cut
// to the sizes the program returned (each checked against its bound).
StatusOr<ExecutionResult> CallerResult(const ProgramBinding& b, StatusOr<ExecutionResult> result);

}  // namespace kiln::runtime
