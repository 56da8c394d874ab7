// The H100 SXM timing model of one kernel launch: its modeled duration and
// roofline-optimal duration from the launch's exact counters and geometry
// (docs/gpu_timing_model.md has the formula and the figures, which are in
// h100_figures.h). A pure function of the counters: the same counters give
// the same time, whatever machine emulated them.
//
//   blocks placed on 132 SMs, `resident` at a time per SM (occupancy from
//   threads, registers, shared memory and the 32-block limit); the busiest
//   SM runs ceil(blocks / 132) of them, in `waves` = ceil(that / resident);
//
//   time = launch + max(dram, l2, atomics,          device-wide throughput
//                       issue, pipe, l1, shared,    the busiest SM's throughput
//                       waves * longest warp chain) latency where it binds
//   optimal = launch + max(compulsory DRAM bytes / DRAM bandwidth,
//                          thread instructions / 32 issued on every scheduler)
#pragma once

#include <cstdint>

#include "cuda_emulator/include/kiln_cuda_emulator.h"

namespace kiln::emu::model {

// Which term of the model set the time.
enum class Bound : uint8_t { kLaunch, kDram, kL2, kAtomics, kIssue, kPipe, kL1, kShared, kLatency };
const char* BoundName(Bound bound);  // "dram", "issue", ...

struct Occupancy {
  uint32_t resident_blocks = 0;  // blocks per SM at a time
  const char* limit = "";        // what bounds it: "threads", "registers", "shared memory", "blocks"
  uint64_t busiest_sm_blocks = 0;  // ceil(blocks / 132)
  uint64_t waves = 0;              // ceil(busiest_sm_blocks / resident_blocks)
};

// The residency of the launch's blocks (geometry, registers_per_thread,
// static + dynamic shared memory of `c`).
Occupancy ComputeOccupancy(const KilnEmuCounters& c);

// Registers one warp is allocated for `registers_per_thread` each: rounded
// up to 8 per thread (at most 255), then to the allocation unit per warp.
uint64_t WarpRegisterAllocation(uint32_t registers_per_thread);

// One launch's modeled time, term by term, in seconds.
struct LaunchTime {
  Occupancy occupancy;
  // Device-wide throughput terms.
  double dram_bytes = 0;  // compulsory sectors plus re-reads the L2 cannot hold
  double dram = 0, l2 = 0, atomics = 0;
  // The busiest SM's throughput terms; `pipe` is the busiest pipe's.
  double issue = 0, pipe = 0, l1 = 0, shared = 0;
  const char* pipe_name = "";  // "fp32", "fp64", "fp16", "integer", "special", "memory"
  double latency = 0;          // waves x the longest warp timeline
  double launch = 0;
  double total = 0;    // launch + the largest term
  double optimal = 0;  // launch + the roofline bound
  Bound bound = Bound::kLaunch;
};

// The model of the launch `c` describes (c.launches == 1, as emu::Launch
// returns it). Counters covering no launch model to zero.
LaunchTime ModelLaunch(const KilnEmuCounters& c);

// Sets c->model_ns and c->optimal_ns from ModelLaunch(*c).
void AnnotateLaunch(KilnEmuCounters* c);

}  // namespace kiln::emu::model
