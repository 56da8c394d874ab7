// CudaDriver: the CUDA driver API (libcuda.so.1) opened with dlopen at run
// time, as a table of function pointers, plus CUresult -> message naming.
//
// kiln never links libcuda: every binary must start on a machine without an
// NVIDIA driver, and only Device::Create(kCuda) finds out whether one is
// there. The table's members carry the names the CUDA headers map the API
// to (cuMemAlloc is the macro for cuMemAlloc_v2), so `driver.cuMemAlloc(...)`
// calls exactly the ABI version the headers declare. Internal to the
// runtime; needs the CUDA headers (KILN_HAVE_CUDA_HEADERS).
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "cuda_emulator/include/kiln_cuda_emulator.h"

namespace kiln::runtime {

// Every driver entry point the runtime uses.
// clang-format off
#define KILN_CUDA_DRIVER_FUNCTIONS(X)  \
  X(cuGetErrorName) \
  X(cuGetErrorString) \
  X(cuInit) \
  X(cuDriverGetVersion) \
  X(cuDeviceGetCount) \
  X(cuDeviceGet) \
  X(cuDeviceGetAttribute) \
  X(cuDeviceGetName) \
  X(cuDevicePrimaryCtxRetain) \
  X(cuDevicePrimaryCtxRelease) \
  X(cuCtxSetCurrent) \
  X(cuStreamCreate) \
  X(cuStreamDestroy) \
  X(cuStreamSynchronize) \
  X(cuStreamWaitEvent) \
  X(cuEventCreate) \
  X(cuEventDestroy) \
  X(cuEventRecord) \
  X(cuEventElapsedTime) \
  X(cuMemAlloc) \
  X(cuMemFree) \
  X(cuMemHostAlloc) \
  X(cuMemFreeHost) \
  X(cuMemcpyHtoD) \
  X(cuMemcpyHtoDAsync) \
  X(cuMemcpyDtoHAsync) \
  X(cuMemcpyDtoDAsync) \
  X(cuMemsetD8Async) \
  X(cuMemsetD32Async) \
  X(cuModuleLoadDataEx) \
  X(cuModuleUnload) \
  X(cuModuleGetFunction) \
  X(cuLaunchKernel)

// Stream capture and CUDA graphs (cuda_graphs.h): resolved when the
// library has them (every driver since CUDA 12.3 does), null otherwise;
// without all of them executions issue their thunks one by one.
#define KILN_CUDA_GRAPH_FUNCTIONS(X) \
  X(cuStreamBeginCapture) \
  X(cuStreamEndCapture) \
  X(cuStreamIsCapturing) \
  X(cuEventRecordWithFlags) \
  X(cuGraphInstantiateWithFlags) \
  X(cuGraphLaunch) \
  X(cuGraphExecUpdate) \
  X(cuGraphDestroy) \
  X(cuGraphExecDestroy)

// Conditional nodes (CUDA 12.4+, cuda_conditional_nodes.h): resolved when
// the library has them, null otherwise (loops and conditionals then split
// the graph).
#define KILN_CUDA_CONDITIONAL_FUNCTIONS(X) \
  X(cuCtxGetCurrent) \
  X(cuStreamGetCaptureInfo) \
  X(cuStreamBeginCaptureToGraph) \
  X(cuStreamUpdateCaptureDependencies) \
  X(cuGraphConditionalHandleCreate) \
  X(cuGraphAddNode)

// The emulator's own entry points (kiln_cuda_emulator.h): resolved when the
// library defines them, null on a real driver, so every use is optional.
#define KILN_CUDA_EMULATOR_FUNCTIONS(X) \
  X(kilnEmuDescription) \
  X(kilnEmuLastErrorDetail) \
  X(kilnEmuEventCounters) \
  X(kilnEmuResultsComputed) \
  X(kilnEmuApiVersion) \
  X(kilnEmuApiCalls)
// clang-format on

class CudaDriver {
 public:
  // dlopen(`library`) and resolve every function. Errors are one line:
  // "cannot load libcuda.so.1 (<hint>): <dlerror>" or "libcuda.so.1 lacks
  // cuXxx_v2 (driver older than the CUDA 13000 headers kiln was built
  // with)". The kilnEmu* extensions are resolved when present.
  static StatusOr<std::unique_ptr<CudaDriver>> Load(
      const std::string& library = "libcuda.so.1",
      const std::string& hint = "no NVIDIA driver installed?");
  // A table with every entry null, for the caller to fill (tests run the
  // CUDA backend on a fake driver this way).
  static std::unique_ptr<CudaDriver> Empty(std::string name) {
    return std::unique_ptr<CudaDriver>(new CudaDriver(std::move(name)));
  }
  // Keeps the library loaded: the driver starts threads and registers exit
  // handlers, so unloading it while the process runs is not safe.
  ~CudaDriver() = default;
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  // "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)", followed
  // by ": <detail>" when the driver is kiln's emulator and has a detail for
  // the calling thread's last failure (the bad address, the faulting
  // kernel, block and thread).
  std::string ErrorText(CUresult result) const;
  // Ok for CUDA_SUCCESS, else "<what> failed: <ErrorText>".
  Status Check(CUresult result, std::string_view what) const;

  const std::string& library() const { return library_; }
  // Whether the library is kiln's CUDA emulator (KILN_CUDA_EMULATOR), which
  // also provides the NVIDIA libraries' entry points (cuBLAS).
  bool is_emulator() const { return kilnEmuDescription != nullptr; }
  // Whether event times are the emulator's H100 timing model (API version
  // 2, which added kilnEmuResultsComputed with the model), not its clock.
  bool has_timing_model() const { return kilnEmuResultsComputed != nullptr; }
  // False when kernels do not compute their results: the emulator's
  // sampling mode (KILN_EMU_SAMPLE). Always true on a real driver.
  // Whether the graph entry points are all there.
  bool has_graphs() const {
    return cuStreamBeginCapture && cuStreamEndCapture && cuStreamIsCapturing && cuEventRecordWithFlags &&
           cuGraphInstantiateWithFlags && cuGraphLaunch && cuGraphExecUpdate && cuGraphDestroy && cuGraphExecDestroy;
  }
  // Whether the conditional node entry points are all there
  // (the driver version is checked apart, cuda_conditional_nodes.h).
  bool has_conditional_functions() const {
    return cuCtxGetCurrent && cuStreamGetCaptureInfo && cuStreamBeginCaptureToGraph &&
           cuStreamUpdateCaptureDependencies && cuGraphConditionalHandleCreate && cuGraphAddNode;
  }
  bool results_computed() const {
    return kilnEmuResultsComputed == nullptr || kilnEmuResultsComputed() != 0;
  }

#define KILN_CUDA_DECLARE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_DECLARE_MEMBER)

  KILN_CUDA_GRAPH_FUNCTIONS(KILN_CUDA_DECLARE_MEMBER)
  KILN_CUDA_CONDITIONAL_FUNCTIONS(KILN_CUDA_DECLARE_MEMBER)

  // The emulator's extensions; null on a real driver.
  KILN_CUDA_EMULATOR_FUNCTIONS(KILN_CUDA_DECLARE_MEMBER)
#undef KILN_CUDA_DECLARE_MEMBER

 private:
  explicit CudaDriver(std::string library) : library_(std::move(library)) {}
  std::string library_;
};

// The text of dlerror() (or `fallback`) on one line.
std::string DlErrorLine(const char* fallback);

}  // namespace kiln::runtime
