// CodegenIdentity (codegen_identity.h).
#include "compiler/codegen/codegen_identity.h"

#include <sys/stat.h>

#include <llvm/TargetParser/Host.h>

#include "compiler/cache/build_identity.h"
#include "compiler/codegen/codegen_internal.h"
#include "compiler/codegen/llvm_backend.h"

namespace kiln::codegen {
namespace {

std::string FileIdentity(const std::string& path) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0) return "none";
  int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return path + "," + std::to_string(st.st_size) + "," + std::to_string(mtime_ns);
}

}  // namespace

std::string CodegenIdentity() {
  // One of its functions locates libLLVM's loaded object. libMLIR comes
  // from the same toolchain release, built with it.
  std::string llvm = cache::ObjectBuildIdentity(reinterpret_cast<const void*>(&llvm::sys::getHostCPUName));
  if (llvm.empty()) return "";
  return "llvm=" + llvm + ";ptxas=" + FileIdentity(internal::FindPtxas()) +
         ";nvlink=" + FileIdentity(internal::FindNvlink()) +
         ";libdevice=" + FileIdentity(internal::FindLibdevice());
}

}  // namespace kiln::codegen
