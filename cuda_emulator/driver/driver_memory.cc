// Driver API: device and pinned host memory, copies and memsets.
//
// Every range is checked against DeviceMemory's ledger before a byte moves;
// a bad one is CUDA_ERROR_INVALID_VALUE with a detail naming the address
// and where it lies (past the end of an allocation, in a freed one, ...).
// Each copy or memset runs when issued (or is recorded into a capturing
// stream's graph) and advances its stream's clock by its modeled time
// (model::TransferSeconds). Allocation, freeing and the synchronous copies
// are "potentially unsafe" calls during stream capture (graphs.h).
#include <string>

#include "cuda_emulator/driver/device_properties.h"
#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"
#include "cuda_emulator/model/call_models.h"

namespace {

using kiln::Status;
using kiln::emu::MemoryKind;
using kiln::emu::driver::EmulatedDevice;
using kiln::emu::driver::Fail;
using kiln::emu::driver::GraphNode;
using kiln::emu::driver::GraphNodeKind;
using kiln::emu::model::TransferKind;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

// Issues `op` (a copy or memset of `bytes`) on `stream`: the checks common
// to every transfer, the error mapping and the stream's clock. Captured
// (graphs.h) while the stream is capturing; `op` is copied into the node.
template <typename Op>
CUresult Transfer(const char* call, CUstream stream, TransferKind kind, uint64_t bytes, Op op) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = Device().timeline().Find(stream);
  if (!timeline) return Fail(CUDA_ERROR_INVALID_HANDLE, std::string(call) + ": not a live stream");
  GraphNode node;
  node.kind = kind == TransferKind::kMemset ? GraphNodeKind::kMemset : GraphNodeKind::kMemcpy;
  node.name = call;
  node.run = [call, kind, bytes, op](CUstream, kiln::emu::driver::StreamTimeline& t) -> CUresult {
    Status s = op(Device().memory());
    if (!s.ok()) return Fail(CUDA_ERROR_INVALID_VALUE, std::string(call) + ": " + s.message());
    t.Advance(kiln::emu::model::TransferSeconds(kind, bytes) * 1e6);
    Device().CountTransfer(kind, bytes);
    return CUDA_SUCCESS;
  };
  return Device().Issue(stream, *timeline, std::move(node));
}

// The synchronous forms wait for the device: not allowed where a capture
// prohibits potentially unsafe calls.
template <typename Op>
CUresult SyncTransfer(const char* call, TransferKind kind, uint64_t bytes, Op op) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (CUresult r = Device().graphs().CheckUnsafeCall(call); r != CUDA_SUCCESS) return r;
  return Transfer(call, nullptr, kind, bytes, op);
}

CUresult CopyHtoD(const char* call, CUdeviceptr dst, const void* src, size_t n, CUstream stream) {
  return Transfer(call, stream, TransferKind::kHostToDevice, n,
                  [=](auto& m) { return m.CopyToDevice(dst, src, n); });
}
CUresult CopyDtoH(const char* call, void* dst, CUdeviceptr src, size_t n, CUstream stream) {
  return Transfer(call, stream, TransferKind::kDeviceToHost, n,
                  [=](auto& m) { return m.CopyFromDevice(dst, src, n); });
}
CUresult CopyDtoD(const char* call, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream) {
  return Transfer(call, stream, TransferKind::kDeviceToDevice, n,
                  [=](auto& m) { return m.CopyDeviceToDevice(dst, src, n); });
}
CUresult Set(const char* call, CUdeviceptr dst, uint32_t pattern, int element_bytes, size_t n,
             CUstream stream) {
  return Transfer(call, stream, TransferKind::kMemset, uint64_t{n} * element_bytes,
                  [=](auto& m) { return m.Memset(dst, pattern, element_bytes, n); });
}

}  // namespace

extern "C" {

KILN_EMU_EXPORT CUresult cuMemAlloc(CUdeviceptr* dptr, size_t bytesize) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (CUresult r = Device().graphs().CheckUnsafeCall("cuMemAlloc"); r != CUDA_SUCCESS) return r;
  if (!dptr) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc: null pointer");
  if (bytesize == 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc: 0 bytes requested");
  std::string injected = Device().faults().Take(kiln::emu::driver::FaultKind::kAllocation,
                                                "cuMemAlloc of " + std::to_string(bytesize) + " bytes");
  if (!injected.empty()) return Fail(CUDA_ERROR_OUT_OF_MEMORY, injected);
  uint64_t available = kiln::emu::driver::kTotalMemoryBytes - Device().memory().bytes_in_use();
  if (bytesize > available) {
    return Fail(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc of " + std::to_string(bytesize) + " bytes: " +
                                              std::to_string(available) + " of the device's " +
                                              std::to_string(kiln::emu::driver::kTotalMemoryBytes) +
                                              " bytes are free");
  }
  kiln::StatusOr<uint64_t> p = Device().memory().Allocate(bytesize, MemoryKind::kDevice, Device().current_device());
  if (!p.ok()) return Fail(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc: " + p.status().message());
  *dptr = *p;
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuMemFree(CUdeviceptr dptr) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (CUresult r = Device().graphs().CheckUnsafeCall("cuMemFree"); r != CUDA_SUCCESS) return r;
  if (dptr == 0) return CUDA_SUCCESS;
  Status s = Device().memory().Free(dptr, MemoryKind::kDevice);
  if (!s.ok()) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemFree: " + s.message());
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (CUresult r = Device().graphs().CheckUnsafeCall("cuMemHostAlloc"); r != CUDA_SUCCESS) return r;
  if (!pp) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostAlloc: null pointer");
  unsigned known = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if (Flags & ~known) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostAlloc: unknown flags " + std::to_string(Flags));
  }
  if (bytesize == 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostAlloc: 0 bytes requested");
  std::string injected = Device().faults().Take(kiln::emu::driver::FaultKind::kAllocation,
                                                "cuMemHostAlloc of " + std::to_string(bytesize) + " bytes");
  if (!injected.empty()) return Fail(CUDA_ERROR_OUT_OF_MEMORY, injected);
  kiln::StatusOr<uint64_t> p = Device().memory().Allocate(bytesize, MemoryKind::kPinnedHost);
  if (!p.ok()) return Fail(CUDA_ERROR_OUT_OF_MEMORY, "cuMemHostAlloc: " + p.status().message());
  *pp = reinterpret_cast<void*>(*p);
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuMemFreeHost(void* p) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (CUresult r = Device().graphs().CheckUnsafeCall("cuMemFreeHost"); r != CUDA_SUCCESS) return r;
  Status s = Device().memory().Free(reinterpret_cast<uint64_t>(p), MemoryKind::kPinnedHost);
  if (!s.ok()) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemFreeHost: " + s.message());
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuMemGetInfo(size_t* free, size_t* total) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!free || !total) return Fail(CUDA_ERROR_INVALID_VALUE, "cuMemGetInfo: null pointer");
  *total = kiln::emu::driver::kTotalMemoryBytes;
  *free = *total - Device().memory().bytes_in_use();
  return CUDA_SUCCESS;
}

KILN_EMU_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
  return SyncTransfer("cuMemcpyHtoD", TransferKind::kHostToDevice, n,
                      [=](auto& m) { return m.CopyToDevice(dst, src, n); });
}
KILN_EMU_EXPORT CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) {
  return SyncTransfer("cuMemcpyDtoH", TransferKind::kDeviceToHost, n,
                      [=](auto& m) { return m.CopyFromDevice(dst, src, n); });
}
KILN_EMU_EXPORT CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return SyncTransfer("cuMemcpyDtoD", TransferKind::kDeviceToDevice, n,
                      [=](auto& m) { return m.CopyDeviceToDevice(dst, src, n); });
}
KILN_EMU_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
  return CopyHtoD("cuMemcpyHtoDAsync", dst, src, n, s);
}
KILN_EMU_EXPORT CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n, CUstream s) {
  return CopyDtoH("cuMemcpyDtoHAsync", dst, src, n, s);
}
KILN_EMU_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  return CopyDtoD("cuMemcpyDtoDAsync", dst, src, n, s);
}

KILN_EMU_EXPORT CUresult cuMemsetD8(CUdeviceptr dst, unsigned char uc, size_t n) {
  return SyncTransfer("cuMemsetD8", TransferKind::kMemset, n,
                      [=](auto& m) { return m.Memset(dst, uc, 1, n); });
}
KILN_EMU_EXPORT CUresult cuMemsetD32(CUdeviceptr dst, unsigned int ui, size_t n) {
  return SyncTransfer("cuMemsetD32", TransferKind::kMemset, uint64_t{n} * 4,
                      [=](auto& m) { return m.Memset(dst, ui, 4, n); });
}
KILN_EMU_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s) {
  return Set("cuMemsetD8Async", dst, uc, 1, n, s);
}
KILN_EMU_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s) {
  return Set("cuMemsetD32Async", dst, ui, 4, n, s);
}

}  // extern "C"
