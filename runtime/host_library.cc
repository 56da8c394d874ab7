// HostLibrary: see host_library.h.
#include "runtime/host_library.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::runtime {

StatusOr<std::unique_ptr<HostLibrary>> HostLibrary::Load(const std::vector<uint8_t>& image) {
  if (image.empty()) return Error("the host kernel image has no shared object");
  int fd = memfd_create("kiln-host-kernels", MFD_CLOEXEC);
  if (fd < 0) return Error("memfd_create failed for the host kernel image");
  size_t done = 0;
  while (done < image.size()) {
    ssize_t n = write(fd, image.data() + done, image.size() - done);
    if (n <= 0) {
      close(fd);
      return Error("writing the host kernel image to a memfd failed");
    }
    done += static_cast<size_t>(n);
  }
  // Each memfd is a distinct file, so two executables never share (or
  // reuse, through dlopen's cache) each other's kernels.
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* message = dlerror();
    close(fd);
    return Error(std::string("dlopen of the host kernel image failed: ") +
                 (message ? message : "unknown error"));
  }
  return std::unique_ptr<HostLibrary>(new HostLibrary(handle, fd));
}

HostLibrary::~HostLibrary() {
  dlclose(handle_);
  close(fd_);
}

void* HostLibrary::Find(const std::string& name) const { return dlsym(handle_, name.c_str()); }

}  // namespace kiln::runtime
