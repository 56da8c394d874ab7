// CudaCommStream: the communication stream of one Device stream, on which
// the async collectives of a program run beside its compute. Internal to
// the runtime.
//
// An async collective's start (a collective thunk with an async_id,
// cuda_collectives.h) is issued on the communication lane's CUstream
// (CudaBackend::CommLane), not on the compute stream: the compute stream
// records the fork event once the start's operands are ready, the
// communication stream waits for it (cuStreamWaitEvent) and issues NCCL's
// calls, then records the async id's done event. The thunks between the
// start and its done run on the compute stream meanwhile; the done makes
// the compute stream wait for the done event, so only what follows the
// done waits for the collective.
//
// Where a thunk between the start and the done may touch a source
// (async_source_hazards.h; kiln's buffer assignment keeps the operands
// live until the done, so that is a reader between them), the start first
// copies its sources, on the compute stream before the fork, into a
// snapshot area of its own (one per async id, kept across executions) and
// the collective reads the copy. A source that is also the destination
// needs none.
//
// Collectives are never recorded into CUDA graphs (command_segments.h), so
// the fork and the done are plain event records and waits outside any
// capture; a graph segment between a start and its done replays on the
// compute stream while the communication stream runs. The object belongs
// to an executable's per-Device-stream workspace, like
// CudaProgramStreams.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>

#include "common/status.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device_area.h"

namespace kiln::runtime {

class CudaCommStream {
 public:
  // The communication lane of Device stream `device_stream` (its CUstream
  // created now if new) and the fork event.
  static StatusOr<std::unique_ptr<CudaCommStream>> Create(CudaBackend& backend, int device_stream);
  ~CudaCommStream();  // the context must be current
  CudaCommStream(const CudaCommStream&) = delete;
  CudaCommStream& operator=(const CudaCommStream&) = delete;

  CUstream stream() const { return stream_; }
  int lane() const { return lane_; }

  // Device memory of at least `bytes` for the source copies of async id
  // `async_id`, kept for later executions.
  StatusOr<CUdeviceptr> SnapshotArea(int64_t async_id, uint64_t bytes);
  // The start of `async_id`: the communication stream waits for what
  // `compute` has issued so far.
  Status Fork(CUstream compute);
  // After the start's calls: records the async id's done event on the
  // communication stream.
  Status Finish(int64_t async_id);
  // The done of `async_id`: `compute` waits for its done event (nothing
  // when no start of it is in flight).
  Status Await(int64_t async_id, CUstream compute);
  // `compute` waits for every start still in flight (the end of an
  // execution whose done never came, so no work outlives it).
  Status AwaitAll(CUstream compute);
  // Waits for the communication stream (after a failed execution).
  Status Synchronize();

 private:
  explicit CudaCommStream(CudaBackend& backend) : backend_(backend) {}
  struct InFlight {
    CUevent done = nullptr;
    bool pending = false;  // recorded since the last Await
  };

  CudaBackend& backend_;
  int lane_ = 0;
  CUstream stream_ = nullptr;
  CUevent fork_ = nullptr;
  std::map<int64_t, InFlight> in_flight_;  // by async id
  std::map<int64_t, GrowableDeviceArea> snapshots_;     // by async id
};

}  // namespace kiln::runtime
