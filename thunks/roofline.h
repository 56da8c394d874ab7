// Roofline time estimates: the least time a thunk's work can take on a
// target, given the target's memory bandwidth and arithmetic rates.
//
// A thunk moving B bytes and doing F flops and T transcendentals cannot
// finish before max(B / bandwidth, F / flop rate, T / transcendental rate).
// The profile report prints this "optimal" time next to the measured one
// (how far each kernel is from the hardware's limit); the compiler can use
// it to weigh fusion decisions. It is a lower bound, not a prediction: no
// caches, latencies or launch overheads.
//
// Lives with the thunks (no LLVM) so the runtime-side tools can use it.
// The built-in numbers are peak figures; KILN_ROOFLINE overrides them, e.g.
// KILN_ROOFLINE="bw=2.0e12,flops=5e13" for a PCIe H100.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "thunks/thunk_info.h"

namespace kiln::thunks {

struct RooflineTarget {
  std::string name;
  double bytes_per_second = 0;           // memory bandwidth
  double flops_per_second = 0;           // fp32, no tensor cores
  double tensor_flops_per_second = 0;    // bf16/f16 GEMMs on tensor cores
  double transcendentals_per_second = 0; // exp, log, tanh, ... (GPU: SFU rate)
};

// An H100 SXM class GPU: 3.0e12 B/s HBM3, 6.0e13 fp32 FLOP/s,
// 7.5e14 bf16 dense tensor-core FLOP/s, 3.9e12 transcendentals/s
// (132 SMs x 16 SFU results per clock x ~1.8 GHz).
RooflineTarget CudaRooflineTarget();

// A generic 2-core x86-64 host: 2.0e10 B/s (one DDR4 channel as seen by two
// cores), 5.0e10 FLOP/s (2 cores x ~3 GHz x 8-wide AVX2, about half the
// FMA peak, what generated loops reach), the same rate for GEMMs (no
// tensor cores), 5.0e9 transcendentals/s (vectorized polynomial exp/log of
// ~10 flops each).
RooflineTarget HostRooflineTarget();

// `base` with the fields named in `spec` replaced. Spec: comma-separated
// key=value pairs, keys bw (bytes/s), flops, tensor_flops, trans (per second)
// and name; every rate positive and finite. "" leaves `base` unchanged.
// Example: "bw=3.0e12,flops=6e13,tensor_flops=7.5e14".
StatusOr<RooflineTarget> ParseRooflineTarget(std::string_view spec, RooflineTarget base);

// `base` overridden by the environment variable KILN_ROOFLINE, if set;
// errors name the variable.
StatusOr<RooflineTarget> ApplyRooflineEnvironment(RooflineTarget base);

// Lower bound, in seconds, of the time `cost` takes on `target`: the largest
// of bytes / bandwidth, flops / flop rate (the tensor-core rate when
// `tensor_core`) and transcendentals / transcendental rate.
double OptimalSeconds(const CostEstimate& cost, const RooflineTarget& target, bool tensor_core);

// "cuda-h100: 3.00e+12 B/s, 6.00e+13 FLOP/s, ...", for --stats and reports.
std::string RooflineTargetToString(const RooflineTarget& target);

}  // namespace kiln::thunks
