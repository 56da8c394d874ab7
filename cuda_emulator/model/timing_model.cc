// The launch timing model; see timing_model.h and docs/gpu_timing_model.md.
#include "cuda_emulator/model/timing_model.h"

#include <algorithm>
#include <cmath>

#include "cuda_emulator/model/h100_figures.h"

namespace kiln::emu::model {
namespace {

using namespace h100;  // NOLINT: the figures read as in the documentation

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// WarpRegisterAllocation, no more than lets one block fit (the emulator
// refuses launches that do not; counters from elsewhere are capped).
uint64_t WarpRegisters(uint32_t declared, uint64_t warps_per_block) {
  uint64_t fits = kRegistersPerSm / warps_per_block / kRegisterAllocationUnit * kRegisterAllocationUnit;
  return std::min(WarpRegisterAllocation(declared), fits);
}

}  // namespace

uint64_t WarpRegisterAllocation(uint32_t registers_per_thread) {
  uint64_t per_thread = std::min<uint64_t>(CeilDiv(registers_per_thread, 8) * 8, kMaxRegistersPerThread);
  return CeilDiv(per_thread * 32, kRegisterAllocationUnit) * kRegisterAllocationUnit;
}

const char* BoundName(Bound bound) {
  switch (bound) {
    case Bound::kLaunch: return "launch";
    case Bound::kDram: return "dram";
    case Bound::kL2: return "l2";
    case Bound::kAtomics: return "atomics";
    case Bound::kIssue: return "issue";
    case Bound::kPipe: return "pipe";
    case Bound::kL1: return "l1";
    case Bound::kShared: return "shared";
    case Bound::kLatency: return "latency";
  }
  return "?";
}

Occupancy ComputeOccupancy(const KilnEmuCounters& c) {
  Occupancy o;
  uint64_t blocks = uint64_t{c.grid[0]} * c.grid[1] * c.grid[2];
  uint64_t threads = uint64_t{c.block[0]} * c.block[1] * c.block[2];
  if (blocks == 0 || threads == 0) return o;
  uint64_t warps = CeilDiv(threads, 32);
  uint64_t by_threads = kMaxThreadsPerSm / (warps * 32);
  uint64_t warp_registers = WarpRegisters(c.registers_per_thread, warps);
  uint64_t by_registers = warp_registers ? kRegistersPerSm / (warp_registers * warps) : kMaxBlocksPerSm;
  uint64_t shared = (uint64_t{c.static_shared_bytes} + 15) / 16 * 16 + c.dynamic_shared_bytes;
  uint64_t by_shared = kSharedBytesPerSm / (shared + kSharedReservedPerBlock);
  uint64_t resident = kMaxBlocksPerSm;
  o.limit = "blocks";
  auto bound = [&](uint64_t n, const char* why) {
    if (n < resident) {
      resident = n;
      o.limit = why;
    }
  };
  bound(by_threads, "threads");
  bound(by_registers, "registers");
  bound(by_shared, "shared memory");
  o.resident_blocks = static_cast<uint32_t>(std::max<uint64_t>(resident, 1));
  o.busiest_sm_blocks = CeilDiv(blocks, kSms);
  o.waves = CeilDiv(o.busiest_sm_blocks, o.resident_blocks);
  return o;
}

LaunchTime ModelLaunch(const KilnEmuCounters& c) {
  LaunchTime t;
  if (c.launches == 0) return t;
  t.launch = kLaunchSeconds;
  t.occupancy = ComputeOccupancy(c);
  const Occupancy& o = t.occupancy;
  uint64_t blocks = uint64_t{c.grid[0]} * c.grid[1] * c.grid[2];
  uint64_t warps_per_block = CeilDiv(uint64_t{c.block[0]} * c.block[1] * c.block[2], 32);

  // ---- The busiest SM: ceil(blocks / 132) average blocks. ----
  double per_sm = blocks ? static_cast<double>(o.busiest_sm_blocks) / static_cast<double>(blocks) : 0;
  // Its schedulers (and each pipe's sub-partition quarters) are busy only
  // as far as it has resident warps.
  uint64_t resident_warps = std::min<uint64_t>(o.busiest_sm_blocks, o.resident_blocks) * warps_per_block;
  double quarters = static_cast<double>(std::min<uint64_t>(kSchedulersPerSm, std::max<uint64_t>(resident_warps, 1)));
  double warp_instructions = 0;
  for (uint64_t n : c.warp_instructions) warp_instructions += static_cast<double>(n);
  double issue_slots = warp_instructions + double(c.integer64_instructions) - double(c.param_loads);
  double issue_cycles = per_sm * issue_slots / quarters;
  struct Pipe {
    const char* name;
    double warp_instructions;
    double lanes_per_clock;
  };
  const uint64_t* w = c.warp_instructions;
  const Pipe pipes[] = {
      {"fp32", double(w[KILN_EMU_CLASS_FP32]), kFp32LanesPerClock},
      {"fp64", double(w[KILN_EMU_CLASS_FP64]), kFp64LanesPerClock},
      {"fp16", double(w[KILN_EMU_CLASS_FP16]), kFp16LanesPerClock},
      {"integer", double(w[KILN_EMU_CLASS_INTEGER] + c.integer64_instructions), kIntegerLanesPerClock},
      {"special", double(w[KILN_EMU_CLASS_SPECIAL]), kSpecialLanesPerClock},
      {"memory", double(w[KILN_EMU_CLASS_MEMORY] - c.param_loads), kMemoryLanesPerClock},
  };
  double pipe_cycles = 0;
  for (const Pipe& p : pipes) {
    double cycles = per_sm * p.warp_instructions * 32 / (p.lanes_per_clock * quarters / kSchedulersPerSm);
    if (cycles > pipe_cycles) {
      pipe_cycles = cycles;
      t.pipe_name = p.name;
    }
  }
  double requests = double(c.global_load_requests + c.global_store_requests + c.local_requests);
  double sectors = double(c.global_load_sectors + c.global_store_sectors);
  double l1_cycles = per_sm * std::max(requests, sectors / kL1SectorsPerClock);
  double shared_cycles = per_sm * double(c.shared_wavefronts) / kSharedWavefrontsPerClock;
  t.issue = issue_cycles / kSmClockHz;
  t.pipe = pipe_cycles / kSmClockHz;
  t.l1 = l1_cycles / kSmClockHz;
  t.shared = shared_cycles / kSmClockHz;
  t.latency = double(o.waves) * double(c.max_warp_cycles) / kSmClockHz;

  // ---- Device-wide: DRAM, L2, atomics. ----
  double unique_load = double(c.global_unique_load_sectors), unique_store = double(c.global_unique_store_sectors);
  double unique_atomic = double(c.global_unique_atomic_sectors);
  // Compulsory: every sector read or written once; atomics read and write.
  double compulsory = kSectorBytes * (unique_load + unique_store + 2 * unique_atomic);
  double l2_load_sectors = std::max(0.0, double(c.global_load_sectors) - double(c.global_load_l1_hit_sectors));
  double footprint = kSectorBytes * (unique_load + unique_store + unique_atomic);
  double rereads = kSectorBytes * std::max(0.0, l2_load_sectors - unique_load);
  // Re-reads hit L2 while the footprint fits; beyond, the share of the
  // footprint L2 cannot hold misses again.
  double reread_misses = footprint > kL2Bytes ? rereads * (1.0 - kL2Bytes / footprint) : 0.0;
  t.dram_bytes = compulsory + reread_misses;
  t.dram = t.dram_bytes / kDramBytesPerSecond;
  double l2_bytes = kSectorBytes * (l2_load_sectors + double(c.global_store_sectors) + double(c.global_atomic_lanes));
  t.l2 = l2_bytes / kL2BytesPerSecond;
  if (c.global_atomic_lanes > 0) {
    double per_sector = double(c.global_atomic_lanes) / std::max(1.0, unique_atomic);
    t.atomics = per_sector / kAtomicsPerSectorPerClock / kSmClockHz;
  }

  // ---- Roofline max, plus the launch. ----
  const std::pair<double, Bound> terms[] = {
      {t.dram, Bound::kDram},   {t.l2, Bound::kL2},         {t.atomics, Bound::kAtomics},
      {t.issue, Bound::kIssue}, {t.pipe, Bound::kPipe},     {t.l1, Bound::kL1},
      {t.shared, Bound::kShared}, {t.latency, Bound::kLatency},
  };
  double longest = 0;
  for (const auto& [seconds, bound] : terms) {
    if (seconds > longest) {
      longest = seconds;
      t.bound = bound;
    }
  }
  t.total = t.launch + longest;
  double ideal_issue = double(c.thread_instructions) / 32.0 / (double(kSms) * kSchedulersPerSm * kSmClockHz);
  t.optimal = t.launch + std::max(compulsory / kDramBytesPerSecond, ideal_issue);
  return t;
}

void AnnotateLaunch(KilnEmuCounters* c) {
  LaunchTime t = ModelLaunch(*c);
  c->model_ns = static_cast<uint64_t>(std::llround(t.total * 1e9));
  c->optimal_ns = static_cast<uint64_t>(std::llround(t.optimal * 1e9));
}

}  // namespace kiln::emu::model
