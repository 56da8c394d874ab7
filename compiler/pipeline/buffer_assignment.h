// Buffer assignment for a module's entry computation.
//
// Like XLA's BufferAssignment, but for one computation whose instructions are
// the units of scheduling: every logical buffer (points_to.h) gets a slice
// of an allocation. Parameters, constants and buffers that reach the root
// (outputs) get allocations of their own, since the caller owns or reads
// them; every other buffer is a temporary, live from its defining
// instruction to its last reader in the SequentialSchedule, and is packed
// into one temp arena by heap simulation with 64-byte aligned offsets.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/hlo/module.h"
#include "compiler/pipeline/points_to.h"
#include "compiler/pipeline/schedule.h"
#include "thunks/buffer.h"

namespace kiln::pipeline {

inline constexpr int64_t kBufferAlignment = 64;

// Where one logical buffer lives and when.
struct BufferPlacement {
  thunks::BufferSlice slice;
  int64_t live_start = 0;  // schedule position of the defining instruction
  int64_t live_end = 0;    // last position that reads it (schedule end for outputs)
};

class BufferAssignment {
 public:
  // Allocations in order: parameters (by number and leaf), constants (in
  // schedule order), outputs (by root leaf), then the temp arena if any
  // temporary exists.
  const std::vector<thunks::Allocation>& allocations() const { return allocations_; }
  // -1 when there are no temporaries.
  int32_t temp_allocation() const { return temp_allocation_; }

  // The slice holding leaf `index` of `inst`'s output; tuple-shaped indices
  // have no slice of their own.
  StatusOr<thunks::BufferSlice> SliceFor(const hlo::HloInstruction* inst, const ShapeIndex& index) const;

  const SequentialSchedule& schedule() const { return schedule_; }
  const PointsToAnalysis& points_to() const { return points_to_; }
  const BufferPlacement& placement(int64_t buffer_id) const { return placements_[buffer_id]; }

  // Size of the temp arena.
  int64_t peak_temp_bytes() const { return peak_temp_bytes_; }
  // Max over schedule positions of the (aligned) bytes of live temporaries:
  // no packing of this schedule can use a smaller arena.
  int64_t temp_lower_bound() const { return temp_lower_bound_; }
  // Constant allocation index -> constant instruction, in constant order.
  const std::vector<const hlo::HloInstruction*>& constants() const { return constants_; }

  // Allocations with their buffers, offsets and sizes; peak and lower bound.
  std::string ToString() const;

 private:
  friend class BufferAssigner;
  SequentialSchedule schedule_;
  PointsToAnalysis points_to_;
  std::vector<thunks::Allocation> allocations_;
  std::vector<BufferPlacement> placements_;  // by buffer id
  std::vector<const hlo::HloInstruction*> constants_;
  int32_t temp_allocation_ = -1;
  int64_t peak_temp_bytes_ = 0;
  int64_t temp_lower_bound_ = 0;
};

StatusOr<BufferAssignment> AssignBuffers(const hlo::HloComputation& computation, SequentialSchedule schedule);
// The module's entry computation under its post-order schedule.
StatusOr<BufferAssignment> AssignBuffers(const hlo::HloModule& module);

}  // namespace kiln::pipeline
