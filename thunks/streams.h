// Streams and events of a thunk program: which of the root sequence's
// thunks may run concurrently, and what orders them.
//
// The compiler's stream assignment (compiler/emitter/stream_assignment.h)
// puts independent thunks of the root sequence on different streams and
// joins every dependency that crosses streams with an event: the producer
// records it when it finishes, the consumer waits for it before it starts.
// Within a stream thunks run in root order. An event is recorded by one
// thunk and waited for only by thunks after it in root order, so running
// the root in order on one thread satisfies every wait: a runtime may run
// the streams concurrently, interleaved, or in order on one stream (what
// CUDA graphs and the one-stream path do), and never deadlocks.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "thunks/program.h"

namespace kiln::thunks {

// Programs use at most this many streams (a runtime creates them all).
inline constexpr int32_t kMaxStreams = 16;

// Whether `thunk` (or a thunk under it) has effects beyond its slices:
// communication with other devices (collectives, collective-done, device
// ids), host callbacks (custom calls) or the executable's RNG state. Such
// thunks run in order on stream 0.
bool RunsOnStreamZero(const Thunk& thunk);

// OK, or one line naming the first problem: num_streams outside [1,
// kMaxStreams], num_events outside [0, root size], a root thunk's stream
// outside [0, num_streams), an event recorded twice or out of range, a wait
// for an event not recorded by an earlier root thunk, a thunk that
// RunsOnStreamZero on another stream, or a nested thunk with a stream or
// events.
Status ValidateStreams(const ThunkProgram& program);

// Streams and events as text: "streams 2, events 3".
std::string StreamSummary(const ThunkProgram& program);

// " stream 1 wait e0,e2 record e3" for a thunk off stream 0 or with events;
// "" for a thunk of a one-stream program.
std::string StreamAnnotation(const Thunk& thunk);

}  // namespace kiln::thunks
