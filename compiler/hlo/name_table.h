// NameTable: instruction name -> index, for resolving operand names while
// parsing. Open addressing with the hash stored next to the key: name
// lookups are among the parser's hottest operations, and a node-based map
// costs an allocation per instruction. Keys are views whose storage must
// outlive the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kiln::hlo::internal {

class NameTable {
 public:
  static constexpr size_t kNone = ~size_t{0};

  size_t Find(std::string_view name) const {
    if (slots_.empty()) return kNone;
    uint64_t h = Hash(name);
    for (size_t i = h >> shift_;; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (s.index == kNone) return kNone;
      if (s.hash == h && s.name == name) return s.index;
    }
  }
  bool count(std::string_view name) const { return Find(name) != kNone; }
  // Adds name -> index; false if the name is already present.
  bool Insert(std::string_view name, size_t index) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();  // load factor <= 1/2
    return Place(Hash(name), name, index);
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    std::string_view name;
    size_t index = kNone;
  };
  // FNV-1a, then a multiplicative mix so the top bits (the slot) depend on
  // every character.
  static uint64_t Hash(std::string_view s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return (h ^ (h >> 32)) * 0x9e3779b97f4a7c15ull;
  }
  bool Place(uint64_t h, std::string_view name, size_t index) {
    for (size_t i = h >> shift_;; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (s.index == kNone) {
        s = Slot{h, name, index};
        ++size_;
        return true;
      }
      if (s.hash == h && s.name == name) return false;
    }
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    size_t n = old.empty() ? 64 : old.size() * 2;
    slots_.assign(n, Slot{});
    shift_ = 64;
    for (size_t k = n; k > 1; k >>= 1) --shift_;  // slot = top log2(n) bits
    size_ = 0;
    for (const Slot& s : old)
      if (s.index != kNone) Place(s.hash, s.name, s.index);
  }
  std::vector<Slot> slots_;
  int shift_ = 63;
  size_t size_ = 0;
};

}  // namespace kiln::hlo::internal
