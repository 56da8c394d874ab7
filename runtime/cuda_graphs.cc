// The CUDA backend's command buffer; see cuda_graphs.h.
#include "runtime/cuda_graphs.h"

#include "runtime/cuda_program_streams.h"

namespace kiln::runtime {

CudaGraphCache::~CudaGraphCache() {
  for (auto& [where, r] : recorded_) {
    if (r.exec) driver_.cuGraphExecDestroy(r.exec);
  }
}

std::vector<uint64_t> CudaGraphCache::Key(const CudaExecutionContext& ctx) const {
  std::vector<uint64_t> key(ctx.allocation_base.begin(), ctx.allocation_base.end());
  key.push_back(ctx.copy_scratch);
  if (!ctx.streams) {
    key.push_back(ctx.backend->LibraryScratchAddress(ctx.lane));
    return key;
  }
  for (int lane : ctx.streams->lanes()) key.push_back(ctx.backend->LibraryScratchAddress(lane));
  return key;
}

StatusOr<bool> CudaGraphCache::Capture(const thunks::SequenceThunk& seq, const CommandSegment& segment,
                                       CudaExecutionContext& ctx, int depth, Recorded& r) {
  const CudaDriver& d = driver_;
  KILN_RETURN_IF_ERROR(d.Check(d.cuStreamBeginCapture(ctx.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                               "cuStreamBeginCapture"));
  const size_t timed_before = ctx.timed ? ctx.timed->size() : 0;
  const size_t events_before = ctx.events ? ctx.events->mark() : 0;
  ctx.capturing = true;
  ctx.capture_refused = false;
  Status issued = IssueCudaThunks(seq, segment.begin, segment.end, ctx, depth);
  // A multi-stream root's lanes joined the capture through their events;
  // they join back into the origin before it ends.
  if (ctx.streams && &seq == &ctx.streams->root()) {
    Status joined = ctx.streams->Join(ctx);
    if (issued.ok()) issued = joined;
  }
  ctx.capturing = false;
  CUgraph graph = nullptr;
  CUresult ended = d.cuStreamEndCapture(ctx.stream, &graph);  // always: it leaves capture mode
  if (!issued.ok() && ended == CUDA_SUCCESS && !ctx.capture_refused) {
    // A valid capture in which a thunk failed: the thunk's own error (an
    // injected fault, a bad launch), not a call the capture refused.
    d.cuGraphDestroy(graph);
    return issued;
  }
  if (!issued.ok() || ended != CUDA_SUCCESS) {
    if (graph) d.cuGraphDestroy(graph);
    if (ctx.events) {
      ctx.events->RewindTo(events_before);
      ctx.timed->resize(timed_before);
    }
    return false;
  }
  Status made = Status::Ok();
  if (r.exec) {
    CUgraphExecUpdateResultInfo info{};
    if (d.cuGraphExecUpdate(r.exec, graph, &info) != CUDA_SUCCESS) {
      // A topology the exec cannot take: instantiate anew.
      d.cuGraphExecDestroy(r.exec);
      r.exec = nullptr;
    }
  }
  if (!r.exec) made = d.Check(d.cuGraphInstantiateWithFlags(&r.exec, graph, 0), "cuGraphInstantiateWithFlags");
  d.cuGraphDestroy(graph);
  KILN_RETURN_IF_ERROR(made);
  r.timed.clear();
  if (ctx.timed) r.timed.assign(ctx.timed->begin() + static_cast<std::ptrdiff_t>(timed_before), ctx.timed->end());
  return true;
}

Status CudaGraphCache::Run(const thunks::SequenceThunk& seq, const CommandSegment& segment,
                           CudaExecutionContext& ctx, int depth) {
  Recorded& r = recorded_[{&seq, segment.begin, segment.end}];
  if (r.direct_runs == 0 || r.failed_captures >= 2) {
    ++r.direct_runs;
    return IssueCudaThunks(seq, segment.begin, segment.end, ctx, depth);
  }
  std::vector<uint64_t> key = Key(ctx);
  // A graph captured with events replays only in profiled executions, one
  // without only in unprofiled ones.
  const bool profiled = ctx.events != nullptr;
  bool replay = r.exec && key == r.key && profiled == !r.timed.empty();
  if (replay && profiled) {
    const size_t mark = ctx.events->mark();
    // A profiled replay needs the events the graph records to be the ones
    // this execution hands out next (its profile entries name them).
    for (const CudaTimedThunk& t : r.timed) {
      KILN_ASSIGN_OR_RETURN(CUevent begin, ctx.events->Next());
      KILN_ASSIGN_OR_RETURN(CUevent end, ctx.events->Next());
      replay &= begin == t.begin && end == t.end;
    }
    if (!replay) ctx.events->RewindTo(mark);
  }
  if (replay) {
    if (ctx.timed) ctx.timed->insert(ctx.timed->end(), r.timed.begin(), r.timed.end());
  } else {
    KILN_ASSIGN_OR_RETURN(bool captured, Capture(seq, segment, ctx, depth, r));
    if (!captured) {
      ++r.failed_captures;
      return IssueCudaThunks(seq, segment.begin, segment.end, ctx, depth);
    }
    r.key = std::move(key);
  }
  return driver_.Check(driver_.cuGraphLaunch(r.exec, ctx.stream), "cuGraphLaunch");
}

}  // namespace kiln::runtime
