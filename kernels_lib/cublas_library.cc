// CublasLibrary: see cublas_library.h.
#include "kernels_lib/cublas_library.h"

#include <dlfcn.h>

#include <algorithm>

namespace kiln::kernels {

StatusOr<std::unique_ptr<CublasLibrary>> CublasLibrary::Load(
    const std::vector<std::string>& candidates) {
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
    std::unique_ptr<CublasLibrary> lib(new CublasLibrary(name));
    std::string missing;
    auto resolve = [&](void** slot, const char* symbol) {
      *slot = dlsym(handle, symbol);
      if (!*slot && missing.empty()) missing = symbol;
    };
#define KILN_CUBLAS_RESOLVE(fn) resolve(reinterpret_cast<void**>(&lib->fn), #fn);
    KILN_CUBLAS_FUNCTIONS(KILN_CUBLAS_RESOLVE)
    KILN_CUBLAS_RESOLVE(cublasGemmStridedBatchedEx)
#undef KILN_CUBLAS_RESOLVE
    if (missing.empty()) {
      lib->emulator_detail_ =
          reinterpret_cast<const char* (*)()>(dlsym(handle, "kilnEmuLastErrorDetail"));
      return lib;
    }
    dlclose(handle);
    last_error = name + " lacks " + missing;
  }
  std::replace(last_error.begin(), last_error.end(), '\n', ' ');
  return Error("cuBLAS unavailable: cannot load " + tried + ": " + last_error);
}

std::string CublasLibrary::StatusText(cublasStatus_t status) const {
  const char* name = cublasGetStatusName ? cublasGetStatusName(status) : nullptr;
  std::string s = name ? std::string(name) : "cublasStatus_t " + std::to_string(static_cast<int>(status));
  const char* detail = emulator_detail_ ? emulator_detail_() : nullptr;
  if (detail && *detail) s += std::string(": ") + detail;
  return s;
}

Status CublasLibrary::Check(cublasStatus_t status, const std::string& what) const {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return Error(what + " failed: " + StatusText(status));
}

}  // namespace kiln::kernels
