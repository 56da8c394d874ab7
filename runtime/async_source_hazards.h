// Which async collective starts must copy their sources before the
// exchange runs beside compute. Internal to the runtime.
//
// kiln's buffer assignment keeps an async start's operands live until its
// done, but the runtime does not rely on how a program was compiled: a
// thunk between the start and its done that writes an operand's bytes
// would change what the exchange still reads. A start needs a copy of its sources (a snapshot) unless no thunk
// between it and its done, in the same sequence and at any depth below,
// touches (reads or writes: DirectSlices does not tell them apart) a byte
// of a source that is not also the buffer's destination. A start whose
// done is not in its sequence, or a program with several streams (whose
// other streams' thunks are not ordered by position), always needs one.
#pragma once

#include <cstdint>
#include <set>

#include "thunks/program.h"

namespace kiln::runtime {

// The async ids of the starts that need a snapshot of their sources.
std::set<int64_t> AsyncStartsNeedingSnapshots(const thunks::ThunkProgram& program);

}  // namespace kiln::runtime
