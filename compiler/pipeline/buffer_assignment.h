// Buffer assignment for a module's entry computation.
//
// Like XLA's BufferAssignment, but for one computation whose instructions are
// the units of scheduling: every logical buffer (points_to.h) gets a slice
// of an allocation. Parameters, constants and buffers that reach the root
// (outputs) get allocations of their own, since the caller owns or reads
// them; every other buffer is a temporary, live from its defining
// instruction to its last reader in the SequentialSchedule, and is packed
// by heap simulation with 64-byte aligned offsets into the temp arena of
// its color (its layout's memory space S(n)): one arena per color.
//
// In-place updates (in_place.h): when an operand's buffer dies at an
// instruction that may write its result there, the two form a shared pair
// and get the same slice; chains of pairs are placed as one unit.
//
// input_output_alias (entry only, BufferAssignmentOptions): the aliased
// output is computed into the parameter's allocation, which becomes both a
// parameter and an output (the runtime's donation path). That happens when
// the output value reaches the parameter through shared pairs, or is
// defined after the parameter's last read; otherwise the output value is
// kept elsewhere and an OutputCopy moves it into the parameter allocation
// after the last instruction (XLA's copy insertion).
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

struct BufferAssignmentOptions {
  // The module's input_output_alias; only meaningful for the entry.
  std::vector<hlo::InputOutputAlias> aliases;
  // For programs whose thunks may run on several streams: two temporaries
  // share bytes only when the last reader of one has a lower dependency
  // level (schedule.h) than the other's definition, so instructions that
  // could run concurrently never share bytes, which would order them.
  // Needs a schedule by level (LevelOrderSchedule), where that also means
  // the reader comes first.
  bool concurrent_temps = false;
};

// An operand buffer whose last reader writes its result into the same slice.
struct SharedPair {
  int64_t operand_buffer = 0;
  int64_t user_buffer = 0;
};

// Result leaf `output_index` is copied from `from` into `to` after the last
// instruction; the emitter stages copies whose source is another's target.
struct OutputCopy {
  ShapeIndex output_index;
  thunks::BufferSlice from, to;
};

// One temp arena: the temporaries of one color.
struct TempArena {
  int64_t color = 0;
  int32_t allocation = -1;
  int64_t size = 0;
  int64_t lower_bound = 0;  // max live bytes of that color's temporaries
};

class BufferAssignment {
 public:
  // Allocations in order: parameters (by number and leaf), constants (in
  // schedule order), outputs (by root leaf), then one temp arena per color
  // of temporaries (by increasing color).
  const std::vector<thunks::Allocation>& allocations() const { return allocations_; }
  // The arena of color 0 (else the first arena); -1 when there are no
  // temporaries.
  int32_t temp_allocation() const { return arenas_.empty() ? -1 : arenas_.front().allocation; }
  const std::vector<TempArena>& temp_arenas() const { return arenas_; }
  const std::vector<SharedPair>& shared_pairs() const { return shared_; }
  const std::vector<OutputCopy>& output_copies() const { return output_copies_; }
  // Where result leaf `output_index` is after the program: the destination
  // of its OutputCopy if any, else the root value's slice.
  StatusOr<thunks::BufferSlice> ResultSlice(const ShapeIndex& output_index) const;

  // The slice holding leaf `index` of `inst`'s output; tuple-shaped indices
  // have no slice of their own.
  StatusOr<thunks::BufferSlice> SliceFor(const hlo::HloInstruction* inst, const ShapeIndex& index) const;

  const SequentialSchedule& schedule() const { return schedule_; }
  const PointsToAnalysis& points_to() const { return points_to_; }
  const BufferPlacement& placement(int64_t buffer_id) const { return placements_[buffer_id]; }

  // Summed size of the temp arenas.
  int64_t peak_temp_bytes() const { return peak_temp_bytes_; }
  // Sum over colors of the max over schedule positions of the (aligned)
  // bytes of live temporaries (a shared pair counted once): no packing of
  // this schedule can use smaller arenas. With concurrent_temps, the max
  // over dependency levels instead.
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
  std::vector<TempArena> arenas_;
  std::vector<SharedPair> shared_;
  std::vector<OutputCopy> output_copies_;
  int64_t peak_temp_bytes_ = 0;
  int64_t temp_lower_bound_ = 0;
};

StatusOr<BufferAssignment> AssignBuffers(const hlo::HloComputation& computation, SequentialSchedule schedule,
                                         const BufferAssignmentOptions& options = {});
// The module's entry computation under its post-order schedule, with the
// module's input_output_alias.
StatusOr<BufferAssignment> AssignBuffers(const hlo::HloModule& module);

}  // namespace kiln::pipeline
