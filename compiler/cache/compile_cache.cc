// CompileCache: lookups, atomic stores and LRU eviction over one directory
// (compile_cache.h).
#include "compiler/cache/compile_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "compiler/cache/build_identity.h"
#include "compiler/cache/cache_entry.h"
#include "compiler/cache/cache_key.h"

namespace kiln::cache {
namespace {

constexpr char kEntrySuffix[] = ".kce";
constexpr char kTempPrefix[] = "tmp.";
// A temporary file this old belongs to a writer that died.
constexpr time_t kStaleTempSeconds = 3600;

std::string Errno() { return std::strerror(errno); }

// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Sets the file's access and modification times to now, at full clock
// resolution (the kernel's own "now" is only as fine as its tick, which
// would make entries stored in one burst tie).
void TouchNow(int fd) {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  timespec times[2] = {now, now};
  futimens(fd, times);  // best effort: a stale time only ages the entry
}

bool ReadAll(int fd, std::vector<uint8_t>& data) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < 0) return false;
  data.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Status WriteAll(int fd, std::span<const uint8_t> data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error("cannot write compile cache entry " + path + ": " + Errno());
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

struct EntryFile {
  std::string path;
  int64_t bytes;
  timespec mtime;
};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The entries in `dir`, removing temporary files that writers left behind.
StatusOr<std::vector<EntryFile>> ListEntries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return Error("cannot read compile cache directory " + dir + ": " + Errno());
  std::vector<EntryFile> entries;
  time_t now = time(nullptr);
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    bool entry = EndsWith(name, kEntrySuffix);
    bool temp = name.rfind(kTempPrefix, 0) == 0;
    if (!entry && !temp) continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) continue;  // removed meanwhile
    if (temp) {
      if (now - st.st_mtime > kStaleTempSeconds) unlink(path.c_str());
      continue;
    }
    entries.push_back({std::move(path), static_cast<int64_t>(st.st_size), st.st_mtim});
  }
  closedir(d);
  return entries;
}

int64_t TotalBytes(const std::vector<EntryFile>& entries) {
  int64_t total = 0;
  for (const EntryFile& e : entries) total += e.bytes;
  return total;
}

bool Older(const EntryFile& a, const EntryFile& b) {
  if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
  if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec < b.mtime.tv_nsec;
  return a.path < b.path;
}

std::string Hex128(XXH128_hash_t h) {
  char hex[40];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

}  // namespace

std::string ContentFingerprint(std::string_view bytes) {
  return "xxh3-128:" + Hex128(XXH3_128bits(bytes.data(), bytes.size())) + ":" + std::to_string(bytes.size());
}

std::string DefaultCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/kiln";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/kiln";
  return "";
}

StatusOr<std::unique_ptr<CompileCache>> CompileCache::Open(const std::string& dir, int64_t max_bytes) {
  if (dir.empty()) return Error("empty compile cache directory");
  if (max_bytes <= 0) return Error("compile cache bound must be positive, not " + std::to_string(max_bytes));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error("cannot create compile cache directory " + dir + ": " + ec.message());
  if (access(dir.c_str(), R_OK | W_OK | X_OK) != 0)
    return Error("cannot use compile cache directory " + dir + ": " + Errno());
  std::string build = KilnBuildIdentity();
  if (build.empty()) return Error("cannot identify this build of kiln, so its compile cache entries could not be told apart");
  std::unique_ptr<CompileCache> cache(new CompileCache(dir, max_bytes, CacheKey("kiln-build").Add("build", build).str()));
  KILN_ASSIGN_OR_RETURN(std::vector<EntryFile> entries, ListEntries(dir));
  std::lock_guard<std::mutex> lock(cache->mutex_);
  cache->estimated_bytes_ = TotalBytes(entries);
  if (cache->estimated_bytes_ > max_bytes) KILN_RETURN_IF_ERROR(cache->EvictLocked());
  return cache;
}

std::string CompileCache::FullKey(std::string_view key) const {
  return std::string(build_).append(key);
}

std::string CompileCache::EntryPath(std::string_view key) const {
  std::string full = FullKey(key);
  return dir_ + "/" + Hex128(XXH3_128bits(full.data(), full.size())) + kEntrySuffix;
}

std::optional<std::vector<uint8_t>> CompileCache::Lookup(std::string_view user_key) {
  std::string key = FullKey(user_key);
  std::string path = EntryPath(user_key);
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  std::vector<uint8_t> entry;
  std::optional<std::vector<uint8_t>> payload;
  if (ReadAll(fd.get(), entry)) payload = DecodeCacheEntry(entry, key);
  if (!payload) {
    // Damaged or foreign: never used, and removed so that the next store
    // writes a good one (a concurrent store's fresh entry may go too; that
    // only costs it a recompile).
    unlink(path.c_str());
    return std::nullopt;
  }
  TouchNow(fd.get());
  return payload;
}

Status CompileCache::Store(std::string_view key, std::span<const uint8_t> payload) {
  std::vector<uint8_t> entry = EncodeCacheEntry(FullKey(key), payload);
  if (static_cast<int64_t>(entry.size()) > max_bytes_) return Status::Ok();
  std::string temp = dir_ + "/" + kTempPrefix + "XXXXXX";
  Fd fd(mkostemp(temp.data(), O_CLOEXEC));
  if (fd.get() < 0) return Error("cannot create a file in compile cache directory " + dir_ + ": " + Errno());
  Status written = WriteAll(fd.get(), entry, temp);
  if (written.ok()) TouchNow(fd.get());
  std::string path = EntryPath(key);
  if (written.ok() && rename(temp.c_str(), path.c_str()) != 0)
    written = Error("cannot rename " + temp + " to " + path + ": " + Errno());
  if (!written.ok()) {
    unlink(temp.c_str());
    return written;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  estimated_bytes_ += static_cast<int64_t>(entry.size());
  if (estimated_bytes_ > max_bytes_) return EvictLocked();
  return Status::Ok();
}

Status CompileCache::EvictLocked() {
  std::string lock_path = dir_ + "/lock";
  Fd lock(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (lock.get() < 0) return Error("cannot open " + lock_path + ": " + Errno());
  while (flock(lock.get(), LOCK_EX) != 0)
    if (errno != EINTR) return Error("cannot lock " + lock_path + ": " + Errno());
  KILN_ASSIGN_OR_RETURN(std::vector<EntryFile> entries, ListEntries(dir_));
  int64_t total = TotalBytes(entries);
  if (total > max_bytes_) {
    std::sort(entries.begin(), entries.end(), Older);
    const int64_t low_water = max_bytes_ / 10 * 9;
    for (const EntryFile& e : entries) {
      if (total <= low_water) break;
      if (unlink(e.path.c_str()) == 0 || errno == ENOENT) total -= e.bytes;
    }
  }
  estimated_bytes_ = total;
  return Status::Ok();  // the lock goes with its descriptor
}

}  // namespace kiln::cache
