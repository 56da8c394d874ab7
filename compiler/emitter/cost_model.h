// Cost estimates of thunks, recorded in ThunkInfo so the runtime's profile
// can report achieved FLOP/s and bytes/s against each thunk's own work.
//
// Deliberately simple (operation and byte counts, no cache or occupancy
// model): a roofline denominator, not a performance predictor.
#pragma once

#include <cstdint>

#include "compiler/hlo/computation.h"
#include "thunks/thunk_info.h"

namespace kiln::emitter {

// A fused loop kernel: one flop per element of every arithmetic instruction
// (transcendentals counted separately), one reducer application per reduced
// input element; reads every operand once and writes the result once.
thunks::CostEstimate FusionCost(const hlo::HloInstruction& fusion);

// A [b,m,k] x [b,k,n] GEMM: 2*b*m*n*k flops.
thunks::CostEstimate GemmCost(const hlo::HloInstruction& dot);

// A copy of `bytes` bytes.
thunks::CostEstimate CopyCost(int64_t bytes);

}  // namespace kiln::emitter
