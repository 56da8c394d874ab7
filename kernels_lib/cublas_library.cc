// CublasLibrary: see cublas_library.h.
#include "kernels_lib/cublas_library.h"

#include "kernels_lib/shared_library.h"

namespace kiln::kernels {

StatusOr<std::unique_ptr<CublasLibrary>> CublasLibrary::Load(const std::vector<std::string>& candidates) {
  std::unique_ptr<CublasLibrary> lib;
  auto resolve = [&](void* handle, const std::string& name) {
    lib.reset(new CublasLibrary(name));
    std::string missing;
#define KILN_CUBLAS_RESOLVE(fn) \
  if (!ResolveSymbol(handle, #fn, reinterpret_cast<void**>(&lib->fn)) && missing.empty()) missing = #fn;
    KILN_CUBLAS_FUNCTIONS(KILN_CUBLAS_RESOLVE)
    KILN_CUBLAS_RESOLVE(cublasGemmStridedBatchedEx)
#undef KILN_CUBLAS_RESOLVE
    return missing;
  };
  KILN_ASSIGN_OR_RETURN(OpenedLibrary opened, OpenFirstLibrary(candidates, "cuBLAS", resolve));
  lib->emulator_detail_ = EmulatorErrorDetail(opened.handle);
  return lib;
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
