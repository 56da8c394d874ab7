// Conversions between tool values (kiln::Literal, dense row-major logical
// order) and runtime buffers (the array in memory in its shape's layout).
//
// Why: bef-run reads its inputs and prints its outputs as Literals
// (common/value_syntax.h, common/npy.h), while the runtime takes and returns
// runtime::Buffers. Both use StorageBytes(type) bytes per element, so a
// buffer with the default {rank-1, ..., 0} layout is a plain byte copy; any
// other minor_to_major permutation is transposed element by element. Tiled
// layouts are refused (the host runtime never produces them).
#pragma once

#include "common/literal.h"
#include "common/status.h"
#include "runtime/runtime.h"

namespace kiln::tools {

// A buffer of `shape` (which carries the layout the executable expects)
// holding `literal`; the literal must be an array compatible with `shape`,
// or fit its bounded dynamic dimensions (the buffer then has the literal's
// extents).
StatusOr<runtime::Buffer> LiteralToBuffer(const Literal& literal, const Shape& shape);

// The value held by `buffer`, laid out in its shape's layout.
StatusOr<Literal> BufferToLiteral(const runtime::Buffer& buffer);

}  // namespace kiln::tools
