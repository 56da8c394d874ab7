// The CUDA emulator's counters, read from the emulator library the runtime
// loaded: its copies and memsets (kilnEmuTransferCounters) and the calls
// that put work on a stream (kilnEmuApiCalls): independent counts of what
// an execution moved and issued, for tests and benchmarks of the runtime.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <optional>

#include "cuda_emulator/include/kiln_cuda_emulator.h"

namespace kiln::testing {

// `symbol`'s reading (int symbol(T*)), or nothing when KILN_CUDA_EMULATOR
// names no loaded emulator (the host device, a real GPU).
template <typename T>
std::optional<T> EmulatorReading(const char* symbol) {
  const char* path = std::getenv("KILN_CUDA_EMULATOR");
  if (!path || !*path) return std::nullopt;
  void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return std::nullopt;
  auto read = reinterpret_cast<int (*)(T*)>(dlsym(lib, symbol));
  T c{};
  if (!read || read(&c) != 0) return std::nullopt;
  return c;
}

// The copy and memset counters so far.
inline std::optional<KilnEmuTransferCounters> EmulatorTransferCounters() {
  return EmulatorReading<KilnEmuTransferCounters>("kilnEmuTransferCounters");
}

// The stream-work call counters so far.
inline std::optional<KilnEmuApiCalls> EmulatorApiCalls() { return EmulatorReading<KilnEmuApiCalls>("kilnEmuApiCalls"); }

}  // namespace kiln::testing
