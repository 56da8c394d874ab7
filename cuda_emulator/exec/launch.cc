// Launch: the grid's blocks on the thread pool, each block's warps stepped
// by an interpreter with explicit per-lane program counters.
//
// Divergence: each step runs the instruction at the smallest program
// counter among the warp's runnable lanes, for every lane at that counter.
// Lanes that branched apart therefore reconverge at the first instruction
// both paths reach, which for the structured code compilers emit is the
// immediate post-dominator, as on the hardware. A warp whose runnable lanes
// share one counter (the common case) skips the search.
//
// Synchronization: a lane reaching bar.sync waits until every thread of the
// block that has not exited has arrived (or the barrier's thread count);
// shfl/vote/redux.sync and bar.warp.sync wait until every lane of their
// membermask is at the instruction, then run once for all of them. A block
// in which nothing can run any more is a deadlock and an error.
#include "cuda_emulator/exec/launch.h"

#include <algorithm>
#include <cstring>

#include "cuda_emulator/exec/block_sample.h"
#include "cuda_emulator/exec/scoreboard.h"
#include "cuda_emulator/exec/sector_tracker.h"
#include "cuda_emulator/exec/shared_race_checker.h"
#include "cuda_emulator/exec/thread_pool.h"
#include "cuda_emulator/exec/warp_state.h"
#include "cuda_emulator/model/h100_figures.h"
#include "cuda_emulator/model/timing_model.h"

namespace kiln::emu {
namespace {

using ptx::Instruction;
using ptx::Opcode;
using ptx::Special;

constexpr uint32_t kNumSms = 132;  // %nsmid of an H100 SXM
constexpr int kMaxBarriers = 16;

bool IsWarpSync(Opcode op) {
  return op == Opcode::kShfl || op == Opcode::kVote || op == Opcode::kRedux ||
         op == Opcode::kBarWarpSync || op == Opcode::kMatch;
}

// kCall for one lane: copy the arguments into the callee's parameter slots
// and push the call. Device functions are inlined once per kernel with
// fixed parameter slots, so a recursive call would overwrite its caller's:
// it is an error, as is a stack deeper than kMaxCallDepth.
bool Call(WarpState& w, const Instruction& in, uint32_t pc, int lane) {
  uint8_t& depth = w.call_depth[lane];
  for (int i = 0; i < depth; ++i) {
    if (w.kernel->code[w.call_stack[lane][i]].target == in.target)
      return w.Fail(lane, "recursive call (the emulator inlines device functions)");
  }
  if (depth == WarpState::kMaxCallDepth)
    return w.Fail(lane, "call stack deeper than " + std::to_string(WarpState::kMaxCallDepth));
  uint8_t* local = w.local + static_cast<size_t>(lane) * w.kernel->local_bytes;
  for (const Instruction::LocalCopy& c : in.call_args) std::memmove(local + c.to, local + c.from, c.size);
  w.call_stack[lane][depth++] = pc;
  return true;
}

// cudaGraphSetConditional(handle, value) for one lane, from the call
// site's argument slots.
bool SetConditional(WarpState& w, const Instruction& in, int lane) {
  const uint8_t* local = w.local + static_cast<size_t>(lane) * w.kernel->local_bytes;
  uint64_t handle = 0;
  uint32_t value = 0;
  std::memcpy(&handle, local + in.call_args[0].from, 8);
  std::memcpy(&value, local + in.call_args[1].from, 4);
  const auto& set = w.launch->config.set_conditional;
  if (!set || !set(handle, value))
    return w.Fail(lane, "cudaGraphSetConditional", "handle " + std::to_string(handle) + " is not a live conditional handle");
  return true;
}

// The callee's ret for one lane: back to the instruction after the call,
// with the results copied into the call site's slots.
bool Return(WarpState& w, const std::vector<Instruction>& code, int lane) {
  uint8_t& depth = w.call_depth[lane];
  if (depth == 0) return w.Fail(lane, "ret of a device function that was not called");
  uint32_t call_pc = w.call_stack[lane][--depth];
  uint8_t* local = w.local + static_cast<size_t>(lane) * w.kernel->local_bytes;
  for (const Instruction::LocalCopy& c : code[call_pc].call_results)
    std::memmove(local + c.to, local + c.from, c.size);
  w.pc[lane] = call_pc + 1;
  return true;
}

// Runs one block at a time; one per pool worker, reused across blocks so
// that register files and shared memory are allocated once per launch.
class BlockRunner {
 public:
  BlockRunner(LaunchState& launch, WorkerState& worker) : ls_(launch), worker_(worker) {
    const ptx::Kernel& k = *ls_.kernel;
    const Dim3& b = ls_.config.block;
    threads_ = static_cast<uint32_t>(b.product());
    num_warps_ = (threads_ + 31) / 32;
    regs_.resize(static_cast<size_t>(num_warps_) * k.register_file_size() * 32);
    local_.resize(static_cast<size_t>(num_warps_) * 32 * k.local_bytes);
    shared_.resize(ls_.shared_bytes + 16);
    ready_.resize(static_cast<size_t>(num_warps_) * k.num_registers);
    warps_.resize(num_warps_);
  }

  void Run(int64_t linear_block);

 private:
  void StartWarp(WarpState& w, uint32_t index);
  // Steps `w` until no lane can run; false if it ran nothing.
  bool RunWarp(WarpState& w);
  bool ReleaseBarriers();
  void ReportDeadlock();

  LaunchState& ls_;
  WorkerState& worker_;
  uint32_t threads_ = 0, num_warps_ = 0;
  std::vector<uint64_t> regs_;
  std::vector<uint8_t> local_, shared_;
  std::vector<uint64_t> ready_;  // the scoreboard's register-ready cycles, per warp
  std::vector<WarpState> warps_;
  BlockState block_;
  SharedRaceChecker race_;
  // Per barrier id: the thread count its first arrival asked for (0: all).
  uint32_t barrier_count_[kMaxBarriers] = {};
};

void BlockRunner::StartWarp(WarpState& w, uint32_t index) {
  const ptx::Kernel& k = *ls_.kernel;
  w = WarpState();
  w.kernel = &k;
  w.launch = &ls_;
  w.block = &block_;
  w.worker = &worker_;
  w.warp_id = index;
  w.regs = regs_.data() + static_cast<size_t>(index) * k.register_file_size() * 32;
  w.local = local_.data() + static_cast<size_t>(index) * 32 * k.local_bytes;
  uint32_t lanes = std::min<uint32_t>(32, threads_ - index * 32);
  w.valid = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
  w.exited = ~w.valid;
  std::fill(w.regs, w.regs + static_cast<size_t>(k.num_registers) * 32, 0);
  w.ready = ready_.data() + static_cast<size_t>(index) * k.num_registers;
  std::fill(w.ready, w.ready + k.num_registers, 0);
  const Dim3& b = ls_.config.block;
  const Dim3& g = ls_.config.grid;
  auto set = [&](Special s, auto value_of_lane) {
    uint64_t* r = w.Reg(k.SpecialRegister(s));
    for (int l = 0; l < 32; ++l) r[l] = value_of_lane(l);
  };
  auto tid = [&](int l) { return index * 32 + static_cast<uint32_t>(l); };
  set(Special::kTidX, [&](int l) { return tid(l) % b.x; });
  set(Special::kTidY, [&](int l) { return (tid(l) / b.x) % b.y; });
  set(Special::kTidZ, [&](int l) { return tid(l) / (b.x * b.y); });
  set(Special::kNtidX, [&](int) { return b.x; });
  set(Special::kNtidY, [&](int) { return b.y; });
  set(Special::kNtidZ, [&](int) { return b.z; });
  set(Special::kCtaidX, [&](int) { return block_.id.x; });
  set(Special::kCtaidY, [&](int) { return block_.id.y; });
  set(Special::kCtaidZ, [&](int) { return block_.id.z; });
  set(Special::kNctaidX, [&](int) { return g.x; });
  set(Special::kNctaidY, [&](int) { return g.y; });
  set(Special::kNctaidZ, [&](int) { return g.z; });
  set(Special::kLaneid, [&](int l) { return static_cast<uint32_t>(l); });
  set(Special::kWarpid, [&](int) { return index; });
  set(Special::kNwarpid, [&](int) { return num_warps_; });
  uint64_t linear = block_.id.x + uint64_t{g.x} * (block_.id.y + uint64_t{g.y} * block_.id.z);
  set(Special::kSmid, [&](int) { return static_cast<uint32_t>(linear % kNumSms); });
  set(Special::kNsmid, [&](int) { return kNumSms; });
  set(Special::kGridid, [&](int) { return 0u; });
  set(Special::kLanemaskEq, [&](int l) { return 1u << l; });
  set(Special::kLanemaskLt, [&](int l) { return (1u << l) - 1; });
  set(Special::kLanemaskLe, [&](int l) { return l == 31 ? 0xffffffffu : (2u << l) - 1; });
  set(Special::kLanemaskGt, [&](int l) { return l == 31 ? 0u : ~((2u << l) - 1); });
  set(Special::kLanemaskGe, [&](int l) { return ~((1u << l) - 1); });
  set(Special::kClock, [&](int) { return 0u; });
  set(Special::kClock64, [&](int) { return 0u; });
  set(Special::kGlobaltimer, [&](int) { return 0u; });
  set(Special::kDynamicSmemSize, [&](int) { return ls_.config.dynamic_shared_bytes; });
  set(Special::kTotalSmemSize, [&](int) { return ls_.shared_bytes; });
}

bool BlockRunner::RunWarp(WarpState& w) {
  const std::vector<Instruction>& code = w.kernel->code;
  const uint32_t code_size = static_cast<uint32_t>(code.size());
  const IssueInfo* issue = ls_.issue;
  KilnEmuCounters& counters = worker_.counters;
  bool uniform = false;
  bool ran = false;
  for (;;) {
    if (w.failed || ls_.failed.load(std::memory_order_relaxed)) return ran;
    uint32_t runnable = w.valid & ~w.exited & ~w.at_barrier & ~w.at_sync;
    if (!runnable) return ran;
    uint32_t pc, mask;
    if (uniform) {
      pc = w.pc[std::countr_zero(runnable)];
      mask = runnable;
    } else {
      pc = UINT32_MAX;
      mask = 0;
      ForEachLane(runnable, [&](int l) {
        if (w.pc[l] < pc) {
          pc = w.pc[l];
          mask = 0;
        }
        if (w.pc[l] == pc) mask |= 1u << l;
      });
      uniform = mask == runnable;
    }
    if (pc >= code_size) {
      w.current = nullptr;
      w.Fail(std::countr_zero(mask), "program counter past the end of the kernel");
      return ran;
    }
    const Instruction& in = code[pc];
    w.current = &in;
    ran = true;

    if (IsWarpSync(in.opcode)) {
      // Gather every lane of the membermask at this instruction first.
      const ptx::Operand& m = in.src[in.num_src - 1];
      uint32_t member = static_cast<uint32_t>(w.S(m)[std::countr_zero(mask)]);
      uint32_t waiting_here = 0;
      ForEachLane(w.at_sync, [&](int l) {
        if (w.pc[l] == pc) waiting_here |= 1u << l;
      });
      uint32_t have = mask | waiting_here;
      uint32_t needed = member & w.valid & ~w.exited;
      if (needed & ~have) {
        w.at_sync |= mask;
        uniform = false;
        continue;
      }
      w.at_sync &= ~have;
      mask = have;
    }

    uint32_t exec = mask;
    if (in.guard >= 0) {
      const uint64_t* g = w.Reg(static_cast<uint32_t>(in.guard));
      exec = 0;
      ForEachLane(mask, [&](int l) {
        if (((g[l] & 1) != 0) != in.guard_negated) exec |= 1u << l;
      });
    }
    counters.warp_instructions[static_cast<int>(in.cls)]++;
    counters.thread_instructions += std::popcount(exec);
    ForEachLane(mask, [&](int l) { w.lane_instructions[l]++; });
    // Scoreboard: issue once the sources are ready.
    const IssueInfo& info = issue[pc];
    uint64_t issued = w.cycle + 1;
    for (int i = 0; i < info.num_src; ++i) issued = std::max(issued, w.ready[info.src[i]]);
    w.cycle = issued + info.slots - 1;  // a free instruction (slots 0) takes no cycle
    counters.integer64_instructions += info.slots == 2;
    counters.param_loads += info.slots == 0;

    uint32_t next = pc + 1;
    switch (in.opcode) {
      case Opcode::kBra:
        ForEachLane(mask, [&](int l) { w.pc[l] = (exec >> l) & 1 ? in.target : next; });
        if (exec != mask && exec != 0) uniform = false;
        continue;
      case Opcode::kCall: {
        bool ok = true;
        if (in.builtin == Instruction::Builtin::kGraphSetConditional) {
          ForEachLane(exec, [&](int l) { ok = ok && SetConditional(w, in, l); });
          if (!ok) return ran;
          ForEachLane(mask, [&](int l) { w.pc[l] = next; });
          continue;
        }
        ForEachLane(exec, [&](int l) {
          if (!ok) return;
          ok = Call(w, in, pc, l);
        });
        if (!ok) return ran;
        ForEachLane(mask, [&](int l) { w.pc[l] = (exec >> l) & 1 ? in.target : next; });
        if (exec != mask && exec != 0) uniform = false;
        continue;
      }
      case Opcode::kRet:
        if (in.returns_to_caller) {
          bool ok = true;
          ForEachLane(exec, [&](int l) {
            if (!ok) return;
            ok = Return(w, code, l);
          });
          if (!ok) return ran;
          ForEachLane(mask & ~exec, [&](int l) { w.pc[l] = next; });
          uniform = false;
          continue;
        }
        [[fallthrough]];
      case Opcode::kExit:
        w.exited |= exec;
        ForEachLane(mask & ~exec, [&](int l) { w.pc[l] = next; });
        continue;
      case Opcode::kTrap:
        if (exec) {
          w.Fail(std::countr_zero(exec), "trap instruction executed");
          return ran;
        }
        break;
      case Opcode::kBar: {
        if (exec) {
          int first = std::countr_zero(exec);
          uint64_t id = w.S(in.src[0])[first];
          uint64_t count = in.num_src > 1 ? w.S(in.src[1])[first] : 0;
          if (id >= kMaxBarriers) {
            w.Fail(first, "barrier id " + std::to_string(id) + " out of range (0..15)");
            return ran;
          }
          if (count % 32 != 0 || count > threads_ + 31) {
            w.Fail(first, "barrier thread count " + std::to_string(count) +
                              " is not a multiple of 32 within the block");
            return ran;
          }
          barrier_count_[id] = static_cast<uint32_t>(count);
          w.barrier_arrival = issued;
          w.at_barrier |= exec;
          ForEachLane(exec, [&](int l) { w.barrier_id[l] = static_cast<int>(id); });
          counters.barriers++;
          uniform = false;
        }
        break;
      }
      case Opcode::kBarWarpSync:
        if (block_.race) race_.WarpBarrier(w.warp_id);
        break;
      case Opcode::kMembar:
      case Opcode::kNop:
        break;
      default:
        if (exec && !in.handler(w, in, exec)) return ran;
        if (exec && info.num_dst) {  // lanes guarded off write nothing
          uint64_t done = issued + (info.latency ? info.latency : w.memory_latency);
          for (int i = 0; i < info.num_dst; ++i) w.ready[info.dst[i]] = done;
          w.finish = std::max(w.finish, done);
        }
        break;
    }
    ForEachLane(mask, [&](int l) { w.pc[l] = next; });
  }
}

bool BlockRunner::ReleaseBarriers() {
  uint32_t waiting[kMaxBarriers] = {};
  uint32_t alive = 0;
  for (WarpState& w : warps_) {
    alive += std::popcount(w.valid & ~w.exited);
    ForEachLane(w.at_barrier, [&](int l) { waiting[w.barrier_id[l]]++; });
  }
  bool released = false;
  for (int id = 0; id < kMaxBarriers; ++id) {
    if (waiting[id] == 0) continue;
    uint32_t expected = barrier_count_[id] ? barrier_count_[id] : alive;
    if (waiting[id] < expected) continue;
    // Every waiting warp leaves together, after the last arrival.
    uint64_t release = 0;
    for (WarpState& w : warps_) {
      ForEachLane(w.at_barrier, [&](int l) {
        if (w.barrier_id[l] == id) release = std::max(release, w.barrier_arrival);
      });
    }
    release += model::h100::kBarrierLatency;
    for (WarpState& w : warps_) {
      uint32_t before = w.at_barrier;
      ForEachLane(w.at_barrier, [&](int l) {
        if (w.barrier_id[l] == id) w.at_barrier &= ~(1u << l);
      });
      if (w.at_barrier != before) w.cycle = std::max(w.cycle, release);
    }
    barrier_count_[id] = 0;
    released = true;
  }
  if (released && block_.race) block_.race->Barrier();
  return released;
}

void BlockRunner::ReportDeadlock() {
  for (WarpState& w : warps_) {
    uint32_t stuck = w.valid & ~w.exited;
    if (!stuck) continue;
    int lane = std::countr_zero(stuck);
    w.current = &w.kernel->code[std::min<size_t>(w.pc[lane], w.kernel->code.size() - 1)];
    if (w.at_sync & (1u << lane)) {
      w.Fail(lane, "deadlock: lanes of the membermask never reached this warp-synchronous instruction");
    } else {
      w.Fail(lane, "deadlock: the block's threads wait at different barriers");
    }
    return;
  }
}

void BlockRunner::Run(int64_t linear_block) {
  const Dim3& g = ls_.config.grid;
  block_.id.x = static_cast<uint32_t>(linear_block % g.x);
  block_.id.y = static_cast<uint32_t>((linear_block / g.x) % g.y);
  block_.id.z = static_cast<uint32_t>(linear_block / (uint64_t{g.x} * g.y));
  block_.threads = threads_;
  // Shared memory starts as garbage on a GPU: a recognizable pattern makes
  // a kernel that reads it before writing fail its comparison.
  std::memset(shared_.data(), 0xcb, shared_.size());
  block_.shared = shared_.data();
  block_.race = ls_.checks.race_check ? &race_ : nullptr;
  if (block_.race) race_.StartBlock(ls_.shared_bytes, num_warps_);
  std::fill(std::begin(barrier_count_), std::end(barrier_count_), 0);
  for (uint32_t i = 0; i < num_warps_; ++i) StartWarp(warps_[i], i);
  for (;;) {
    bool progress = false;
    for (WarpState& w : warps_) {
      progress |= RunWarp(w);
      if (w.failed || ls_.failed.load(std::memory_order_relaxed)) return;
    }
    bool done = true;
    for (WarpState& w : warps_) done &= (w.valid & ~w.exited) == 0;
    if (done) break;
    if (ReleaseBarriers()) continue;
    if (!progress) {
      ReportDeadlock();
      return;
    }
  }
  uint64_t longest = 0, timeline = 0;
  for (WarpState& w : warps_) {
    for (int l = 0; l < 32; ++l) longest = std::max(longest, w.lane_instructions[l]);
    timeline = std::max({timeline, w.cycle, w.finish});
  }
  KilnEmuCounters& c = worker_.counters;
  c.max_thread_instructions = std::max(c.max_thread_instructions, longest);
  c.max_warp_cycles = std::max(c.max_warp_cycles, timeline);
}

}  // namespace

namespace {

std::string Text(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

uint32_t SharedBytes(const ptx::Kernel& kernel, const LaunchConfig& config) {
  return (kernel.static_shared_bytes + 15) / 16 * 16 + config.dynamic_shared_bytes;
}

}  // namespace

Status ValidateLaunch(const ptx::Kernel& k, const LaunchConfig& c) {
  std::string launch = "launch of '" + k.name + "': ";
  const uint32_t grid[3] = {c.grid.x, c.grid.y, c.grid.z};
  const uint32_t block[3] = {c.block.x, c.block.y, c.block.z};
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || grid[i] > kMaxGridDim[i]) return Error(launch + "grid " + Text(c.grid) + " is out of range");
    if (block[i] == 0 || block[i] > kMaxBlockDim[i])
      return Error(launch + "block " + Text(c.block) + " is out of range");
  }
  uint64_t threads = c.block.product();
  if (threads > kMaxThreadsPerBlock) {
    return Error(launch + "block " + Text(c.block) + " has " + std::to_string(threads) +
                 " threads (at most " + std::to_string(kMaxThreadsPerBlock) + ")");
  }
  if (k.required_block[0] != 0) {
    Dim3 required{k.required_block[0], std::max(1u, k.required_block[1]), std::max(1u, k.required_block[2])};
    if (required.x != c.block.x || required.y != c.block.y || required.z != c.block.z)
      return Error(launch + "block " + Text(c.block) + " differs from the kernel's .reqntid " + Text(required));
  }
  if (k.max_threads != 0 && threads > k.max_threads) {
    return Error(launch + "block " + Text(c.block) + " exceeds the kernel's .maxntid of " +
                 std::to_string(k.max_threads) + " threads");
  }
  if (uint32_t shared = SharedBytes(k, c); shared > kMaxSharedPerBlock) {
    return Error(launch + "needs " + std::to_string(shared) +
                 " bytes of shared memory; an sm_90 block has at most " + std::to_string(kMaxSharedPerBlock));
  }
  if (!k.params.empty() && !c.params) {
    return Error(launch + "kernelParams is null but the kernel takes " + std::to_string(k.params.size()) +
                 " parameters");
  }
  return Status::Ok();
}

uint32_t RegistersPerThread(const ptx::Kernel& k) {
  uint32_t registers = std::min(k.allocated_registers, model::h100::kMaxRegistersPerThread);
  uint64_t threads = k.max_threads;
  if (k.required_block[0] != 0)
    threads = uint64_t{k.required_block[0]} * std::max(1u, k.required_block[1]) * std::max(1u, k.required_block[2]);
  if (threads == 0) return registers;
  uint64_t warps = (threads + 31) / 32;
  uint64_t per_warp = model::h100::kRegistersPerSm / warps / model::h100::kRegisterAllocationUnit * model::h100::kRegisterAllocationUnit;
  uint32_t fits = static_cast<uint32_t>(per_warp / 32 / 8 * 8);
  return std::min(registers, fits);
}

Status CheckBlockRegisters(const ptx::Kernel& k, const LaunchConfig& c) {
  uint64_t warps = (c.block.product() + 31) / 32;
  uint32_t per_thread = RegistersPerThread(k);
  uint64_t needed = model::WarpRegisterAllocation(per_thread) * warps;
  if (needed <= model::h100::kRegistersPerSm) return Status::Ok();
  return Error("launch of '" + k.name + "': block " + Text(c.block) + " needs " + std::to_string(needed) +
               " registers (" + std::to_string(per_thread) + " per thread) but an SM has " +
               std::to_string(model::h100::kRegistersPerSm) + "; give the kernel a .maxntid so ptxas limits them");
}

StatusOr<CheckOptions> CheckOptions::FromEnvironment() {
  CheckOptions o;
  const char* v = std::getenv("KILN_EMU_CHECK");
  if (!v || !*v) return o;
  o.race_check = false;
  std::string s(v);
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    if (item == "memcheck" || item == "none") {
      // memcheck is always on
    } else if (item == "racecheck") {
      o.race_check = true;
    } else if (item == "initcheck") {
      o.uninitialized = true;
    } else {
      return Error("KILN_EMU_CHECK: unknown check '" + item +
                   "' (expected memcheck, racecheck, initcheck or none, comma-separated)");
    }
    start = end + 1;
  }
  return o;
}

StatusOr<KilnEmuCounters> Launch(const ptx::Kernel& kernel, const LaunchConfig& config,
                                 DeviceMemory& memory, const CheckOptions& checks,
                                 ThreadPool& pool) {
  KILN_RETURN_IF_ERROR(ValidateLaunch(kernel, config));
  uint32_t shared_bytes = SharedBytes(kernel, config);
  LaunchState ls;
  ls.kernel = &kernel;
  ls.config = config;
  ls.memory = &memory;
  ls.checks = checks;
  ls.shared_bytes = shared_bytes;
  ls.params.assign(kernel.param_bytes, 0);
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const ptx::Parameter& p = kernel.params[i];
    if (!config.params[i]) return Error("launch of '" + kernel.name + "': parameter " + std::to_string(i) + " is null");
    std::memcpy(ls.params.data() + p.offset, config.params[i], p.size);
  }
  SectorTracker sectors;
  ls.sectors = &sectors;
  std::vector<IssueInfo> issue = BuildIssueTable(kernel);
  ls.issue = issue.data();

  // Sampling mode runs `run` of the grid's blocks, spread over it.
  const uint64_t blocks = config.grid.product();
  const uint64_t run = config.sample_blocks != 0 && blocks > config.sample_blocks ? config.sample_blocks : blocks;
  int workers = pool.size();
  std::vector<WorkerState> states(static_cast<size_t>(workers));
  std::vector<std::unique_ptr<BlockRunner>> runners(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) states[static_cast<size_t>(i)].sectors = &sectors;
  pool.ParallelFor(static_cast<int64_t>(run), [&](int64_t i, int worker) {
    if (ls.failed.load(std::memory_order_relaxed)) return;
    std::unique_ptr<BlockRunner>& r = runners[static_cast<size_t>(worker)];
    if (!r) r = std::make_unique<BlockRunner>(ls, states[static_cast<size_t>(worker)]);
    r->Run(static_cast<int64_t>(run == blocks ? static_cast<uint64_t>(i)
                                              : SampledBlock(static_cast<uint64_t>(i), run, blocks)));
  });
  if (ls.failed) return Error(ls.error);

  KilnEmuCounters total{};
  for (const WorkerState& s : states) kilnEmuAddCounters(&total, &s.counters);
  if (run < blocks) ExtrapolateSample(&total, sectors.Footprints(), run, blocks);
  total.launches = 1;
  total.grid[0] = config.grid.x;
  total.grid[1] = config.grid.y;
  total.grid[2] = config.grid.z;
  total.block[0] = config.block.x;
  total.block[1] = config.block.y;
  total.block[2] = config.block.z;
  total.dynamic_shared_bytes = config.dynamic_shared_bytes;
  total.static_shared_bytes = kernel.static_shared_bytes;
  total.registers_per_thread = RegistersPerThread(kernel);
  model::AnnotateLaunch(&total);
  return total;
}

}  // namespace kiln::emu
