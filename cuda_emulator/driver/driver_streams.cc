// Driver API: streams and events, and kilnEmuEventCounters.
//
// Work completes when it is issued (see timeline.h), so synchronizing and
// querying only validate their handle and report a sticky fault; events
// read the modeled stream clocks.
#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"

namespace {

using kiln::emu::driver::EmulatedDevice;
using kiln::emu::driver::Fail;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

CUresult CheckStream(CUstream stream, const char* call) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (!Device().timeline().Find(stream)) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, std::string(call) + ": not a live stream");
  }
  return CUDA_SUCCESS;
}

CUresult CheckEvent(CUevent event) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().timeline().CheckEvent(event);
}

}  // namespace

extern "C" {

KILN_EMU_EXPORT CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().timeline().CreateStream(Flags, phStream);
}

KILN_EMU_EXPORT CUresult cuStreamDestroy(CUstream hStream) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().timeline().DestroyStream(hStream);
}

KILN_EMU_EXPORT CUresult cuStreamSynchronize(CUstream hStream) {
  return CheckStream(hStream, "cuStreamSynchronize");
}

KILN_EMU_EXPORT CUresult cuStreamQuery(CUstream hStream) {
  return CheckStream(hStream, "cuStreamQuery");
}

KILN_EMU_EXPORT CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().timeline().CreateEvent(Flags, phEvent);
}

KILN_EMU_EXPORT CUresult cuEventDestroy(CUevent hEvent) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().timeline().DestroyEvent(hEvent);
}

KILN_EMU_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().timeline().Record(hEvent, hStream);
}

KILN_EMU_EXPORT CUresult cuEventSynchronize(CUevent hEvent) { return CheckEvent(hEvent); }

// An event that was never recorded counts as complete, as on the driver.
KILN_EMU_EXPORT CUresult cuEventQuery(CUevent hEvent) { return CheckEvent(hEvent); }

KILN_EMU_EXPORT CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().timeline().ElapsedMs(hStart, hEnd, pMilliseconds);
}

// Introspection: works on a sticky-failed context too, to show what ran.
KILN_EMU_EXPORT int kilnEmuEventCounters(void* start_event, void* end_event, KilnEmuCounters* out) {
  if (CUresult r = Device().EnterDriver(); r != CUDA_SUCCESS) return r;
  return Device().timeline().CountersBetween(static_cast<CUevent>(start_event),
                                             static_cast<CUevent>(end_event), out);
}

}  // extern "C"
