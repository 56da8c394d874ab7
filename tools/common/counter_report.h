// The CUDA emulator's exact per-thunk counters (bef-run --profile on
// --device=cuda under KILN_CUDA_EMULATOR): what every kernel thunk executed
// and how it used memory, per execution, beside the timed profile.
//
// Columns: launches, the last launch's grid and block, declared registers
// per thread, warp instructions, active lanes (thread instructions / 32 x
// warp instructions), the longest thread's instruction count, global load
// and store requests with sectors per request (4 is a coalesced f32 warp
// access, 32 a fully scattered one), unique MB touched (each 32-byte
// sector once), shared requests with bank-conflict wavefronts per request
// (1 = conflict free), barriers and atomics, and the instruction mix by
// class (fp32/fp64/fp16/int/sfu/mem/ctl, % of warp instructions).
#pragma once

#include <string>

#include "cuda_emulator/include/kiln_cuda_emulator.h"
#include "tools/common/profile_report.h"

namespace kiln::tools {

// The table for the rows of `report` that carry counters, per execution
// (the sums divided by the row's count); "" when no row has any.
std::string FormatCounterReport(const ProfileReport& report);

}  // namespace kiln::tools
