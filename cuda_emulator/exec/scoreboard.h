// The per-warp scoreboard of the timing model: what each instruction of a
// kernel reads and writes, how many issue slots it takes and how long its
// results take, so that the interpreter can keep, per warp, the cycle at
// which each register becomes ready. An instruction issues at
//   max(previous issue + 1, the cycles its source registers are ready)
// and its destinations are ready `latency` cycles later; the warp's
// timeline ends at its last issue or its last result. The longest timeline
// of a launch is KilnEmuCounters::max_warp_cycles: the latency chain the
// model charges per wave (model/timing_model.h). Latencies are the figures
// of model/h100_figures.h.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda_emulator/ptx/ptx_module.h"

namespace kiln::emu {

struct IssueInfo {
  static constexpr int kMaxSources = 12;
  static constexpr int kMaxDestinations = 4;
  uint32_t src[kMaxSources];
  uint32_t dst[kMaxDestinations];
  uint8_t num_src = 0, num_dst = 0;
  // Issue slots: 2 for 64-bit integer arithmetic (two 32-bit instructions),
  // 0 for ld.param (a constant-bank operand of the instructions using it).
  uint8_t slots = 1;
  // Cycles from issue to results; 0 for memory instructions, whose handler
  // sets WarpState::memory_latency from where the access went.
  uint16_t latency = 0;
};

// One entry per instruction of `kernel` (special registers, never written,
// are left out of the sources).
std::vector<IssueInfo> BuildIssueTable(const ptx::Kernel& kernel);

}  // namespace kiln::emu
