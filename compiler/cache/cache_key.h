// CacheKey: a compile cache key built from named fields. Each field is
// written with its value's length, so two different field lists never give
// the same key, whatever bytes the values hold.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::cache {

class CacheKey {
 public:
  // `kind` names what the entry holds ("bef", "host-kernel", ...).
  explicit CacheKey(std::string_view kind) { Add("kind", kind); }

  CacheKey& Add(std::string_view name, std::string_view value) {
    key_.append(name).append(":").append(std::to_string(value.size())).append("=").append(value).append("\n");
    return *this;
  }
  CacheKey& Add(std::string_view name, int64_t value) { return Add(name, std::to_string(value)); }
  CacheKey& Add(std::string_view name, bool value) { return Add(name, value ? "1" : "0"); }
  CacheKey& Add(std::string_view name, const char* value) { return Add(name, std::string_view(value)); }

  const std::string& str() const { return key_; }

 private:
  std::string key_;
};

// "xxh3-128:<32 hex digits>:<size>": a fingerprint of `bytes` for keys
// that would otherwise carry a whole module's text.
std::string ContentFingerprint(std::string_view bytes);

}  // namespace kiln::cache
