// The cuSOLVER double: the dense cuSOLVER entry points kiln calls (the
// handle, potrf and its workspace query), computed on the host with
// OpenBLAS' LAPACK over the emulated device's memory.
//
// As with the cuBLAS double, what makes it faithful is everything around
// the arithmetic: arguments are checked by cuSOLVER's documented rules
// (CUSOLVER_STATUS_INVALID_VALUE), the matrix, the workspace and devInfo
// must lie in live allocations (else CUSOLVER_STATUS_EXECUTION_FAILED,
// reported and sticky like a kernel's illegal address), only the `uplo`
// triangle is read (initcheck looks at no other element) and written, and
// the status lands in device memory (devInfo: 0, or the order of the first
// leading minor that is not positive definite), never in the return value.
// The workspace is part of the contract: potrf refuses a Lwork below what
// potrf_bufferSize answered (n elements, the double's choice). Each call
// counts as one launch on the handle's stream, its duration modeled as a
// blocked factorization (model::ModelSolver: n^3/3 flops, 4x for complex,
// on the FP32 cores or the FP64 tensor cores).
//
// A handle needs the emulated driver initialized and a context current,
// as a real cuSOLVER needs the CUDA runtime's.
#include <cuComplex.h>
#include <cusolverDn.h>
#include <f77blas.h>

#include <cmath>
#include <string>
#include <type_traits>

#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"
#include "cuda_emulator/libs/cusolver_context.h"
#include "cuda_emulator/libs/matrix_operand.h"
#include "cuda_emulator/model/call_models.h"
#include "cuda_emulator/model/h100_figures.h"


namespace {

using kiln::emu::driver::EmulatedDevice;
using kiln::emu::libs::MatrixOperand;
using kiln::emu::libs::Triangle;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

cusolverStatus_t Reject(cusolverStatus_t status, std::string detail) {
  return kiln::emu::libs::RejectSolverCall(status, std::move(detail));
}

// The workspace the double asks for, in elements.
int WorkspaceElements(int n) { return n > 1 ? n : 1; }

void Potrf(char uplo, int n, float* a, int lda, int* info) { BLASFUNC(spotrf)(&uplo, &n, a, &lda, info); }
void Potrf(char uplo, int n, double* a, int lda, int* info) { BLASFUNC(dpotrf)(&uplo, &n, a, &lda, info); }
void Potrf(char uplo, int n, cuComplex* a, int lda, int* info) {
  BLASFUNC(cpotrf)(&uplo, &n, reinterpret_cast<float*>(a), &lda, info);
}
void Potrf(char uplo, int n, cuDoubleComplex* a, int lda, int* info) {
  BLASFUNC(zpotrf)(&uplo, &n, reinterpret_cast<double*>(a), &lda, info);
}

// cuSOLVER's argument checks shared by potrf and its workspace query; ""
// when valid.
std::string PotrfArgumentError(cublasFillMode_t uplo, int n, int lda) {
  if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)
    return "uplo must be CUBLAS_FILL_MODE_LOWER or _UPPER";
  if (n < 0) return "n must not be negative";
  if (lda < std::max(1, n)) return "lda " + std::to_string(lda) + " < max(1, " + std::to_string(n) + ")";
  return "";
}

cusolverStatus_t BufferSize(const char* call, cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int lda,
                            int* lwork) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUSOLVER_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  std::string invalid = PotrfArgumentError(uplo, n, lda);
  if (invalid.empty() && !lwork) invalid = "Lwork must not be null";
  if (!invalid.empty()) return Reject(CUSOLVER_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  *lwork = WorkspaceElements(n);
  return CUSOLVER_STATUS_SUCCESS;
}

template <typename T>
cusolverStatus_t Factor(const char* call, cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, T* A, int lda,
                        T* workspace, int lwork, int* dev_info) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUSOLVER_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  std::string invalid = PotrfArgumentError(uplo, n, lda);
  if (invalid.empty() && lwork < WorkspaceElements(n))
    invalid = "Lwork " + std::to_string(lwork) + " < the " + std::to_string(WorkspaceElements(n)) +
              " elements potrf_bufferSize asks for";
  if (invalid.empty() && !dev_info) invalid = "devInfo must not be null";
  if (!invalid.empty()) return Reject(CUSOLVER_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  cusolverStatus_t entered = CUSOLVER_STATUS_SUCCESS;
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline =
      kiln::emu::libs::EnterSolverStream(call, handle, &entered);
  if (!timeline) return entered;
  const bool lower = uplo == CUBLAS_FILL_MODE_LOWER;
  MatrixOperand a{"A", reinterpret_cast<uint64_t>(A), 0, n, n, lda, lower ? Triangle::kLower : Triangle::kUpper};
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();  // no cuMemFree while the factorization runs
      std::string fault = kiln::emu::libs::CheckMatrix(call, a, 1, sizeof(T), false);
      if (fault.empty()) fault = kiln::emu::libs::CheckMatrix(call, a, 1, sizeof(T), true);
      if (fault.empty()) {
        fault = kiln::emu::libs::CheckWrittenRange(call, "the workspace", reinterpret_cast<uint64_t>(workspace),
                                                   static_cast<uint64_t>(lwork) * sizeof(T));
      }
      if (fault.empty()) {
        fault = kiln::emu::libs::CheckWrittenRange(call, "devInfo", reinterpret_cast<uint64_t>(dev_info), sizeof(int));
      }
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      int info = 0;
      if (n > 0) Potrf(lower ? 'L' : 'U', n, A, lda, &info);
      *dev_info = info;
    }
    kiln::emu::model::SolverShape shape;
    shape.flops = double(n) * double(n) * double(n) / 3;
    shape.bytes = 2 * double(sizeof(T)) * double(n) * double(n + 1) / 2;  // the triangle, read and written
    shape.columns = n;
    shape.launches_per_panel = kiln::emu::model::h100::kPotrfLaunchesPerPanel;
    kiln::emu::model::GemmTime time = kiln::emu::libs::ModelSolverCall<T>(shape);
    timeline.AddLibraryCall(time.total, time.optimal);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, handle->stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUSOLVER_STATUS_EXECUTION_FAILED;
  return CUSOLVER_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

KILN_EMU_EXPORT cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle) {
  if (!handle) return Reject(CUSOLVER_STATUS_INVALID_VALUE, "cusolverDnCreate: the handle pointer is null");
  if (Device().EnterContext() != CUDA_SUCCESS) return CUSOLVER_STATUS_NOT_INITIALIZED;  // detail set
  *handle = new cusolverDnContext();
  Device().CountLibraryHandles(1);
  return CUSOLVER_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUSOLVER_STATUS_NOT_INITIALIZED, "cusolverDnDestroy: the handle is null");
  delete handle;
  Device().CountLibraryHandles(-1);
  return CUSOLVER_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t streamId) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUSOLVER_STATUS_NOT_INITIALIZED, "cusolverDnSetStream: the handle is null");
  if (!Device().timeline().Find(streamId)) {
    return Reject(CUSOLVER_STATUS_INVALID_VALUE, "cusolverDnSetStream: not a live stream");
  }
  handle->stream = streamId;
  return CUSOLVER_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t handle, cudaStream_t* streamId) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUSOLVER_STATUS_NOT_INITIALIZED, "cusolverDnGetStream: the handle is null");
  if (!streamId) return Reject(CUSOLVER_STATUS_INVALID_VALUE, "cusolverDnGetStream: null pointer");
  *streamId = handle->stream;
  return CUSOLVER_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cusolverStatus_t cusolverDnSpotrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,
                                                             float*, int lda, int* Lwork) {
  return BufferSize("cusolverDnSpotrf_bufferSize", handle, uplo, n, lda, Lwork);
}
KILN_EMU_EXPORT cusolverStatus_t cusolverDnDpotrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,
                                                             double*, int lda, int* Lwork) {
  return BufferSize("cusolverDnDpotrf_bufferSize", handle, uplo, n, lda, Lwork);
}
KILN_EMU_EXPORT cusolverStatus_t cusolverDnCpotrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,
                                                             cuComplex*, int lda, int* Lwork) {
  return BufferSize("cusolverDnCpotrf_bufferSize", handle, uplo, n, lda, Lwork);
}
KILN_EMU_EXPORT cusolverStatus_t cusolverDnZpotrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,
                                                             cuDoubleComplex*, int lda, int* Lwork) {
  return BufferSize("cusolverDnZpotrf_bufferSize", handle, uplo, n, lda, Lwork);
}

KILN_EMU_EXPORT cusolverStatus_t cusolverDnSpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, float* A,
                                                  int lda, float* Workspace, int Lwork, int* devInfo) {
  return Factor("cusolverDnSpotrf", handle, uplo, n, A, lda, Workspace, Lwork, devInfo);
}
KILN_EMU_EXPORT cusolverStatus_t cusolverDnDpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double* A,
                                                  int lda, double* Workspace, int Lwork, int* devInfo) {
  return Factor("cusolverDnDpotrf", handle, uplo, n, A, lda, Workspace, Lwork, devInfo);
}
KILN_EMU_EXPORT cusolverStatus_t cusolverDnCpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,
                                                  cuComplex* A, int lda, cuComplex* Workspace, int Lwork,
                                                  int* devInfo) {
  return Factor("cusolverDnCpotrf", handle, uplo, n, A, lda, Workspace, Lwork, devInfo);
}
KILN_EMU_EXPORT cusolverStatus_t cusolverDnZpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n,
                                                  cuDoubleComplex* A, int lda, cuDoubleComplex* Workspace, int Lwork,
                                                  int* devInfo) {
  return Factor("cusolverDnZpotrf", handle, uplo, n, A, lda, Workspace, Lwork, devInfo);
}

}  // extern "C"
