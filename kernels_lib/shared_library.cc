// OpenFirstLibrary: see shared_library.h.
#include "kernels_lib/shared_library.h"

#include <dlfcn.h>

#include <algorithm>

namespace kiln::kernels {

StatusOr<OpenedLibrary> OpenFirstLibrary(
    const std::vector<std::string>& candidates, std::string_view what,
    const std::function<std::string(void* handle, const std::string& name)>& resolve) {
  std::string tried, last_error = "no candidate library names";
  for (const std::string& name : candidates) {
    dlerror();
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    tried += (tried.empty() ? "" : " or ") + name;
    if (!handle) {
      const char* e = dlerror();
      last_error = e ? e : "unknown dlopen error";
      continue;
    }
    std::string missing = resolve(handle, name);
    if (missing.empty()) return OpenedLibrary{handle, name};
    dlclose(handle);
    last_error = name + " lacks " + missing;
  }
  std::replace(last_error.begin(), last_error.end(), '\n', ' ');
  return Error(std::string(what) + " unavailable: cannot load " + tried + ": " + last_error);
}

bool ResolveSymbol(void* handle, const char* symbol, void** slot) {
  *slot = dlsym(handle, symbol);
  return *slot != nullptr;
}

ErrorDetailFn EmulatorErrorDetail(void* handle) {
  return reinterpret_cast<ErrorDetailFn>(dlsym(handle, "kilnEmuLastErrorDetail"));
}

}  // namespace kiln::kernels
