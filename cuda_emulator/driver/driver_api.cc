// Driver API: initialization, the device and the primary context, plus
// kilnEmuDescription, kilnEmuResultsComputed, kilnEmuInjectFault and
// kilnEmuLiveObjects, kilnEmuTransferCounters and kilnEmuApiCalls. Memory, streams and events, modules and launches are
// in the driver_*.cc files beside this one; all share EmulatedDevice.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cuda_emulator/driver/device_properties.h"
#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"
#include "cuda_emulator/exec/block_sample.h"

namespace {

using kiln::emu::driver::EmulatedDevice;
using kiln::emu::driver::Fail;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

// KILN_EMU_SAMPLE's blocks per launch, read once from the environment as
// cuInit reads it (these entry points may run before cuInit); 0 when unset
// or malformed (cuInit then fails naming the variable).
uint32_t SampleBlocks() {
  static const uint32_t blocks = [] {
    kiln::StatusOr<uint32_t> n = kiln::emu::SampleBlocksFromEnvironment();
    return n.ok() ? *n : 0;
  }();
  return blocks;
}

// The emulator's devices are ordinals 0 .. device_count - 1 (a CUdevice is
// its ordinal).
CUresult CheckDevice(CUdevice dev, const char* call) {
  if (dev < 0 || dev >= Device().device_count()) {
    return Fail(CUDA_ERROR_INVALID_DEVICE, std::string(call) + ": device " + std::to_string(dev) +
                                               " (the emulator has " + std::to_string(Device().device_count()) +
                                               ", KILN_EMU_DEVICES)");
  }
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

// "kiln emulator (sm_90, H100-class)", and in sampling mode
// "kiln emulator (sm_90, H100-class), sampled 8 blocks/launch: results not computed".
KILN_EMU_EXPORT const char* kilnEmuDescription(void) {
  static const std::string description = [] {
    std::string d = kiln::emu::driver::kDeviceName;
    if (uint32_t n = SampleBlocks(); n != 0)
      d += ", sampled " + std::to_string(n) + " blocks/launch: results not computed";
    return d;
  }();
  return description.c_str();
}

KILN_EMU_EXPORT int kilnEmuApiVersion(void) { return KILN_EMU_API_VERSION; }

KILN_EMU_EXPORT int kilnEmuResultsComputed(void) { return SampleBlocks() == 0 ? 1 : 0; }

KILN_EMU_EXPORT int kilnEmuInjectFault(int kind, int64_t after_n_calls) {
  kiln::emu::driver::ClearErrorDetail();
  if (kind < 0 || kind >= kiln::emu::driver::kFaultKinds) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "kilnEmuInjectFault: unknown fault kind " + std::to_string(kind));
  }
  Device().faults().Arm(static_cast<kiln::emu::driver::FaultKind>(kind), after_n_calls);
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT int kilnEmuLiveObjects(KilnEmuLiveObjects* out) {
  kiln::emu::driver::ClearErrorDetail();
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "kilnEmuLiveObjects: null pointer");
  *out = Device().LiveObjects();
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT int kilnEmuTransferCounters(KilnEmuTransferCounters* out) {
  kiln::emu::driver::ClearErrorDetail();
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "kilnEmuTransferCounters: null pointer");
  *out = Device().TransferCounters();
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT int kilnEmuApiCalls(KilnEmuApiCalls* out) {
  kiln::emu::driver::ClearErrorDetail();
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "kilnEmuApiCalls: null pointer");
  *out = Device().ApiCalls();
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuInit(unsigned int Flags) {
  if (Flags != 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuInit: Flags must be 0");
  if (kiln::emu::driver::EmulatedDriverVersion() < 0) {
    return Fail(CUDA_ERROR_INVALID_VALUE, std::string("cuInit: KILN_EMU_DRIVER_VERSION must be a version from 12000 to ") +
                                              std::to_string(CUDA_VERSION) + ", got '" +
                                              std::getenv("KILN_EMU_DRIVER_VERSION") + "'");
  }
  return Device().Initialize();
}

KILN_EMU_EXPORT CUresult cuDriverGetVersion(int* driverVersion) {
  kiln::emu::driver::ClearErrorDetail();
  if (!driverVersion) return Fail(CUDA_ERROR_INVALID_VALUE, "cuDriverGetVersion: null pointer");
  *driverVersion = kiln::emu::driver::EmulatedDriverVersion();
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuDeviceGetCount(int* count) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  if (!count) return Fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetCount: null pointer");
  *count = Device().device_count();
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  if (!device) return Fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGet: null pointer");
  if (CUresult r = CheckDevice(ordinal, "cuDeviceGet"); r != CUDA_SUCCESS) return r;
  *device = ordinal;
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  if (!pi) return Fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute: null pointer");
  if (CUresult r = CheckDevice(dev, "cuDeviceGetAttribute"); r != CUDA_SUCCESS) return r;
  if (!kiln::emu::driver::DeviceAttribute(attrib, pi)) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute: attribute " +
                                              std::to_string(static_cast<int>(attrib)) +
                                              " is not known to the emulator");
  }
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  if (!name || len <= 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetName: no buffer");
  if (CUresult r = CheckDevice(dev, "cuDeviceGetName"); r != CUDA_SUCCESS) return r;
  size_t n = std::min(std::strlen(kiln::emu::driver::kDeviceName), static_cast<size_t>(len) - 1);
  std::memcpy(name, kiln::emu::driver::kDeviceName, n);
  name[n] = '\0';
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  if (!bytes) return Fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceTotalMem: null pointer");
  if (CUresult r = CheckDevice(dev, "cuDeviceTotalMem"); r != CUDA_SUCCESS) return r;
  *bytes = kiln::emu::driver::kTotalMemoryBytes;
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  if (!pctx) return Fail(CUDA_ERROR_INVALID_VALUE, "cuDevicePrimaryCtxRetain: null pointer");
  if (CUresult r = CheckDevice(dev, "cuDevicePrimaryCtxRetain"); r != CUDA_SUCCESS) return r;
  *pctx = Device().RetainPrimaryContext(dev);
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckDevice(dev, "cuDevicePrimaryCtxRelease"); r != CUDA_SUCCESS) return r;
  return Device().ReleasePrimaryContext();
}

KILN_EMU_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  return Device().SetCurrent(ctx);
}

KILN_EMU_EXPORT CUresult cuCtxGetCurrent(CUcontext* pctx) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  if (!pctx) return Fail(CUDA_ERROR_INVALID_VALUE, "cuCtxGetCurrent: null pointer");
  *pctx = Device().current();
  return CUDA_SUCCESS;
}

// Every operation completed when it was issued, so synchronizing only
// reports a sticky fault.
KILN_EMU_EXPORT CUresult cuCtxSynchronize(void) { return Device().EnterContext(); }

}  // extern "C"
