// CudaProgramStreams: a multi-stream program's root on CUDA, one CUstream
// per program stream (thunks/streams.h). Internal to the runtime.
//
// Program stream 0 runs on the Device stream's CUstream (the origin); program
// stream p > 0 on lane CudaBackend::Lane(device stream, p), a CUstream of its
// own with its own library handles and scratch, made once per Device
// stream and kept. The object belongs to an executable's per-Device-stream
// workspace, so its events are created once, not per execution.
//
// The root runs in epochs. An epoch starts with every lane joined into the
// origin. Its fork point is an event recorded on the origin before the
// origin's first thunk of the epoch (or when a lane first needs it, if the
// origin has none yet); a lane waits for it (cuStreamWaitEvent) before its
// first thunk of the epoch. A thunk waits for the program's events it
// lists and records its own, on its lane. Join ends the epoch: each lane
// that ran something records a join event that the origin waits for. An
// event recorded in an earlier epoch needs no wait: the join and the next
// fork already order it.
//
// The executor joins before and after each CUDA graph segment of the root
// and at the end of the execution; a graph capture joins inside itself
// before cuStreamEndCapture, and before a root thunk it records as a
// conditional node (BeforeConditionalNode). Inside a capture the same calls fork and join
// the capture (a lane that waits for an event recorded in the capture joins
// it), so the captured graph has one branch per program stream with the
// program's events as edges; replaying it is one cuGraphLaunch on the
// origin.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_executor.h"
#include "thunks/program.h"

namespace kiln::runtime {

class CudaProgramStreams {
 public:
  // The program's lanes on Device stream `device_stream` (their CUstreams
  // created now if new), its events and the fork and join events.
  static StatusOr<std::unique_ptr<CudaProgramStreams>> Create(CudaBackend& backend,
                                                              const thunks::ThunkProgram& program,
                                                              int device_stream);
  ~CudaProgramStreams();  // the context must be current
  CudaProgramStreams(const CudaProgramStreams&) = delete;
  CudaProgramStreams& operator=(const CudaProgramStreams&) = delete;

  const thunks::SequenceThunk& root() const { return program_.root; }
  // Every lane (library scratch addresses a captured graph depends on).
  const std::vector<int>& lanes() const { return lanes_; }

  // Start of an execution: a fresh epoch on the origin, ctx on it; copy
  // scratch of program stream p at copy_scratch + p * copy_scratch_bytes.
  void Begin(CudaExecutionContext& ctx, CUdeviceptr copy_scratch, int64_t copy_scratch_bytes);
  // Before root thunk `t`: ctx moves to its lane, which forks from the
  // origin if it has not in this epoch, and waits for t's events.
  Status BeforeThunk(const thunks::Thunk& t, CudaExecutionContext& ctx);
  // Before root thunk `t` when it records a conditional node inside a
  // capture (command_segments.h, RecordsConditionalNode): the node's bodies
  // are captured on the origin, around which the capture ends and resumes,
  // which needs every lane joined into the origin first. So the epoch ends
  // here and t runs on the origin: the join orders it after everything its
  // events would, and the lanes fork again after it.
  Status BeforeConditionalNode(const thunks::Thunk& t, CudaExecutionContext& ctx);
  // After root thunk `t`: records its event on its lane.
  Status AfterThunk(const thunks::Thunk& t, CudaExecutionContext& ctx);
  // Joins every lane that ran something into the origin and starts a new
  // epoch; ctx back on the origin.
  Status Join(CudaExecutionContext& ctx);
  // Waits for every lane (after a failed execution, before the workspace
  // is reused); the first error.
  Status Synchronize();

 private:
  CudaProgramStreams(CudaBackend& backend, const thunks::ThunkProgram& program)
      : backend_(backend), program_(program) {}
  void MoveTo(int program_stream, CudaExecutionContext& ctx) const;
  Status EnsureForkRecorded();

  CudaBackend& backend_;
  const thunks::ThunkProgram& program_;
  std::vector<int> lanes_;          // by program stream
  std::vector<CUstream> streams_;   // by program stream
  std::vector<CUevent> events_;     // the program's, by number
  std::vector<uint64_t> event_epoch_;  // the epoch each was last recorded in
  CUevent fork_ = nullptr;
  std::vector<CUevent> joins_;      // by program stream
  uint64_t epoch_ = 0;
  bool fork_recorded_ = false;
  std::vector<bool> forked_;        // by program stream, in this epoch
  CUdeviceptr copy_scratch_ = 0;
  int64_t copy_scratch_bytes_ = 0;
};

}  // namespace kiln::runtime
