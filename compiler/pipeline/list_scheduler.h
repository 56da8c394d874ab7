// Memory-minimizing sequential schedules (XLA's ListMemoryScheduler,
// DFSMemoryScheduler and "min of list, DFS and post-order").
//
// Only temporaries share the temp arena (parameters, constants and outputs
// get allocations of their own, buffer_assignment.h), so the schedulers
// count only temporaries' bytes: an instruction "defines" the temporaries
// it writes and "frees" the temporaries whose last reader it is. Aliasing
// instructions (tuple, get-tuple-element, bitcast, opt-barrier) move no
// data; the readers of what they forward are the buffers' readers.
//
// Every scheduler here is deterministic: ties are broken by post-order
// position, never by pointer values.
#pragma once

#include "common/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/pipeline/buffer_assignment.h"
#include "compiler/pipeline/schedule.h"

namespace kiln::pipeline {

// Greedy list scheduling: among the ready instructions, run the one that
// frees the most temp bytes minus the temp bytes it defines; ties go to
// the earliest in post-order. Falls back to post-order if the points-to
// analysis fails (AssignBuffers will report that error).
SequentialSchedule ListMemorySchedule(const hlo::HloComputation& computation);

// Post-order DFS from the root that visits the operand with the largest
// cumulative temp bytes first, so big subtrees finish (and free) before
// small ones start.
SequentialSchedule DfsMemorySchedule(const hlo::HloComputation& computation);

// The schedule, among list, DFS and post-order, whose heap-simulated temp
// arena is smallest (ties: list, then DFS, then post-order).
SequentialSchedule MemoryMinimizingSchedule(const hlo::HloComputation& computation);

// AssignBuffers under the MemoryMinimizingSchedule, without assigning the
// winning schedule a second time; with options.concurrent_temps, under the
// LevelOrderSchedule instead.
StatusOr<BufferAssignment> AssignBuffersMinimizingMemory(const hlo::HloComputation& computation,
                                                         const BufferAssignmentOptions& options = {});

}  // namespace kiln::pipeline
