// The communication stream of one Device stream; see cuda_comm_stream.h.
#include "runtime/cuda_comm_stream.h"

namespace kiln::runtime {

StatusOr<std::unique_ptr<CudaCommStream>> CudaCommStream::Create(CudaBackend& backend, int device_stream) {
  std::unique_ptr<CudaCommStream> c(new CudaCommStream(backend));
  c->lane_ = CudaBackend::CommLane(device_stream);
  KILN_ASSIGN_OR_RETURN(c->stream_, backend.LaneStream(c->lane_));
  const CudaDriver& d = backend.driver();
  KILN_RETURN_IF_ERROR(d.Check(d.cuEventCreate(&c->fork_, CU_EVENT_DISABLE_TIMING), "cuEventCreate"));
  return c;
}

CudaCommStream::~CudaCommStream() {
  const CudaDriver& d = backend_.driver();
  if (stream_) (void)d.cuStreamSynchronize(stream_);
  for (auto& [id, f] : in_flight_) d.cuEventDestroy(f.done);
  for (auto& [id, a] : snapshots_) a.Release(d);
  if (fork_) d.cuEventDestroy(fork_);
}

StatusOr<CUdeviceptr> CudaCommStream::SnapshotArea(int64_t async_id, uint64_t bytes) {
  // The communication stream may still read the old area.
  return snapshots_[async_id].Reserve(backend_.driver(), bytes, stream_, "for an async collective's sources");
}

Status CudaCommStream::Fork(CUstream compute) {
  const CudaDriver& d = backend_.driver();
  KILN_RETURN_IF_ERROR(d.Check(d.cuEventRecord(fork_, compute), "cuEventRecord (collective fork)"));
  return d.Check(d.cuStreamWaitEvent(stream_, fork_, 0), "cuStreamWaitEvent (collective fork)");
}

Status CudaCommStream::Finish(int64_t async_id) {
  const CudaDriver& d = backend_.driver();
  InFlight& f = in_flight_[async_id];
  if (!f.done) KILN_RETURN_IF_ERROR(d.Check(d.cuEventCreate(&f.done, CU_EVENT_DISABLE_TIMING), "cuEventCreate"));
  KILN_RETURN_IF_ERROR(d.Check(d.cuEventRecord(f.done, stream_), "cuEventRecord (collective done)"));
  f.pending = true;
  return Status::Ok();
}

Status CudaCommStream::Await(int64_t async_id, CUstream compute) {
  auto it = in_flight_.find(async_id);
  if (it == in_flight_.end() || !it->second.pending) return Status::Ok();
  const CudaDriver& d = backend_.driver();
  KILN_RETURN_IF_ERROR(
      d.Check(d.cuStreamWaitEvent(compute, it->second.done, 0), "cuStreamWaitEvent (collective done)"));
  it->second.pending = false;
  return Status::Ok();
}

Status CudaCommStream::AwaitAll(CUstream compute) {
  for (auto& [id, f] : in_flight_) KILN_RETURN_IF_ERROR(Await(id, compute));
  return Status::Ok();
}

Status CudaCommStream::Synchronize() {
  const CudaDriver& d = backend_.driver();
  for (auto& [id, f] : in_flight_) f.pending = false;
  return d.Check(d.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

}  // namespace kiln::runtime
