// TempFile: private temporary files for the external steps of code
// generation (lld's inputs/outputs, ptxas's). See codegen_internal.h.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "compiler/codegen/codegen_internal.h"

namespace kiln::codegen::internal {

StatusOr<TempFile> TempFile::Create(const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/kiln-codegen-XXXXXX" + suffix;
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  int fd = mkstemps(buf.data(), static_cast<int>(suffix.size()));
  if (fd < 0) return Error("cannot create a temporary file " + pattern + ": " + std::strerror(errno));
  close(fd);
  return TempFile(std::string(buf.data()));
}

TempFile::~TempFile() {
  if (!path_.empty()) unlink(path_.c_str());
}

Status TempFile::Write(const void* data, size_t size) const {
  int fd = open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return Error("cannot open " + path_ + ": " + std::strerror(errno));
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      close(fd);
      return Error("cannot write " + path_ + ": " + std::strerror(e));
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  if (close(fd) != 0) return Error("cannot write " + path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

StatusOr<std::vector<uint8_t>> TempFile::Read() const {
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error("cannot open " + path_ + ": " + std::strerror(errno));
  std::vector<uint8_t> data;
  uint8_t buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return Error("cannot read " + path_ + ": " + std::strerror(e));
    }
    if (n == 0) break;
    data.insert(data.end(), buf, buf + n);
  }
  close(fd);
  return data;
}

}  // namespace kiln::codegen::internal
