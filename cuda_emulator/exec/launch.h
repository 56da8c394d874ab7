// Launching a kernel on the emulated GPU: the grid's blocks run on a thread
// pool, each block's warps are interpreted until every thread exits, and the
// checks and counters of every access are gathered into one LaunchResult.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "cuda_emulator/exec/device_memory.h"
#include "cuda_emulator/include/kiln_cuda_emulator.h"
#include "cuda_emulator/ptx/ptx_module.h"

namespace kiln::emu {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t product() const { return uint64_t{x} * y * z; }
};

// What the checkers look for beyond memcheck, which is always on.
struct CheckOptions {
  bool race_check = true;      // shared-memory hazards between barriers
  bool uninitialized = false;  // reads of device bytes never written
  // KILN_EMU_CHECK=memcheck,racecheck,initcheck (or "none") sets these;
  // malformed values are an error naming the variable.
  static StatusOr<CheckOptions> FromEnvironment();
};

struct LaunchConfig {
  Dim3 grid, block;
  uint32_t dynamic_shared_bytes = 0;
  // As cuLaunchKernel's kernelParams: params[i] points at parameter i's
  // value, whose size and alignment come from the kernel's PTX signature.
  void** params = nullptr;
  // Sampling mode (block_sample.h): run at most this many blocks, spread
  // over the grid, and extrapolate the counters; 0 runs every block.
  uint32_t sample_blocks = 0;
  // The device runtime's cudaGraphSetConditional(handle, value); false for
  // a handle the driver does not know. Null: the call fails the kernel.
  std::function<bool(uint64_t handle, uint32_t value)> set_conditional;
};

// sm_90 launch limits (CUDA programming guide, compute capability 9.0).
inline constexpr uint32_t kMaxThreadsPerBlock = 1024;
inline constexpr uint32_t kMaxBlockDim[3] = {1024, 1024, 64};
inline constexpr uint32_t kMaxGridDim[3] = {2147483647u, 65535u, 65535u};
inline constexpr uint32_t kMaxSharedPerBlock = 227 * 1024;  // with the opt-in attribute

// Whether `config` is a launch of `kernel` the hardware accepts: grid and
// block within the limits, the kernel's .reqntid/.maxntid, static +
// dynamic shared memory, parameters present. Launch checks it too; the
// driver calls it first to answer CUDA_ERROR_INVALID_VALUE.
Status ValidateLaunch(const ptx::Kernel& kernel, const LaunchConfig& config);

// Registers per thread as ptxas would allocate them: the liveness
// estimate (PTX registers are virtual), at most 255, and no more than a
// block of the kernel's .maxntid/.reqntid threads may hold, which is what
// those directives make ptxas guarantee.
uint32_t RegistersPerThread(const ptx::Kernel& kernel);

// Whether one block of `config` fits the SM's register file with the
// kernel's registers. The device refuses a launch that does not with
// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; the driver answers the same.
Status CheckBlockRegisters(const ptx::Kernel& kernel, const LaunchConfig& config);

class ThreadPool;  // exec/thread_pool.h

// Runs the whole grid (or its sample); returns once every block finished,
// with the counters and their modeled time (model_ns, optimal_ns). On a checker
// error the launch stops early and the status names kernel, block, thread,
// PTX line and address, e.g.
//   "invalid global store of 4 bytes at 0x7f3a... in kernel 'add' block
//    (3,0,0) thread (31,0,0), PTX line 42: 4 bytes past the end of a
//    1024-byte allocation at 0x7f3a..."
StatusOr<KilnEmuCounters> Launch(const ptx::Kernel& kernel, const LaunchConfig& config,
                                 DeviceMemory& memory, const CheckOptions& checks,
                                 ThreadPool& pool);

}  // namespace kiln::emu
