// FaultInjector: device errors on demand, so that the runtime's error paths
// run under test (kilnEmuInjectFault, KILN_EMU_FAULT).
//
// Three kinds of call can be made to fail: device and pinned host
// allocations (cuMemAlloc, cuMemHostAlloc: CUDA_ERROR_OUT_OF_MEMORY),
// kernel launches (cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) and
// the library doubles' compute calls (cuBLAS, cuDNN, cuFFT, cuSOLVER: their
// execution-failed status). A fault is armed with a count n: the next n
// calls of its kind succeed, the one after fails, and the fault is then
// disarmed. Injected faults are not sticky (they are the errors a GPU
// reports before any work started), so the context stays usable. Calls from
// every thread count. Launches and library calls count when their work
// runs: a captured call when its graph is launched, once per launch (see
// graphs.h); the failing node fails cuGraphLaunch.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln::emu::driver {

enum class FaultKind { kAllocation = 0, kLaunch = 1, kLibrary = 2 };
inline constexpr int kFaultKinds = 3;

class FaultInjector {
 public:
  // Arms `kind` to fail after `after_calls` successful calls; a negative
  // count disarms it.
  void Arm(FaultKind kind, int64_t after_calls);
  // KILN_EMU_FAULT=<kind>:<n>[,<kind>:<n>...] with kind alloc, launch or
  // library; an error names a malformed entry.
  Status ArmFromEnvironment();
  // Counts one call of `kind`; returns the error detail to report
  // ("<call>: injected <kind> failure (kiln emulator fault injection)") when
  // this call is the one to fail, else "".
  std::string Take(FaultKind kind, std::string_view call);

 private:
  std::mutex mu_;
  // Calls still to succeed before the fault; -1 when disarmed.
  int64_t remaining_[kFaultKinds] = {-1, -1, -1};
};

// The name KILN_EMU_FAULT and kilnEmuInjectFault use: "alloc", "launch",
// "library".
const char* FaultKindName(FaultKind kind);

}  // namespace kiln::emu::driver
