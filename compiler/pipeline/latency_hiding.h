// Latency hiding for asynchronous collectives (a simple form of XLA's
// LatencyHidingScheduler).
//
// An async collective's start hands the exchange to the runtime (a thread
// of its own on the host, the stream on CUDA) and its done waits for it:
// whatever the schedule puts between the two runs while the devices
// communicate. The memory-minimizing schedulers (list_scheduler.h) know
// nothing of that and tend to put a done right after its start. Here each
// start moves as early as its operands allow and each done as late as its
// first user allows:
//
// - kReorder: list scheduling over the given schedule. A ready start runs
//   first; then a done whose exchange is covered: the compute scheduled
//   since its start is estimated to take at least as long as the exchange
//   (overlap_cost_model.h), so waiting longer gains nothing and only
//   lengthens the lives of its buffers; otherwise the ready instruction
//   that comes first in the given schedule; any other done only when
//   nothing else is ready. Independent compute that the given schedule put
//   after a done's users moves before the done.
// - kMoveOnly: the given schedule's order of every other instruction is
//   kept; a start runs right after its last operand, a done right before
//   the first instruction that needs it.
//
// Memory stays bounded (AssignBuffersHidingLatency): moving starts early
// and dones late lengthens the lives of the buffers in flight and of the
// compute moved between them, so each schedule is kept only if its temp
// arena stays within kOverlapMemorySlack of the given schedule's (kReorder
// first, then kMoveOnly, else the given schedule stands).
#pragma once

#include <optional>

#include "common/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/pipeline/buffer_assignment.h"
#include "compiler/pipeline/schedule.h"

namespace kiln::pipeline {

enum class OverlapMode { kReorder, kMoveOnly };

// all-reduce-start, all-gather-start, collective-permute-start and an
// async-start (of a collective: AsyncToSync leaves no other).
bool IsAsyncCollectiveStart(const hlo::HloInstruction& inst);
// Their -done ops.
bool IsAsyncCollectiveDone(const hlo::HloInstruction& inst);

// `schedule` with its async collectives' starts early and dones late; the
// same schedule when the computation has none.
SequentialSchedule HideCollectiveLatency(const SequentialSchedule& schedule, OverlapMode mode);

// How much larger the overlapped schedule's temp arena may be than the
// given one's: a quarter, and at least the bytes the async collectives of
// the computation produce and read (what is in flight when they all
// overlap: buffer assignment keeps a start's operands live until its done).
int64_t OverlapMemoryLimit(const hlo::HloComputation& computation, int64_t base_peak_bytes);

// The buffer assignment of the first overlapped schedule (kReorder, then
// kMoveOnly) whose temp arena stays within OverlapMemoryLimit of `base`'s,
// or nullopt when the computation has no async collective, or neither
// schedule fits (then `base` stands).
StatusOr<std::optional<BufferAssignment>> AssignBuffersHidingLatency(const hlo::HloComputation& computation,
                                                                     const BufferAssignment& base,
                                                                     const BufferAssignmentOptions& options);

}  // namespace kiln::pipeline
