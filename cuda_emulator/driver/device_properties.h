// The emulated device's identity and limits: an H100 SXM (sm_90) as the
// driver reports it, so that code choosing tile sizes, grid shapes or
// shared-memory budgets from device attributes chooses as on the real GPU.
// Launch validation uses the same limits.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace kiln::emu::driver {

inline constexpr char kDeviceName[] = "kiln emulator (sm_90, H100-class)";
inline constexpr uint64_t kTotalMemoryBytes = uint64_t{80} << 30;  // 80 GiB of HBM3

inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr uint32_t kMaxBlockDim[3] = {1024, 1024, 64};
inline constexpr uint32_t kMaxGridDim[3] = {2147483647u, 65535u, 65535u};
// Shared memory per block: 48 KiB without opt-in, 227 KiB with
// cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
inline constexpr uint32_t kDefaultSharedPerBlock = 48 * 1024;
inline constexpr uint32_t kMaxSharedPerBlockOptin = 227 * 1024;

// The value of `attribute`, or false when the emulator does not know it.
bool DeviceAttribute(CUdevice_attribute attribute, int* value);

}  // namespace kiln::emu::driver
