// The emulated device's identity and limits: an H100 SXM (sm_90) as the
// driver reports it, so that code choosing tile sizes, grid shapes or
// shared-memory budgets from device attributes chooses as on the real GPU.
// Launch validation uses the same limits.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cuda_emulator/exec/launch.h"

namespace kiln::emu::driver {

inline constexpr char kDeviceName[] = "kiln emulator (sm_90, H100-class)";
inline constexpr uint64_t kTotalMemoryBytes = uint64_t{80} << 30;  // 80 GiB of HBM3

// Launch limits: the ones the launcher enforces (exec/launch.h).
using emu::kMaxBlockDim;
using emu::kMaxGridDim;
inline constexpr int kMaxThreadsPerBlock = static_cast<int>(emu::kMaxThreadsPerBlock);
// Shared memory per block: 48 KiB without opt-in, 227 KiB with
// cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
inline constexpr uint32_t kDefaultSharedPerBlock = 48 * 1024;
inline constexpr uint32_t kMaxSharedPerBlockOptin = emu::kMaxSharedPerBlock;

// The value of `attribute`, or false when the emulator does not know it.
bool DeviceAttribute(CUdevice_attribute attribute, int* value);

}  // namespace kiln::emu::driver
