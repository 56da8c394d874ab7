// CommandSegments: the straight-line parts of a thunk program that a
// command buffer records once and replays (on CUDA, as a CUDA graph).
//
// The thunk program is the recorded command sequence (docs/runtime_hal.md);
// a backend that can replay recorded work needs to know which runs of
// thunks are free of host decisions. A thunk is recordable when issuing it
// again would issue the same device work given the same buffer addresses:
// kernels, GEMMs, convolutions, FFTs, triangular solves, copies, memsets,
// sequences of recordable thunks, and a while loop with a known trip count
// whose unrolled body stays small. Not recordable: while loops that read
// their predicate and conditionals (the host reads a device value), the RNG
// state (its value changes every execution), cuSOLVER-backed
// factorizations and radix sorts (their libraries size and synchronize on
// the host), collectives. A segment is a maximal run of recordable thunks
// of one sequence; thunks outside segments are issued one by one, and the
// sequences inside them (a loop body, a branch) have segments of their own.
//
// With conditional nodes (CUDA 12.4+, cuda_conditional_nodes.h), a while
// loop that reads its predicate and a conditional are recordable too when
// their sequences are: the device decides, inside the graph. Not where the
// recorded thunks would exceed the limit. In the root of a multi-stream
// program the backend joins the program's streams around such a node
// (cuda_program_streams.h).
// Device independent: which thunks a backend can record is a property of
// the program; how it records them is the backend's.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "thunks/program.h"

namespace kiln::runtime {

// Thunks [begin, end) of one SequenceThunk.
struct CommandSegment {
  size_t begin = 0, end = 0;
};

// Unrolled while loops are recorded whole up to this many thunks.
inline constexpr int64_t kMaxUnrolledRecordedThunks = 4096;

class CommandSegments {
 public:
  // `conditional_nodes`: plan data-dependent loops and conditionals into
  // segments (see the file comment).
  explicit CommandSegments(const thunks::ThunkProgram& program, bool conditional_nodes = false);
  // The segments of `seq` in order (empty when it has none).
  const std::vector<CommandSegment>& For(const thunks::SequenceThunk& seq) const;
  // How many segments the program has, over every sequence.
  size_t count() const { return count_; }

 private:
  void Plan(const thunks::SequenceThunk& seq, bool conditional_nodes);
  std::unordered_map<const thunks::SequenceThunk*, std::vector<CommandSegment>> segments_;
  size_t count_ = 0;
};

// Whether `thunk` can be recorded (see the file comment), with
// conditional nodes or without.
bool IsRecordable(const thunks::Thunk& thunk, bool conditional_nodes = false);

// Whether recording `thunk` with conditional nodes adds one: it is, or
// records inline (a sequence, a loop with a known trip count unrolled), a
// while loop that reads its predicate or a conditional.
bool RecordsConditionalNode(const thunks::Thunk& thunk);

}  // namespace kiln::runtime
