// SectorTracker's bitmaps; see sector_tracker.h.
#include "cuda_emulator/exec/sector_tracker.h"

#include <bit>

namespace kiln::emu {

SectorTracker::Bitmaps* SectorTracker::For(const Allocation* a) {
  std::lock_guard<std::mutex> lock(mu_);
  Bitmaps& b = maps_[a];
  if (!b.load) {
    // Allocations are 256-byte aligned, so sector i is [base + 32 i, +32).
    b.sectors = (a->size + 31) / 32;
    size_t words = (a->size / 32 + 64) / 64;
    b.load.reset(new std::atomic<uint64_t>[words]());
    b.store.reset(new std::atomic<uint64_t>[words]());
    b.atomic.reset(new std::atomic<uint64_t>[words]());
  }
  return &b;
}

std::vector<SectorFootprint> SectorTracker::Footprints() {
  std::lock_guard<std::mutex> lock(mu_);
  auto count = [](const std::atomic<uint64_t>* bits, uint64_t sectors) {
    SectorFootprint::Touched t;
    uint64_t first = 0, last = 0;
    for (uint64_t w = 0; w < (sectors + 63) / 64; ++w) {
      uint64_t word = bits[w].load(std::memory_order_relaxed);
      if (!word) continue;
      if (t.sectors == 0) first = w * 64 + std::countr_zero(word);
      last = w * 64 + 63 - std::countl_zero(word);
      t.sectors += std::popcount(word);
    }
    t.span = t.sectors ? last - first + 1 : 0;
    return t;
  };
  std::vector<SectorFootprint> out;
  for (const auto& [alloc, b] : maps_) {
    out.push_back(
        {b.sectors, count(b.load.get(), b.sectors), count(b.store.get(), b.sectors), count(b.atomic.get(), b.sectors)});
  }
  return out;
}

}  // namespace kiln::emu
