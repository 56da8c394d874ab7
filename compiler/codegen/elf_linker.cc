// In-process linking of the host kernels' object files (one per kernel,
// kernel_object.h) into one shared object with lld's ELF driver (no
// external linker needed at compile time).
//
// lld reads its inputs and writes its output through the file system, so
// the objects and the .so pass through private temporary files that are
// removed before returning.
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <mutex>

#include "compiler/codegen/codegen_internal.h"
#include "lld/Common/Driver.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)

namespace kiln::codegen::internal {
namespace {

// Shared libraries the kernels may call into: libm for transcendental
// functions (and fmod), libmvec for their vector variants (glibc's vector
// math, llvm_backend.cc), libc for the memcpy/memset LLVM may emit. Naming
// them records DT_NEEDED entries (for those the kernels use), so dlopen
// loads them even into a process that lacks them, and lets the link check
// that no symbol is left undefined.
constexpr const char* kSystemLibraries[] = {"libm.so.6", "libmvec.so.1", "libc.so.6"};

std::vector<std::string> SystemLibraries() {
  std::vector<std::string> libs;
  for (const char* name : kSystemLibraries) {
    for (const char* dir : {"/lib/x86_64-linux-gnu/", "/usr/lib/x86_64-linux-gnu/", "/lib64/",
                            "/usr/lib64/"}) {
      std::string path = std::string(dir) + name;
      if (access(path.c_str(), R_OK) == 0) {
        libs.push_back(path);
        break;
      }
    }
  }
  return libs;
}

}  // namespace

StatusOr<std::vector<uint8_t>> LinkSharedObject(const std::vector<std::vector<uint8_t>>& objects) {
  KILN_ASSIGN_OR_RETURN(TempFile output, TempFile::Create(".so"));
  std::vector<std::string> args = {"ld.lld", "-shared", "-o", output.path(), "-z", "noexecstack",
                                   "-z", "relro", "-z", "now", "--hash-style=gnu",
                                   // No worker threads in the caller's process.
                                   "--threads=1"};
  std::vector<TempFile> inputs;
  for (const std::vector<uint8_t>& object : objects) {
    KILN_ASSIGN_OR_RETURN(TempFile input, TempFile::Create(".o"));
    KILN_RETURN_IF_ERROR(input.Write(object.data(), object.size()));
    args.push_back(input.path());
    inputs.push_back(std::move(input));
  }
  std::vector<std::string> libs = SystemLibraries();
  if (libs.size() == std::size(kSystemLibraries)) {
    args.push_back("--no-undefined");
    args.push_back("--as-needed");
    args.insert(args.end(), libs.begin(), libs.end());
  }
#ifdef KILN_COMPILER_RT_BUILTINS
  // Linked statically: only the builtins the kernels call are pulled in.
  if (access(KILN_COMPILER_RT_BUILTINS, R_OK) == 0) args.push_back(KILN_COMPILER_RT_BUILTINS);
#endif
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());

  std::string out_text, err_text;
  llvm::raw_string_ostream out(out_text), err(err_text);
  {
    // lld keeps global state: one link at a time, and none after a link
    // that reports it cannot safely run again.
    static std::mutex mutex;
    static bool unusable = false;
    std::lock_guard<std::mutex> lock(mutex);
    if (unusable) return Error("the in-process linker is unusable after an earlier crash");
    lld::Result result = lld::lldMain(argv, out, err, {{lld::Gnu, &lld::elf::link}});
    if (!result.canRunAgain) unusable = true;
    if (result.retCode != 0) {
      // One line, keeping lld's ">>> referenced by" context (the kernel).
      std::replace(err_text.begin(), err_text.end(), '\n', ' ');
      return Error("lld failed to link the host kernels: " + err_text);
    }
  }
  return output.Read();
}

}  // namespace kiln::codegen::internal
