// CompileCache: kiln's persistent compile cache, a directory of entries
// (cache_entry.h) keyed by byte strings that the callers build from
// everything that determines what they store (compiler/driver: whole .bef
// artifacts; compiler/codegen: one kernel's object code, PTX or cubin).
//
// Every key is prefixed with kiln's build identity (build_identity.h), so
// entries of another build of the compiler never match.
//
// Several threads and processes may share one directory:
//   * an entry is written to a private temporary file and renamed into
//     place, so a reader sees a whole entry or none;
//   * an entry that fails its checks (corrupted, truncated, another format
//     version, another key under the same file name) is a miss and is
//     removed, so the next store repairs it;
//   * the directory is kept under `max_bytes` by least-recently-used
//     eviction: every store and hit sets the entry's mtime to now, and
//     eviction (under an flock of `<dir>/lock`, so one process evicts at a
//     time) removes the oldest entries down to 90% of the bound. Each
//     process counts the bytes it adds since it scanned the directory, so
//     concurrent writers may overshoot the bound by what they add between
//     scans.
// Entries are not fsynced: a crash may leave a damaged entry, which the
// checks then turn into a miss.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::cache {

inline constexpr int64_t kDefaultCacheMaxBytes = int64_t{1} << 30;

// $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln; "" when neither is set.
std::string DefaultCacheDir();

class CompileCache {
 public:
  // Opens the cache in `dir`, creating the directory if needed; evicts at
  // once if it already holds more than `max_bytes` (> 0).
  static StatusOr<std::unique_ptr<CompileCache>> Open(const std::string& dir, int64_t max_bytes);

  // The payload stored under `key`, marking the entry recently used; nullopt
  // on a miss. A damaged entry is removed and reported as a miss.
  std::optional<std::vector<uint8_t>> Lookup(std::string_view key);

  // Stores `payload` under `key` atomically, replacing any entry, then
  // evicts if the cache outgrew its bound. An entry larger than the whole
  // bound is not stored.
  Status Store(std::string_view key, std::span<const uint8_t> payload);

  const std::string& dir() const { return dir_; }
  // The file that holds `key`'s entry.
  std::string EntryPath(std::string_view key) const;

 private:
  CompileCache(std::string dir, int64_t max_bytes, std::string build)
      : dir_(std::move(dir)), max_bytes_(max_bytes), build_(std::move(build)) {}
  // The key as stored: kiln's build identity, then the caller's key.
  std::string FullKey(std::string_view key) const;
  // Rescans the directory and, when over the bound, removes the least
  // recently used entries. Requires mutex_.
  Status EvictLocked();

  const std::string dir_;
  const int64_t max_bytes_;
  const std::string build_;  // key prefix naming kiln's build (build_identity.h)
  std::mutex mutex_;
  int64_t estimated_bytes_ = 0;  // guarded by mutex_
};

}  // namespace kiln::cache
