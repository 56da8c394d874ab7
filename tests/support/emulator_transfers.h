// The CUDA emulator's copy and memset counters (kilnEmuTransferCounters),
// read from the emulator library the runtime loaded: an independent count
// of what an execution moved, for tests of the runtime's transfers.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <optional>

#include "cuda_emulator/include/kiln_cuda_emulator.h"

namespace kiln::testing {

// The counters so far, or nothing when KILN_CUDA_EMULATOR names no loaded
// emulator (the host device, a real GPU).
inline std::optional<KilnEmuTransferCounters> EmulatorTransferCounters() {
  const char* path = std::getenv("KILN_CUDA_EMULATOR");
  if (!path || !*path) return std::nullopt;
  void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return std::nullopt;
  auto read = reinterpret_cast<int (*)(KilnEmuTransferCounters*)>(dlsym(lib, "kilnEmuTransferCounters"));
  KilnEmuTransferCounters c{};
  if (!read || read(&c) != 0) return std::nullopt;
  return c;
}

}  // namespace kiln::testing
