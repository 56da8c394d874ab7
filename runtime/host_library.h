// HostLibrary: the host kernel shared object of an artifact, loaded from
// memory (memfd_create + dlopen, no file on disk) with symbols resolved by
// name. Internal to the runtime.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::runtime {

class HostLibrary {
 public:
  static StatusOr<std::unique_ptr<HostLibrary>> Load(const std::vector<uint8_t>& image);
  ~HostLibrary();
  HostLibrary(const HostLibrary&) = delete;
  HostLibrary& operator=(const HostLibrary&) = delete;

  // nullptr when the object does not export `name`.
  void* Find(const std::string& name) const;

 private:
  HostLibrary(void* handle, int fd) : handle_(handle), fd_(fd) {}
  void* handle_;
  int fd_;
};

}  // namespace kiln::runtime
