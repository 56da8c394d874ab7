// How many registers a kernel needs per thread, estimated from its PTX.
//
// PTX names a fresh virtual register for nearly every value, so the count
// it declares is far above what ptxas allocates (a 20-register kernel may
// declare 150). Occupancy, and through it the timing model, needs the
// allocated count: this estimates it as the peak number of 32-bit register
// units simultaneously live (backward liveness over the kernel's control
// flow; predicates take none, 64-bit registers two), plus two for the
// addresses and constants ptxas keeps in registers. A register allocator
// needs at least the peak, and ptxas's allocation is usually within a few
// registers of it.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda_emulator/exec/scoreboard.h"
#include "cuda_emulator/ptx/ptx_module.h"

namespace kiln::emu {

// `issue` is BuildIssueTable(kernel).
uint32_t EstimateAllocatedRegisters(const ptx::Kernel& kernel, const std::vector<IssueInfo>& issue);

}  // namespace kiln::emu
