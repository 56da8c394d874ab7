// WarpState: the architectural state of one warp while the interpreter runs
// it (32 lanes' registers, per-lane program counters, exit/barrier/sync
// masks, local memory) and the block and launch it belongs to. Instruction
// handlers (ops_*.cc) read and write it; the scheduler (launch.cc) steps it.
//
// Registers are stored register-major (reg * 32 + lane) as raw 64-bit
// patterns: a narrower value occupies the low bits, zero-extended, except
// that signed narrow loads sign-extend (PTX sign-extends to the register's
// width, and every reader looks at the low bits of its own width only).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_emulator/exec/device_memory.h"
#include "cuda_emulator/exec/launch.h"
#include "cuda_emulator/exec/modeled_l1.h"
#include "cuda_emulator/exec/scoreboard.h"
#include "cuda_emulator/ptx/ptx_module.h"

namespace kiln::emu {

class SharedRaceChecker;
class SectorTracker;
struct SectorTrackerBitmaps;

// Generic addresses of the shared and local windows: far above any user
// address of x86-64 (< 2^47), so a generic pointer says its space.
inline constexpr uint64_t kSharedWindow = uint64_t{1} << 56;
inline constexpr uint64_t kLocalWindow = uint64_t{2} << 56;
inline constexpr uint64_t kWindowMask = (uint64_t{1} << 56) - 1;

// Per worker thread: counters and caches, merged when the launch ends.
struct WorkerState {
  KilnEmuCounters counters{};
  SectorTracker* sectors = nullptr;
  Allocation* last_allocation = nullptr;  // memcheck's one-entry cache
  const Allocation* sector_alloc = nullptr;  // the tracker's one-entry cache
  SectorTrackerBitmaps* sector_maps = nullptr;
};

struct LaunchState {
  const ptx::Kernel* kernel = nullptr;
  LaunchConfig config;
  DeviceMemory* memory = nullptr;
  CheckOptions checks;
  std::vector<uint8_t> params;  // the param space
  uint32_t shared_bytes = 0;    // static + dynamic
  SectorTracker* sectors = nullptr;
  const IssueInfo* issue = nullptr;  // per instruction of the kernel (scoreboard.h)
  // The first error of any block; blocks stop once it is set.
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  std::string error;
};

struct BlockState {
  Dim3 id;
  uint8_t* shared = nullptr;
  SharedRaceChecker* race = nullptr;  // null when race checks are off
  uint32_t threads = 0;
};

struct Src {
  const uint64_t* p;
  uint32_t stride;  // 0 for an immediate, 1 for a register
  uint64_t operator[](int lane) const { return p[static_cast<uint32_t>(lane) * stride]; }
};

struct WarpState {
  const ptx::Kernel* kernel = nullptr;
  LaunchState* launch = nullptr;
  BlockState* block = nullptr;
  WorkerState* worker = nullptr;
  uint64_t* regs = nullptr;   // register_file_size * 32
  uint8_t* local = nullptr;   // 32 * kernel->local_bytes
  uint32_t warp_id = 0;
  uint32_t valid = 0;          // lanes that exist (a partial last warp)
  uint32_t exited = 0;
  uint32_t at_barrier = 0;     // waiting at bar.sync
  uint32_t at_sync = 0;        // waiting for lanes at a warp-synchronous instruction
  int barrier_id[32] = {};     // which barrier each waiting lane is at
  uint32_t pc[32] = {};
  uint32_t carry = 0;          // CC.CF per lane (add.cc / addc)
  // Per lane: the call instructions of the inlined device functions it is
  // in, innermost last.
  static constexpr int kMaxCallDepth = 16;
  uint32_t call_stack[32][kMaxCallDepth] = {};
  uint8_t call_depth[32] = {};
  uint64_t lane_instructions[32] = {};
  // The timing model's scoreboard (scoreboard.h), in cycles from the
  // warp's start: when each of the kernel's registers is ready, the last
  // issue, the latest result, the issue of the bar.sync the warp waits at,
  // and the latency of the memory access a handler just made (from where
  // it went: L1, L2, DRAM, shared, ...).
  uint64_t* ready = nullptr;
  uint64_t cycle = 0;
  uint64_t finish = 0;
  uint64_t barrier_arrival = 0;
  uint32_t memory_latency = 0;
  ModeledL1 l1;
  bool failed = false;
  const ptx::Instruction* current = nullptr;

  uint64_t* Reg(uint32_t r) { return regs + static_cast<size_t>(r) * 32; }
  Src S(const ptx::Operand& o) {
    return o.kind == ptx::Operand::Kind::kImmediate ? Src{&o.imm, 0} : Src{Reg(o.reg), 1};
  }
  KilnEmuCounters& counters() { return worker->counters; }
  uint32_t LinearThread(int lane) const { return warp_id * 32 + static_cast<uint32_t>(lane); }

  // Records an error at the current instruction for `lane` ("<what> in
  // kernel 'k' block (x,y,z) thread (x,y,z), PTX line N: <detail>") and
  // returns false, so handlers can `return warp.Fail(...)`.
  bool Fail(int lane, const std::string& what, const std::string& detail = "");
};

// Runs `f(lane)` for every lane in `mask`.
template <typename F>
inline void ForEachLane(uint32_t mask, F&& f) {
  if (mask == 0xffffffffu) {
    for (int l = 0; l < 32; ++l) f(l);
    return;
  }
  while (mask) {
    int l = std::countr_zero(mask);
    mask &= mask - 1;
    f(l);
  }
}

// Raw bits <-> typed values.
template <typename T>
inline T As(uint64_t bits) {
  if constexpr (sizeof(T) == 8) {
    return std::bit_cast<T>(bits);
  } else if constexpr (sizeof(T) == 4) {
    return std::bit_cast<T>(static_cast<uint32_t>(bits));
  } else if constexpr (sizeof(T) == 2) {
    return std::bit_cast<T>(static_cast<uint16_t>(bits));
  } else {
    return std::bit_cast<T>(static_cast<uint8_t>(bits));
  }
}
template <typename T>
inline uint64_t Bits(T v) {
  if constexpr (sizeof(T) == 8) {
    return std::bit_cast<uint64_t>(v);
  } else if constexpr (sizeof(T) == 4) {
    return std::bit_cast<uint32_t>(v);
  } else if constexpr (sizeof(T) == 2) {
    return std::bit_cast<uint16_t>(v);
  } else {
    return std::bit_cast<uint8_t>(v);
  }
}

// The handler for a decoded instruction, or an error naming what is not
// supported ("unsupported instruction 'x' (PTX line N)"). Defined in
// ops_dispatch (one function per family below).
StatusOr<ptx::Handler> SelectHandler(const ptx::Instruction& inst);
ptx::Handler IntegerHandler(const ptx::Instruction& inst);
ptx::Handler FloatHandler(const ptx::Instruction& inst);
ptx::Handler ConvertHandler(const ptx::Instruction& inst);
ptx::Handler MemoryHandler(const ptx::Instruction& inst);
ptx::Handler WarpHandler(const ptx::Instruction& inst);

}  // namespace kiln::emu
