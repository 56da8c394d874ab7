// ExecuteWithHostBuffers: the simple path for callers whose data lives in
// host memory (command-line tools, tests): upload the arguments, execute,
// download the outputs, each step timed apart. Public runtime API.
//
// A serving or training loop does the three steps itself instead, keeping
// weights and state on the device between calls (docs/runtime_hal.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "runtime/runtime.h"

namespace kiln::runtime {

// Wall time of each step and the bytes each transfer moved.
struct HostExecutionTimes {
  std::chrono::nanoseconds upload{0}, execute{0}, download{0};
  int64_t bytes_uploaded = 0, bytes_downloaded = 0;
};

// Runs `executable` on host-accessible `args` and returns host-accessible
// outputs. On a CUDA device every argument is first transferred to the
// device (TransferToDevice, all enqueued, then awaited), the execution runs
// on the device buffers (`options.donate` applies to them: the caller's
// host buffers are never written), and every output is transferred back.
// On the host device, and for programs with dynamic dimensions (whose
// extents are read on the host), the execution takes the host buffers as
// they are and `upload`/`download` stay zero. The executable's device
// outlives the call; `times` may be null.
StatusOr<ExecutionResult> ExecuteWithHostBuffers(const LoadedExecutable& executable,
                                                 std::vector<Buffer> args,
                                                 const ExecuteOptions& options = {},
                                                 HostExecutionTimes* times = nullptr);

}  // namespace kiln::runtime
