// CudaGraphCache: the CUDA backend's command buffer. Each recordable
// segment of the thunk program (command_segments.h) is captured once per
// executable and stream into a CUDA graph, instantiated, and replayed with
// one cuGraphLaunch per execution. Internal to the runtime.
//
// A segment's graph bakes in the addresses it was captured with: every
// allocation's base, the overlapping-copy scratch, the library scratch of
// every lane (program stream) and, in a profiled execution, the events recorded between its
// thunks. When any of them differs (other argument or output buffers, a
// grown library scratch, a profiled run after an unprofiled one), the
// segment is captured again and the executable graph takes the new
// parameters through cuGraphExecUpdate; only an update the driver refuses
// (a changed topology, e.g. an FFT whose input copy depends on the
// addresses) instantiates a new one.
//
// A segment's first execution issues its thunks directly: the libraries
// then create their handles, workspaces and scratch outside any capture
// (allocations are not allowed while the stream captures). A capture that
// fails (the driver refuses a call inside it) falls back to issuing the
// thunks directly; after two failures the segment stays direct.
//
// A segment of a multi-stream program's root is captured on the Device
// stream, which its program streams' CUstreams join through the fork event
// and leave through the join events (cuda_program_streams.h): the graph has
// a branch per program stream, with the program's events as edges.
//
// Captures use CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, so other threads'
// allocations (other streams' executions, transfers) do not break them.
// Profiled executions record events with CU_EVENT_RECORD_EXTERNAL, which
// makes them event-record nodes inside the graph: the per-thunk profile is
// the same with graphs on and off.
//
// Where the driver has conditional nodes (cuda_conditional_nodes.h), a
// while loop that reads its predicate and a conditional are recorded
// inside their segment as conditional nodes: the segments are planned with
// them, and an execution is O(1) graph launches however many iterations
// run. A profiled execution uses the plan without them (a conditional
// body takes no event-record nodes), so loops and conditionals split its
// graphs and each thunk keeps its profile row.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "common/status.h"
#include "runtime/command_segments.h"
#include "runtime/cuda_conditional_nodes.h"
#include "runtime/cuda_executor.h"
#include "thunks/program.h"

namespace kiln::runtime {

class CudaGraphCache {
 public:
  // `conditional`: the device's conditional nodes, or null (split).
  CudaGraphCache(const CudaDriver& driver, const thunks::ThunkProgram& program,
                 const CudaConditionalNodes* conditional = nullptr)
      : driver_(driver), conditional_(conditional), segments_(program),
        conditional_segments_(program, conditional != nullptr) {}
  ~CudaGraphCache();  // the context must be current
  CudaGraphCache(const CudaGraphCache&) = delete;
  CudaGraphCache& operator=(const CudaGraphCache&) = delete;

  // The plan `ctx` uses: with conditional nodes unless profiled or none.
  const CommandSegments& segments(const CudaExecutionContext& ctx) const {
    return conditional_ && !ctx.events ? conditional_segments_ : segments_;
  }
  const CudaConditionalNodes* conditional_nodes() const { return conditional_; }
  // Issues thunks [segment.begin, segment.end) of `seq` on ctx.stream as
  // the segment's graph (or directly; see the file comment).
  Status Run(const thunks::SequenceThunk& seq, const CommandSegment& segment, CudaExecutionContext& ctx,
             int depth);

 private:
  struct Recorded {
    CUgraphExec exec = nullptr;
    std::vector<uint64_t> key;  // the addresses the graph was captured with
    std::vector<CudaTimedThunk> timed;  // its profile entries, when profiled
    int direct_runs = 0, failed_captures = 0;
  };
  std::vector<uint64_t> Key(const CudaExecutionContext& ctx) const;
  // Captures the segment (ctx.timed gets its entries) and makes `r.exec`
  // run it; false when the capture failed (nothing was issued).
  StatusOr<bool> Capture(const thunks::SequenceThunk& seq, const CommandSegment& segment,
                         CudaExecutionContext& ctx, int depth, Recorded& r);

  const CudaDriver& driver_;
  const CudaConditionalNodes* conditional_;
  CommandSegments segments_, conditional_segments_;
  // By sequence, first and end thunk (the two plans' segments differ).
  std::map<std::tuple<const thunks::SequenceThunk*, size_t, size_t>, Recorded> recorded_;
};

}  // namespace kiln::runtime
