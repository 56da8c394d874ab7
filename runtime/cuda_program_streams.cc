// A multi-stream program's root on one CUstream per program stream; see
// cuda_program_streams.h.
#include "runtime/cuda_program_streams.h"

namespace kiln::runtime {

StatusOr<std::unique_ptr<CudaProgramStreams>> CudaProgramStreams::Create(CudaBackend& backend,
                                                                         const thunks::ThunkProgram& program,
                                                                         int device_stream) {
  std::unique_ptr<CudaProgramStreams> s(new CudaProgramStreams(backend, program));
  const CudaDriver& d = backend.driver();
  for (int p = 0; p < program.num_streams; ++p) {
    s->lanes_.push_back(CudaBackend::Lane(device_stream, p));
    KILN_ASSIGN_OR_RETURN(CUstream stream, backend.LaneStream(s->lanes_.back()));
    s->streams_.push_back(stream);
  }
  // Ordering only: no timing, which makes them cheaper on the driver.
  auto create = [&d](CUevent* e) { return d.Check(d.cuEventCreate(e, CU_EVENT_DISABLE_TIMING), "cuEventCreate"); };
  s->events_.assign(static_cast<size_t>(program.num_events), nullptr);
  for (CUevent& e : s->events_) KILN_RETURN_IF_ERROR(create(&e));
  s->event_epoch_.assign(s->events_.size(), 0);
  KILN_RETURN_IF_ERROR(create(&s->fork_));
  s->joins_.assign(s->streams_.size(), nullptr);
  for (size_t p = 1; p < s->joins_.size(); ++p) KILN_RETURN_IF_ERROR(create(&s->joins_[p]));
  s->forked_.assign(s->streams_.size(), false);
  return s;
}

CudaProgramStreams::~CudaProgramStreams() {
  const CudaDriver& d = backend_.driver();
  for (CUevent e : events_) {
    if (e) d.cuEventDestroy(e);
  }
  for (CUevent e : joins_) {
    if (e) d.cuEventDestroy(e);
  }
  if (fork_) d.cuEventDestroy(fork_);
}

void CudaProgramStreams::MoveTo(int program_stream, CudaExecutionContext& ctx) const {
  const size_t p = static_cast<size_t>(program_stream);
  ctx.stream = streams_[p];
  ctx.lane = lanes_[p];
  ctx.program_stream = program_stream;
  ctx.copy_scratch = copy_scratch_ + static_cast<CUdeviceptr>(program_stream * copy_scratch_bytes_);
}

void CudaProgramStreams::Begin(CudaExecutionContext& ctx, CUdeviceptr copy_scratch, int64_t copy_scratch_bytes) {
  copy_scratch_ = copy_scratch;
  copy_scratch_bytes_ = copy_scratch_bytes;
  ++epoch_;
  fork_recorded_ = false;
  forked_.assign(forked_.size(), false);
  ctx.streams = this;
  MoveTo(0, ctx);
}

Status CudaProgramStreams::EnsureForkRecorded() {
  if (fork_recorded_) return Status::Ok();
  const CudaDriver& d = backend_.driver();
  KILN_RETURN_IF_ERROR(d.Check(d.cuEventRecord(fork_, streams_[0]), "cuEventRecord (fork)"));
  fork_recorded_ = true;
  return Status::Ok();
}

Status CudaProgramStreams::BeforeThunk(const thunks::Thunk& t, CudaExecutionContext& ctx) {
  const CudaDriver& d = backend_.driver();
  const size_t p = static_cast<size_t>(t.stream);
  if (t.stream < 0 || p >= streams_.size()) return Error("thunk on program stream " + std::to_string(t.stream) + " out of range");
  // The fork point comes before the origin's first thunk of the epoch, so
  // the lanes do not wait for it.
  KILN_RETURN_IF_ERROR(EnsureForkRecorded());
  MoveTo(t.stream, ctx);
  if (p != 0 && !forked_[p]) {
    KILN_RETURN_IF_ERROR(d.Check(d.cuStreamWaitEvent(ctx.stream, fork_, 0), "cuStreamWaitEvent (fork)"));
    forked_[p] = true;
  }
  for (int32_t e : t.wait_events) {
    const size_t i = static_cast<size_t>(e);
    if (e < 0 || i >= events_.size()) return Error("wait for event " + std::to_string(e) + " out of range");
    if (event_epoch_[i] != epoch_) continue;  // ordered by the join and fork since
    KILN_RETURN_IF_ERROR(d.Check(d.cuStreamWaitEvent(ctx.stream, events_[i], 0), "cuStreamWaitEvent"));
  }
  return Status::Ok();
}

Status CudaProgramStreams::BeforeConditionalNode(const thunks::Thunk& t, CudaExecutionContext& ctx) {
  if (t.stream < 0 || static_cast<size_t>(t.stream) >= streams_.size()) {
    return Error("thunk on program stream " + std::to_string(t.stream) + " out of range");
  }
  return Join(ctx);
}

Status CudaProgramStreams::AfterThunk(const thunks::Thunk& t, CudaExecutionContext& ctx) {
  if (t.record_event < 0) return Status::Ok();
  const size_t i = static_cast<size_t>(t.record_event);
  if (i >= events_.size()) return Error("record of event " + std::to_string(t.record_event) + " out of range");
  const CudaDriver& d = backend_.driver();
  KILN_RETURN_IF_ERROR(d.Check(d.cuEventRecord(events_[i], ctx.stream), "cuEventRecord"));
  event_epoch_[i] = epoch_;
  return Status::Ok();
}

Status CudaProgramStreams::Join(CudaExecutionContext& ctx) {
  const CudaDriver& d = backend_.driver();
  for (size_t p = 1; p < streams_.size(); ++p) {
    if (!forked_[p]) continue;
    KILN_RETURN_IF_ERROR(d.Check(d.cuEventRecord(joins_[p], streams_[p]), "cuEventRecord (join)"));
    KILN_RETURN_IF_ERROR(d.Check(d.cuStreamWaitEvent(streams_[0], joins_[p], 0), "cuStreamWaitEvent (join)"));
  }
  ++epoch_;
  fork_recorded_ = false;
  forked_.assign(forked_.size(), false);
  MoveTo(0, ctx);
  return Status::Ok();
}

Status CudaProgramStreams::Synchronize() {
  const CudaDriver& d = backend_.driver();
  Status first = Status::Ok();
  for (CUstream s : streams_) {
    Status synced = d.Check(d.cuStreamSynchronize(s), "cuStreamSynchronize");
    if (first.ok()) first = synced;
  }
  return first;
}

}  // namespace kiln::runtime
