// A fake CUDA driver for testing the CUDA backend on machines without a
// GPU: a CudaDriver table whose entries emulate the driver on host memory.
//
// Device memory is host memory (CUdeviceptr = address), every stream
// operation runs at once, events carry a tick that advances by one per
// record (so elapsed times are exact: 1 ms per record), "kernels" are host
// functions registered by name that receive the kernelParams array, and a
// module image starting with "BAD" fails to load with a two-line JIT log.
// The fake counts what the backend does (stream syncs, uploads, live
// objects) so tests can assert on the stream-ordering contract. Test-only:
// the driver API has no user pointer, so the state is one global.
#pragma once

#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/cuda_driver.h"

namespace kiln::runtime::testing {

using FakeKernel = void (*)(void** params);

struct FakeLaunch {
  std::string kernel;
  unsigned grid[3], block[3], shared;
};

struct FakeCudaState {
  int sm_major = 9, sm_minor = 0;
  std::map<std::string, FakeKernel> kernels;
  std::set<std::string> failing_kernels;  // cuLaunchKernel fails for these
  std::string loaded_image;               // first bytes of the last image loaded
  std::vector<FakeLaunch> launches;
  int stream_syncs = 0, sync_uploads = 0, async_uploads = 0, overlapping_copies = 0;
  int live_device = 0, live_host = 0, live_events = 0, live_streams = 0, live_modules = 0;
  long tick = 0;
};

inline FakeCudaState& Fake() {
  static FakeCudaState state;
  return state;
}

namespace fake {

struct Event {
  long tick = 0;
};
struct Module {
  std::string image;
};

inline CUresult GetErrorName(CUresult r, const char** s) {
  switch (r) {
    case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_FAILED: *s = "CUDA_ERROR_LAUNCH_FAILED"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}
inline CUresult GetErrorString(CUresult, const char** s) {
  *s = "fake driver";
  return CUDA_SUCCESS;
}
inline CUresult Init(unsigned) { return CUDA_SUCCESS; }
inline CUresult DriverGetVersion(int* v) {
  *v = CUDA_VERSION;
  return CUDA_SUCCESS;
}
inline CUresult DeviceGetCount(int* n) {
  *n = 1;
  return CUDA_SUCCESS;
}
inline CUresult DeviceGet(CUdevice* d, int ordinal) {
  *d = ordinal;
  return CUDA_SUCCESS;
}
inline CUresult DeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *v = Fake().sm_major;
  else if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *v = Fake().sm_minor;
  else
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}
inline CUresult DeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "fake", static_cast<size_t>(len));
  return CUDA_SUCCESS;
}
inline CUresult PrimaryCtxRetain(CUcontext* c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(0x1000);
  return CUDA_SUCCESS;
}
inline CUresult PrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
inline CUresult CtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
inline CUresult StreamCreate(CUstream* s, unsigned) {
  *s = reinterpret_cast<CUstream>(new int(0));
  ++Fake().live_streams;
  return CUDA_SUCCESS;
}
inline CUresult StreamDestroy(CUstream s) {
  delete reinterpret_cast<int*>(s);
  --Fake().live_streams;
  return CUDA_SUCCESS;
}
inline CUresult StreamSynchronize(CUstream) {
  ++Fake().stream_syncs;
  return CUDA_SUCCESS;
}
inline CUresult EventCreate(CUevent* e, unsigned) {
  *e = reinterpret_cast<CUevent>(new Event());
  ++Fake().live_events;
  return CUDA_SUCCESS;
}
inline CUresult EventDestroy(CUevent e) {
  delete reinterpret_cast<Event*>(e);
  --Fake().live_events;
  return CUDA_SUCCESS;
}
inline CUresult EventRecord(CUevent e, CUstream) {
  reinterpret_cast<Event*>(e)->tick = ++Fake().tick;
  return CUDA_SUCCESS;
}
inline CUresult EventElapsedTime(float* ms, CUevent a, CUevent b) {
  *ms = static_cast<float>(reinterpret_cast<Event*>(b)->tick - reinterpret_cast<Event*>(a)->tick);
  return CUDA_SUCCESS;
}
inline void* Allocate(size_t n) {
  size_t rounded = (std::max<size_t>(n, 1) + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded);
  std::memset(p, 0xAB, rounded);  // garbage, as real device memory would hold
  return p;
}
inline CUresult MemAlloc(CUdeviceptr* p, size_t n) {
  *p = reinterpret_cast<CUdeviceptr>(Allocate(n));
  ++Fake().live_device;
  return CUDA_SUCCESS;
}
inline CUresult MemFree(CUdeviceptr p) {
  std::free(reinterpret_cast<void*>(p));
  --Fake().live_device;
  return CUDA_SUCCESS;
}
inline CUresult MemHostAlloc(void** p, size_t n, unsigned) {
  *p = Allocate(n);
  ++Fake().live_host;
  return CUDA_SUCCESS;
}
inline CUresult MemFreeHost(void* p) {
  std::free(p);
  --Fake().live_host;
  return CUDA_SUCCESS;
}
inline void* Ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }
inline CUresult MemcpyHtoD(CUdeviceptr d, const void* s, size_t n) {
  ++Fake().sync_uploads;
  std::memcpy(Ptr(d), s, n);
  return CUDA_SUCCESS;
}
inline CUresult MemcpyHtoDAsync(CUdeviceptr d, const void* s, size_t n, CUstream) {
  ++Fake().async_uploads;
  std::memcpy(Ptr(d), s, n);
  return CUDA_SUCCESS;
}
inline CUresult MemcpyDtoHAsync(void* d, CUdeviceptr s, size_t n, CUstream) {
  std::memcpy(d, Ptr(s), n);
  return CUDA_SUCCESS;
}
inline CUresult MemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream) {
  if (d < s + n && s < d + n && d != s) {  // cuMemcpy has no memmove semantics
    ++Fake().overlapping_copies;
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::memcpy(Ptr(d), Ptr(s), n);
  return CUDA_SUCCESS;
}
inline CUresult MemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream) {
  std::memset(Ptr(d), v, n);
  return CUDA_SUCCESS;
}
inline CUresult MemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream) {
  for (size_t i = 0; i < n; ++i) std::memcpy(static_cast<uint8_t*>(Ptr(d)) + 4 * i, &v, 4);
  return CUDA_SUCCESS;
}
inline CUresult ModuleLoadDataEx(CUmodule* m, const void* image, unsigned n, CUjit_option* options,
                                 void** values) {
  std::string head(static_cast<const char*>(image), 3);
  if (head == "BAD") {
    for (unsigned i = 0; i < n; ++i) {
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER) {
        std::strcpy(static_cast<char*>(values[i]), "ptxas fatal: bad input\nline 2\n");
      }
    }
    return CUDA_ERROR_INVALID_PTX;
  }
  Fake().loaded_image = std::string(static_cast<const char*>(image), 5);
  *m = reinterpret_cast<CUmodule>(new Module{Fake().loaded_image});
  ++Fake().live_modules;
  return CUDA_SUCCESS;
}
inline CUresult ModuleUnload(CUmodule m) {
  delete reinterpret_cast<Module*>(m);
  --Fake().live_modules;
  return CUDA_SUCCESS;
}
inline CUresult ModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  auto it = Fake().kernels.find(name);
  if (it == Fake().kernels.end()) return CUDA_ERROR_NOT_FOUND;
  // The function handle is the name's map entry (stable while the map lives).
  *f = reinterpret_cast<CUfunction>(&*it);
  return CUDA_SUCCESS;
}
inline CUresult LaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned shared, CUstream, void** params,
                             void**) {
  auto* entry = reinterpret_cast<std::pair<const std::string, FakeKernel>*>(f);
  Fake().launches.push_back({entry->first, {gx, gy, gz}, {bx, by, bz}, shared});
  if (Fake().failing_kernels.count(entry->first)) return CUDA_ERROR_LAUNCH_FAILED;
  entry->second(params);
  return CUDA_SUCCESS;
}

}  // namespace fake

// Resets the fake's state and returns a driver table pointing at it.
inline std::unique_ptr<CudaDriver> MakeFakeCudaDriver() {
  Fake() = FakeCudaState();
  std::unique_ptr<CudaDriver> d = CudaDriver::Empty("fake-libcuda");
  d->cuGetErrorName = fake::GetErrorName;
  d->cuGetErrorString = fake::GetErrorString;
  d->cuInit = fake::Init;
  d->cuDriverGetVersion = fake::DriverGetVersion;
  d->cuDeviceGetCount = fake::DeviceGetCount;
  d->cuDeviceGet = fake::DeviceGet;
  d->cuDeviceGetAttribute = fake::DeviceGetAttribute;
  d->cuDeviceGetName = fake::DeviceGetName;
  d->cuDevicePrimaryCtxRetain = fake::PrimaryCtxRetain;
  d->cuDevicePrimaryCtxRelease = fake::PrimaryCtxRelease;
  d->cuCtxSetCurrent = fake::CtxSetCurrent;
  d->cuStreamCreate = fake::StreamCreate;
  d->cuStreamDestroy = fake::StreamDestroy;
  d->cuStreamSynchronize = fake::StreamSynchronize;
  d->cuEventCreate = fake::EventCreate;
  d->cuEventDestroy = fake::EventDestroy;
  d->cuEventRecord = fake::EventRecord;
  d->cuEventElapsedTime = fake::EventElapsedTime;
  d->cuMemAlloc = fake::MemAlloc;
  d->cuMemFree = fake::MemFree;
  d->cuMemHostAlloc = fake::MemHostAlloc;
  d->cuMemFreeHost = fake::MemFreeHost;
  d->cuMemcpyHtoD = fake::MemcpyHtoD;
  d->cuMemcpyHtoDAsync = fake::MemcpyHtoDAsync;
  d->cuMemcpyDtoHAsync = fake::MemcpyDtoHAsync;
  d->cuMemcpyDtoDAsync = fake::MemcpyDtoDAsync;
  d->cuMemsetD8Async = fake::MemsetD8Async;
  d->cuMemsetD32Async = fake::MemsetD32Async;
  d->cuModuleLoadDataEx = fake::ModuleLoadDataEx;
  d->cuModuleUnload = fake::ModuleUnload;
  d->cuModuleGetFunction = fake::ModuleGetFunction;
  d->cuLaunchKernel = fake::LaunchKernel;
  return d;
}

}  // namespace kiln::runtime::testing
