// CublasLtLibrary: see cublaslt_library.h.
#include "kernels_lib/cublaslt_library.h"

#include "kernels_lib/shared_library.h"

namespace kiln::kernels {

StatusOr<std::unique_ptr<CublasLtLibrary>> CublasLtLibrary::Load(const std::vector<std::string>& candidates) {
  std::unique_ptr<CublasLtLibrary> lib;
  auto resolve = [&](void* handle, const std::string& name) {
    lib.reset(new CublasLtLibrary(name));
    std::string missing;
#define KILN_CUBLASLT_RESOLVE(fn) \
  if (!ResolveSymbol(handle, #fn, reinterpret_cast<void**>(&lib->fn)) && missing.empty()) missing = #fn;
    KILN_CUBLASLT_FUNCTIONS(KILN_CUBLASLT_RESOLVE)
#undef KILN_CUBLASLT_RESOLVE
    return missing;
  };
  KILN_ASSIGN_OR_RETURN(OpenedLibrary opened, OpenFirstLibrary(candidates, "cuBLASLt", resolve));
  lib->emulator_detail_ = EmulatorErrorDetail(opened.handle);
  return lib;
}

std::string CublasLtLibrary::StatusText(cublasStatus_t status) const {
  const char* name = cublasLtGetStatusName ? cublasLtGetStatusName(status) : nullptr;
  std::string s = name ? std::string(name) : "cublasStatus_t " + std::to_string(static_cast<int>(status));
  const char* detail = emulator_detail_ ? emulator_detail_() : nullptr;
  if (detail && *detail) s += std::string(": ") + detail;
  return s;
}

Status CublasLtLibrary::Check(cublasStatus_t status, const std::string& what) const {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return Error(what + " failed: " + StatusText(status));
}

}  // namespace kiln::kernels
