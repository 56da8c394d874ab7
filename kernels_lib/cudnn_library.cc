// CudnnLibrary: see cudnn_library.h.
#include "kernels_lib/cudnn_library.h"

#include "kernels_lib/shared_library.h"

namespace kiln::kernels {

StatusOr<std::unique_ptr<CudnnLibrary>> CudnnLibrary::Load(const std::vector<std::string>& candidates) {
  std::unique_ptr<CudnnLibrary> lib;
  auto resolve = [&](void* handle, const std::string& name) {
    lib.reset(new CudnnLibrary(name));
    std::string missing;
#define KILN_CUDNN_RESOLVE(fn) \
  if (!ResolveSymbol(handle, #fn, reinterpret_cast<void**>(&lib->fn)) && missing.empty()) missing = #fn;
    KILN_CUDNN_FUNCTIONS(KILN_CUDNN_RESOLVE)
#undef KILN_CUDNN_RESOLVE
    return missing;
  };
  KILN_ASSIGN_OR_RETURN(OpenedLibrary opened, OpenFirstLibrary(candidates, "cuDNN", resolve));
  lib->emulator_detail_ = EmulatorErrorDetail(opened.handle);
  return lib;
}

std::string CudnnLibrary::StatusText(cudnnStatus_t status) const {
  const char* name = cudnnGetErrorString ? cudnnGetErrorString(status) : nullptr;
  std::string s = name ? std::string(name) : "cudnnStatus_t " + std::to_string(static_cast<int>(status));
  const char* detail = emulator_detail_ ? emulator_detail_() : nullptr;
  if (detail && *detail) s += std::string(": ") + detail;
  return s;
}

Status CudnnLibrary::Check(cudnnStatus_t status, const std::string& what) const {
  if (status == CUDNN_STATUS_SUCCESS) return Status::Ok();
  return Error(what + " failed: " + StatusText(status));
}

}  // namespace kiln::kernels
