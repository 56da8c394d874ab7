// CudaDriver: see cuda_driver.h.
#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <algorithm>

namespace kiln::runtime {

#define KILN_CUDA_STRINGIZE_INNER(x) #x
// Stringizes after macro expansion: KILN_CUDA_STRINGIZE(cuMemAlloc) is
// "cuMemAlloc_v2", the symbol the header's declaration refers to.
#define KILN_CUDA_STRINGIZE(x) KILN_CUDA_STRINGIZE_INNER(x)

std::string DlErrorLine(const char* fallback) {
  const char* e = dlerror();
  std::string s = e ? e : fallback;
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

namespace {

// Entry points whose versioned symbol is newer than some drivers still in
// use, and whose unversioned symbol has the same signature and meaning.
const char* UnversionedFallback(std::string_view symbol) {
  if (symbol == "cuEventElapsedTime_v2") return "cuEventElapsedTime";
  return nullptr;
}

}  // namespace

StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Load(const std::string& library,
                                                       const std::string& hint) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    return Error("cannot load " + library + " (" + hint + "): " + DlErrorLine("unknown dlopen error"));
  }
  std::unique_ptr<CudaDriver> d(new CudaDriver(library));
  std::string missing;
  auto resolve = [&](void** slot, const char* symbol) {
    *slot = dlsym(handle, symbol);
    if (!*slot) {
      if (const char* alt = UnversionedFallback(symbol)) *slot = dlsym(handle, alt);
    }
    if (!*slot && missing.empty()) missing = symbol;
  };
#define KILN_CUDA_RESOLVE(fn) resolve(reinterpret_cast<void**>(&d->fn), KILN_CUDA_STRINGIZE(fn));
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_RESOLVE)
#undef KILN_CUDA_RESOLVE
  if (!missing.empty()) {
    dlclose(handle);  // nothing was called yet, so unloading is safe
    return Error(library + " lacks " + missing + " (driver older than the CUDA " +
                 std::to_string(CUDA_VERSION) + " headers kiln was built with?)");
  }
  // Optional: the graph entry points by their versioned names
  // (cuStreamBeginCapture_v2, cuGraphExecUpdate_v2, ...).
#define KILN_CUDA_RESOLVE_GRAPH(fn) \
  d->fn = reinterpret_cast<decltype(d->fn)>(dlsym(handle, KILN_CUDA_STRINGIZE(fn)));
  KILN_CUDA_GRAPH_FUNCTIONS(KILN_CUDA_RESOLVE_GRAPH)
  KILN_CUDA_CONDITIONAL_FUNCTIONS(KILN_CUDA_RESOLVE_GRAPH)
#undef KILN_CUDA_RESOLVE_GRAPH
  // Optional: only kiln's emulator defines these.
#define KILN_CUDA_RESOLVE_OPTIONAL(fn) \
  d->fn = reinterpret_cast<decltype(d->fn)>(dlsym(handle, #fn));
  KILN_CUDA_EMULATOR_FUNCTIONS(KILN_CUDA_RESOLVE_OPTIONAL)
#undef KILN_CUDA_RESOLVE_OPTIONAL
  if (d->is_emulator()) {
    int version = d->kilnEmuApiVersion ? d->kilnEmuApiVersion() : 1;
    if (version != KILN_EMU_API_VERSION) {
      return Error(library + " is a kiln emulator of API version " + std::to_string(version) +
                   ", this runtime needs version " + std::to_string(KILN_EMU_API_VERSION) +
                   " (build both from the same tree)");
    }
  }
  return d;
}

std::string CudaDriver::ErrorText(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) {
    return "CUresult " + std::to_string(static_cast<int>(result));
  }
  std::string s = name;
  if (cuGetErrorString(result, &text) == CUDA_SUCCESS && text) s += std::string(" (") + text + ")";
  const char* detail = kilnEmuLastErrorDetail ? kilnEmuLastErrorDetail() : nullptr;
  if (detail && *detail) s += std::string(": ") + detail;
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

Status CudaDriver::Check(CUresult result, std::string_view what) const {
  if (result == CUDA_SUCCESS) return Status::Ok();
  return Error(std::string(what) + " failed: " + ErrorText(result));
}

}  // namespace kiln::runtime
