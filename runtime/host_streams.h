// Host multi-stream execution: runs a program's root thunks on the streams
// the compiler assigned (thunks/streams.h), concurrently on the
// process-wide thread pool. Internal to the runtime.
//
// The streams are not threads: min(streams, pool threads) workers (the
// calling thread one of them) each take a stream whose next thunk's events
// have been recorded, run it until its next thunk must wait, then take
// another. Since every event is recorded by an earlier root thunk, the
// stream whose next thunk comes first in root order can always run, so the
// workers never deadlock, even when the pool is busy with another device's
// loop and the calling thread runs every stream alone. Returning joins
// every stream. Kernels that split their work over the pool run on their
// worker alone while the streams hold it.
#pragma once

#include "runtime/executor.h"

namespace kiln::runtime {

// Runs program.root's thunks by stream; stops all streams at the first
// error and returns it. The profile (ctx.profile) gets each thunk with its
// program stream.
Status ExecuteStreams(const thunks::ThunkProgram& program, const PreparedSequence& prepared, ExecutionContext& ctx);

}  // namespace kiln::runtime
