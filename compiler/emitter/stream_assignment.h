// Stream assignment: runs independent thunks of the root sequence on
// different streams, as XLA's GPU stream assignment does.
//
// The pass builds the dependency graph of the root's thunks from the
// buffer slices they read and write: a thunk depends on every earlier one
// that writes bytes it reads or writes, or reads bytes it writes (read
// after write, write after read, write after write), whichever values the
// bytes hold; buffer assignment reusing an allocation's bytes for two
// values is therefore a dependency like any other. A control-flow thunk is
// one unit that writes every slice of its subtree; a collective-done
// accesses its start's buffers. Collectives, custom calls, RNG state and
// device ids stay on stream 0, in order.
//
// Thunks are placed by a list schedule over the roofline cost estimates:
// each goes to the stream on which it could start first (its latest
// producer's stream on a tie, so dependent chains stay on one stream).
// Every dependency between streams gets an event, minimized as XLA does:
// a stream that already knows (directly or through an earlier wait) that
// the producer has finished does not wait again, which is the transitive
// reduction of the cross-stream edges per stream pair.
#pragma once

#include <cstdint>
#include <vector>

#include "thunks/program.h"

namespace kiln::emitter {

struct StreamAssignmentStats {
  int32_t streams = 1;  // streams used
  int32_t events = 0;
  int64_t cross_stream_dependencies = 0;  // direct dependencies between streams
};

// The direct dependencies of each root thunk: the indices of the earlier
// root thunks it must run after (ascending).
std::vector<std::vector<int32_t>> RootDependencies(const thunks::ThunkProgram& program);

// Assigns the root's thunks to at most `max_streams` streams and inserts the
// events (sets Thunk::stream, wait_events, record_event and the program's
// num_streams, num_events). max_streams <= 1 leaves the program as it is.
StreamAssignmentStats AssignStreams(thunks::ThunkProgram& program, int max_streams);

}  // namespace kiln::emitter
