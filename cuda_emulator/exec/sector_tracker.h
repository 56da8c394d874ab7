// SectorTracker: which 32-byte sectors of which allocations a launch read
// and wrote, so that the counters can give unique sectors (the DRAM traffic
// a kernel cannot avoid) besides sectors per request (its coalescing).
// One bit per sector per allocation, set with atomic or: blocks on several
// worker threads mark concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cuda_emulator/exec/device_memory.h"

namespace kiln::emu {

struct SectorTrackerBitmaps {
  std::unique_ptr<std::atomic<uint64_t>[]> load, store;
};

class SectorTracker {
 public:
  using Bitmaps = SectorTrackerBitmaps;
  // The bitmaps of `a`, created on first use.
  Bitmaps* For(const Allocation* a);
  // Sets the bit of `sector` (an index within the allocation); true if it
  // was clear.
  static bool Mark(std::atomic<uint64_t>* bits, uint64_t sector) {
    uint64_t bit = uint64_t{1} << (sector & 63);
    return !(bits[sector >> 6].fetch_or(bit, std::memory_order_relaxed) & bit);
  }

 private:
  std::mutex mu_;
  std::unordered_map<const Allocation*, Bitmaps> maps_;
};

}  // namespace kiln::emu
