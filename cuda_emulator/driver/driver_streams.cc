// Driver API: streams and events, and kilnEmuEventCounters.
//
// Work completes when it is issued (see timeline.h), so synchronizing and
// querying only validate their handle and report a sticky fault (and fail
// on a capturing stream, graphs.h); events read the modeled stream clocks.
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
  CUresult r = Device().timeline().DestroyStream(hStream);
  if (r == CUDA_SUCCESS) Device().graphs().StreamDestroyed(hStream);
  return r;
}

KILN_EMU_EXPORT CUresult cuStreamSynchronize(CUstream hStream) {
  if (CUresult r = CheckStream(hStream, "cuStreamSynchronize"); r != CUDA_SUCCESS) return r;
  Device().Count(EmulatedDevice::Counted::kStreamSync);
  return Device().graphs().ForbidOnCapturingStream(hStream, "cuStreamSynchronize");
}

KILN_EMU_EXPORT CUresult cuStreamQuery(CUstream hStream) {
  if (CUresult r = CheckStream(hStream, "cuStreamQuery"); r != CUDA_SUCCESS) return r;
  return Device().graphs().ForbidOnCapturingStream(hStream, "cuStreamQuery");
}

KILN_EMU_EXPORT CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  return Device().timeline().CreateEvent(Flags, phEvent);
}

KILN_EMU_EXPORT CUresult cuEventDestroy(CUevent hEvent) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  CUresult r = Device().timeline().DestroyEvent(hEvent);
  if (r == CUDA_SUCCESS) Device().graphs().EventDestroyed(hEvent);
  return r;
}

// On a capturing stream a plain record only orders work inside the capture
// (no node; the event has no time until recorded outside a capture), and
// CU_EVENT_RECORD_EXTERNAL makes an event record node, as on the driver.
// Outside a capture the flag is invalid.
KILN_EMU_EXPORT CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  if (CUresult r = Device().EnterContext(); r != CUDA_SUCCESS) return r;
  if (flags & ~static_cast<unsigned>(CU_EVENT_RECORD_EXTERNAL)) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuEventRecordWithFlags: unknown flags " + std::to_string(flags));
  }
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = Device().timeline().Find(hStream);
  if (!timeline) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord: not a live stream");
  if (CUresult r = Device().timeline().CheckEvent(hEvent); r != CUDA_SUCCESS && r != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    return r;
  kiln::emu::driver::ClearErrorDetail();
  const bool capturing = Device().graphs().CaptureId(hStream) != 0;
  const bool external = (flags & CU_EVENT_RECORD_EXTERNAL) != 0;
  if (external && !capturing) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuEventRecordWithFlags: CU_EVENT_RECORD_EXTERNAL outside a stream capture");
  }
  if (capturing && !external) {
    Device().graphs().RecordEventInCapture(hStream, hEvent);
    return Device().timeline().RecordInCapture(hEvent);
  }
  kiln::emu::driver::GraphNode node;
  node.kind = kiln::emu::driver::GraphNodeKind::kEventRecord;
  node.name = "cuEventRecord";
  node.run = [hEvent](CUstream, kiln::emu::driver::StreamTimeline& timeline) {
    return Device().timeline().RecordOn(hEvent, timeline);
  };
  return Device().Issue(hStream, *timeline, std::move(node));
}

KILN_EMU_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  return cuEventRecordWithFlags(hEvent, hStream, 0);
}

// Outside a capture the wait moves the stream's modeled clock up to the
// event's (the work itself already ran, timeline.h); inside one, or for an
// event recorded inside one, it forks or joins the capture (graphs.h).
KILN_EMU_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  if (CUresult r = CheckStream(hStream, "cuStreamWaitEvent"); r != CUDA_SUCCESS) return r;
  if (Flags != 0) {
    return Fail(CUDA_ERROR_INVALID_VALUE,
                "cuStreamWaitEvent: the emulator supports flags 0 only, got " + std::to_string(Flags));
  }
  if (CUresult r = Device().timeline().CheckEvent(hEvent); r != CUDA_SUCCESS && r != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    return r;
  kiln::emu::driver::ClearErrorDetail();
  bool handled = false;
  CUresult r = Device().graphs().WaitEvent(hStream, hEvent, Device().timeline().InCapture(hEvent), &handled);
  if (handled) return r;
  return Device().timeline().Wait(hStream, hEvent);
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
