// The latency-hiding scheduler's cost model: how long an async
// collective's exchange and an instruction's compute are estimated to take,
// so that a done waits only until the compute scheduled since its start
// covers the exchange (latency_hiding.h).
//
// The figures are nominal, the H100 and NVLink 4 ones of the emulator's
// timing model (docs/gpu_timing_model.md): an exchange costs 4 us, 1 us per
// ring step and its bus bytes (nccl-tests' definition) at 450 GB/s; an
// instruction that runs (anything but a parameter, constant or an op that
// only forwards buffers) costs a 2 us launch plus the larger of its flops
// at 66.9 TFLOP/s and its bytes at 3 TB/s (analysis/hlo_cost_analysis.h).
// They only rank the two sides against each other on one device; they are
// not a timing, and a host's exchange and compute keep roughly the same
// proportion.
#pragma once

#include "compiler/hlo/instruction.h"

namespace kiln::pipeline {

// Estimated seconds of the exchange an async collective start begins
// (all-reduce-start, all-gather-start, collective-permute-start, or an
// async-start of one); 0 for anything else.
double EstimatedExchangeSeconds(const hlo::HloInstruction& start);

// Estimated seconds of the compute of one instruction.
double EstimatedComputeSeconds(const hlo::HloInstruction& instruction);

}  // namespace kiln::pipeline
