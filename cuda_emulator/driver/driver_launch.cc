// Driver API: cuLaunchKernel.
//
// The launch is validated as the driver does (grid and block limits, the
// kernel's .reqntid/.maxntid, the shared-memory budget), then run to
// completion by emu::Launch on the device's thread pool while the memory
// ledger is read-locked; the launch keeps its stream busy for its modeled
// time (emu::Launch fills model_ns). An injected launch fault
// (fault_injector.h) fails the call before any block runs. On a capturing
// stream the launch, its parameter values copied, becomes a kernel node
// (graphs.h) that runs the same way when the graph is launched. In sampling
// mode (KILN_EMU_SAMPLE) only a sample of the blocks runs. A fault inside the kernel is reported
// on stderr and makes the context sticky-failed (EmulatedDevice::FailLaunch).
#include <algorithm>
#include <string>

#include "cuda_emulator/driver/device_properties.h"
#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"

namespace {

using kiln::emu::Dim3;
using kiln::emu::LaunchConfig;
using kiln::emu::driver::EmulatedDevice;
using kiln::emu::driver::Fail;
using kiln::emu::driver::LoadedFunction;
using kiln::emu::driver::LoadedModule;
namespace props = kiln::emu::driver;

// The launch limits of the hardware (ValidateLaunch), then the function's
// own dynamic shared memory limit (cuFuncSetAttribute).
std::string ShapeError(const LoadedFunction& f, const LaunchConfig& c) {
  if (kiln::Status s = kiln::emu::ValidateLaunch(*f.kernel, c); !s.ok()) return s.message();
  uint32_t limit = f.max_dynamic_shared_bytes.load();
  if (c.dynamic_shared_bytes > limit) {
    return std::to_string(c.dynamic_shared_bytes) + " bytes of dynamic shared memory exceed the kernel's limit of " +
           std::to_string(limit) + " (raise it with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)";
  }
  return "";
}

// What Launch takes as kernelParams: null for a kernel without parameters,
// as the caller may pass.
void** ParamArray(std::vector<void*>& params, const LoadedFunction& f) {
  return f.kernel->params.empty() ? nullptr : params.data();
}

}  // namespace

extern "C" KILN_EMU_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                   unsigned int gridDimZ, unsigned int blockDimX,
                                                   unsigned int blockDimY, unsigned int blockDimZ,
                                                   unsigned int sharedMemBytes, CUstream hStream,
                                                   void** kernelParams, void** extra) {
  EmulatedDevice& device = EmulatedDevice::Get();
  if (CUresult r = device.EnterContext(); r != CUDA_SUCCESS) return r;
  LoadedFunction* function = nullptr;
  std::shared_ptr<LoadedModule> module = device.modules().FindFunction(f, &function);
  if (!module) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuLaunchKernel: not a loaded function");
  const kiln::emu::ptx::Kernel& kernel = *function->kernel;
  const std::string call = "cuLaunchKernel of '" + kernel.name + "': ";
  std::shared_ptr<props::StreamTimeline> timeline = device.timeline().Find(hStream);
  if (!timeline) return Fail(CUDA_ERROR_INVALID_HANDLE, call + "not a live stream");
  if (extra) {
    return Fail(CUDA_ERROR_NOT_SUPPORTED, call + "the emulator takes parameters through kernelParams, not extra");
  }
  LaunchConfig config;
  config.grid = Dim3{gridDimX, gridDimY, gridDimZ};
  config.block = Dim3{blockDimX, blockDimY, blockDimZ};
  config.dynamic_shared_bytes = sharedMemBytes;
  config.params = kernelParams;
  config.sample_blocks = device.sample_blocks();
  config.set_conditional = [](uint64_t handle, uint32_t value) {
    return EmulatedDevice::Get().graphs().SetConditional(handle, value);
  };
  if (std::string e = ShapeError(*function, config); !e.empty()) return Fail(CUDA_ERROR_INVALID_VALUE, call + e);
  if (kiln::Status s = kiln::emu::CheckBlockRegisters(kernel, config); !s.ok())
    return Fail(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, call + s.message());
  // The parameters' values, copied now: the caller may reuse its arrays as
  // soon as the call returns, and a captured launch runs later.
  auto values = std::make_shared<std::vector<std::vector<uint8_t>>>();
  for (size_t i = 0; i < kernel.params.size() && kernelParams; ++i) {
    if (!kernelParams[i]) return Fail(CUDA_ERROR_INVALID_VALUE, call + "parameter " + std::to_string(i) + " is null");
    const auto* bytes = static_cast<const uint8_t*>(kernelParams[i]);
    values->emplace_back(bytes, bytes + kernel.params[i].size);
  }
  kiln::emu::driver::GraphNode node;
  node.kind = kiln::emu::driver::GraphNodeKind::kKernel;
  node.name = kernel.name;
  node.function = f;
  node.run = [module, function, config, values](CUstream, props::StreamTimeline& timeline) mutable -> CUresult {
    EmulatedDevice& device = EmulatedDevice::Get();
    std::vector<void*> params;
    for (std::vector<uint8_t>& v : *values) params.push_back(v.data());
    config.params = ParamArray(params, *function);
    kiln::StatusOr<KilnEmuCounters> counters = [&] {
      auto lock = device.memory().ReadLock();  // no cuMemFree while blocks run
      return kiln::emu::Launch(*function->kernel, config, device.memory(), device.checks(), device.pool());
    }();
    if (!counters.ok()) return device.FailLaunch(counters.status().message());
    timeline.AddLaunch(*counters);
    return CUDA_SUCCESS;
  };
  return device.Issue(hStream, *timeline, std::move(node));
}
