// Sampling mode (KILN_EMU_SAMPLE=<n>): for modules too large to emulate in
// full, a launch of more than n blocks runs only n of them, spread evenly
// over the grid (the first and the last included), and its counters are
// extrapolated to the whole grid. The sampled blocks run with every check;
// the blocks left out do not run, so device memory does not hold the
// program's results (kilnEmuResultsComputed() is 0).
//
// Extrapolation: every count is scaled by blocks / sampled blocks, except
// the maxima (longest thread, longest warp timeline), which stay, and the
// unique sectors, which are scaled per allocation and capped at the span
// from the first to the last sector the sample touched there (a sample of
// two blocks or more holds the grid's first and last blocks; a sample of
// one is capped at the allocation's size): data many blocks read (a
// broadcast operand) is then counted about once, data each block owns in
// proportion.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "cuda_emulator/exec/sector_tracker.h"
#include "cuda_emulator/include/kiln_cuda_emulator.h"

namespace kiln::emu {

// $KILN_EMU_SAMPLE: blocks per launch, or 0 when unset or empty. Anything
// but a positive integer is an error naming the variable.
StatusOr<uint32_t> SampleBlocksFromEnvironment();

// The linear index of the i-th of `sampled` blocks spread evenly over
// `total` (sampled < total): round(i * (total - 1) / (sampled - 1)).
uint64_t SampledBlock(uint64_t i, uint64_t sampled, uint64_t total);

// Scales the counters of `sampled` blocks to `total` (see above) and marks
// them sampled; `footprints` are the launch's SectorTracker::Footprints().
void ExtrapolateSample(KilnEmuCounters* c, const std::vector<SectorFootprint>& footprints, uint64_t sampled,
                       uint64_t total);

}  // namespace kiln::emu
