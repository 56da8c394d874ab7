// Host executor: interprets a ThunkProgram's thunk tree against allocation
// base pointers bound by LoadedExecutable. Internal to the runtime.
//
// Executes Kernel (resolved host symbol called with the argument slice
// pointers), Gemm (cblas), Convolution (im2col + cblas), Copy, Memset,
// Sequence, While and Conditional; every other kind fails with
// "not supported on host yet: <kind>".
#pragma once

#include <chrono>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/runtime.h"
#include "thunks/program.h"

namespace kiln::runtime {

using HostKernelFn = void (*)(void**);

struct ExecutionContext {
  // Base address of every allocation of the program, by allocation number.
  std::vector<uint8_t*> allocation_base;
  const std::unordered_map<std::string, HostKernelFn>* kernels = nullptr;
  ExecutionProfile* profile = nullptr;  // null: no per-thunk events
  int stream = 0;
  std::chrono::steady_clock::time_point start;
};

// Runs the thunks of `seq` in order; `depth` is recorded in the profile.
// Stops at the first error, which names the thunk's profile name.
Status ExecuteSequence(const thunks::SequenceThunk& seq, ExecutionContext& ctx, int depth = 1);

}  // namespace kiln::runtime
