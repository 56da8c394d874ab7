// Encoding and checking of compile cache entries (cache_entry.h).
#include "compiler/cache/cache_entry.h"

#include <xxhash.h>

#include <cstring>

namespace kiln::cache {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'C', 'C', 'H', '\0'};

// Host byte order: an entry is only ever read on the machine kind that
// wrote it (its key names kiln's build).
struct EntryHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t key_size;
  uint64_t payload_size;
  uint64_t payload_xxh3;
};
static_assert(sizeof(EntryHeader) == 32);

}  // namespace

std::vector<uint8_t> EncodeCacheEntry(std::string_view key, std::span<const uint8_t> payload) {
  EntryHeader header;
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.format_version = kCacheFormatVersion;
  header.key_size = static_cast<uint32_t>(key.size());
  header.payload_size = payload.size();
  header.payload_xxh3 = XXH3_64bits(payload.data(), payload.size());
  std::vector<uint8_t> entry(sizeof header + key.size() + payload.size());
  std::memcpy(entry.data(), &header, sizeof header);
  std::memcpy(entry.data() + sizeof header, key.data(), key.size());
  if (!payload.empty()) std::memcpy(entry.data() + sizeof header + key.size(), payload.data(), payload.size());
  return entry;
}

std::optional<std::vector<uint8_t>> DecodeCacheEntry(std::span<const uint8_t> entry, std::string_view key) {
  EntryHeader header;
  if (entry.size() < sizeof header) return std::nullopt;
  std::memcpy(&header, entry.data(), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) return std::nullopt;
  if (header.format_version != kCacheFormatVersion || header.key_size != key.size()) return std::nullopt;
  // Exact size: a truncated entry, or one with trailing bytes, is refused.
  if (entry.size() < sizeof header + key.size()) return std::nullopt;
  if (entry.size() - sizeof header - key.size() != header.payload_size) return std::nullopt;
  std::span<const uint8_t> stored_key = entry.subspan(sizeof header, key.size());
  if (!key.empty() && std::memcmp(stored_key.data(), key.data(), key.size()) != 0) return std::nullopt;
  std::span<const uint8_t> payload = entry.subspan(sizeof header + key.size());
  if (XXH3_64bits(payload.data(), payload.size()) != header.payload_xxh3) return std::nullopt;
  return std::vector<uint8_t>(payload.begin(), payload.end());
}

}  // namespace kiln::cache
