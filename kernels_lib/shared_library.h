// OpenFirstLibrary: how kernels_lib opens the NVIDIA libraries at run time.
// Every binary must start on a machine without them, so each library is
// dlopen'ed from a list of candidate names and its entry points resolved by
// name; a missing library or symbol becomes one line naming what is missing.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::kernels {

struct OpenedLibrary {
  void* handle = nullptr;  // never closed: the library's code stays in use
  std::string name;        // the candidate that loaded
};

// Loads the first of `candidates` that dlopen accepts and for which
// `resolve(handle, name)` finds every symbol (it returns "" then, else the
// first missing symbol); otherwise "<what> unavailable: cannot load A or B:
// <last reason>".
StatusOr<OpenedLibrary> OpenFirstLibrary(
    const std::vector<std::string>& candidates, std::string_view what,
    const std::function<std::string(void* handle, const std::string& name)>& resolve);

// dlsym into `*slot`; returns false when the symbol is missing.
bool ResolveSymbol(void* handle, const char* symbol, void** slot);

// The CUDA emulator's per-call error detail hook, or nullptr on a real
// library.
using ErrorDetailFn = const char* (*)();
ErrorDetailFn EmulatorErrorDetail(void* handle);

}  // namespace kiln::kernels
