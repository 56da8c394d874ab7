// The cuSOLVER double's handle state and the steps every one of its calls
// shares, for its two files (cusolver_double.cc: the handle and potrf;
// cusolver_decompositions_double.cc: getrf, geqrf, orgqr, syevd, gesvd).
#pragma once

#include <cuda.h>
#include <cusolverDn.h>

#include <memory>
#include <string>

#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"

// cusolverDnHandle_t is an opaque pointer to it.
struct cusolverDnContext {
  CUstream stream = nullptr;  // the legacy default stream until set
};

namespace kiln::emu::libs {

// Records why a call failed for kilnEmuLastErrorDetail and returns `status`.
inline cusolverStatus_t RejectSolverCall(cusolverStatus_t status, std::string detail) {
  driver::SetErrorDetail(std::move(detail));
  return status;
}

// The handle's stream with the context entered, where a call runs; null
// with *status set (and its detail recorded) when there is none.
inline std::shared_ptr<driver::StreamTimeline> EnterSolverStream(const char* call, cusolverDnHandle_t handle,
                                                                 cusolverStatus_t* status) {
  *status = CUSOLVER_STATUS_EXECUTION_FAILED;
  driver::EmulatedDevice& device = driver::EmulatedDevice::Get();
  if (device.EnterContext() != CUDA_SUCCESS) return nullptr;  // detail set
  std::shared_ptr<driver::StreamTimeline> timeline = device.timeline().Find(handle->stream);
  if (!timeline) RejectSolverCall(*status, std::string(call) + ": the handle's stream was destroyed");
  return timeline;
}

}  // namespace kiln::emu::libs
