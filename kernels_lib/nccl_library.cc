// NcclLibrary: see nccl_library.h.
#include "kernels_lib/nccl_library.h"

#include "kernels_lib/shared_library.h"

namespace kiln::kernels {

StatusOr<std::unique_ptr<NcclLibrary>> NcclLibrary::Load(const std::vector<std::string>& candidates) {
  std::unique_ptr<NcclLibrary> lib;
  auto resolve = [&](void* handle, const std::string& name) {
    lib.reset(new NcclLibrary(name));
    std::string missing;
#define KILN_NCCL_RESOLVE(fn) \
  if (!ResolveSymbol(handle, #fn, reinterpret_cast<void**>(&lib->fn)) && missing.empty()) missing = #fn;
    KILN_NCCL_FUNCTIONS(KILN_NCCL_RESOLVE)
#undef KILN_NCCL_RESOLVE
    return missing;
  };
  KILN_ASSIGN_OR_RETURN(OpenedLibrary opened, OpenFirstLibrary(candidates, "NCCL", resolve));
  lib->emulator_detail_ = EmulatorErrorDetail(opened.handle);
  ResolveSymbol(opened.handle, "ncclGetLastError", reinterpret_cast<void**>(&lib->last_error_));
  return lib;
}

std::string NcclLibrary::ResultText(ncclResult_t result) const {
  const char* name = ncclGetErrorString ? ncclGetErrorString(result) : nullptr;
  std::string s = name ? std::string(name) : "ncclResult_t " + std::to_string(static_cast<int>(result));
  const char* detail = emulator_detail_ ? emulator_detail_() : last_error_ ? last_error_(nullptr) : nullptr;
  if (detail && *detail) s += std::string(": ") + detail;
  // One line: NCCL's own messages may end in a newline.
  for (char& c : s)
    if (c == '\n') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

Status NcclLibrary::Check(ncclResult_t result, const std::string& what) const {
  if (result == ncclSuccess) return Status::Ok();
  return Error(what + " failed: " + ResultText(result));
}

}  // namespace kiln::kernels
