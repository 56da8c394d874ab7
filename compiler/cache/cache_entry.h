// The on-disk form of one compile cache entry: a fixed header (magic,
// format version, key and payload sizes, XXH3-64 of the payload), the key,
// then the payload. DecodeCacheEntry accepts an entry only when every part
// checks out, so a corrupted, truncated, foreign or colliding file is a miss
// and never a wrong result.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace kiln::cache {

// Bumped whenever the entry layout or the meaning of a stored payload
// changes; entries of another version are misses (and get overwritten).
inline constexpr uint32_t kCacheFormatVersion = 1;

// header + key + payload, ready to be written as one file.
std::vector<uint8_t> EncodeCacheEntry(std::string_view key, std::span<const uint8_t> payload);

// The payload of `entry` if it is a complete, intact entry of this format
// version stored under exactly `key`; nullopt otherwise.
std::optional<std::vector<uint8_t>> DecodeCacheEntry(std::span<const uint8_t> entry, std::string_view key);

}  // namespace kiln::cache
