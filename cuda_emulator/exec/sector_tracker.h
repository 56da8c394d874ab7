// SectorTracker: which 32-byte sectors of which allocations a launch read,
// wrote and updated atomically, so that the counters can give unique
// sectors (the DRAM traffic a kernel cannot avoid) besides sectors per
// request (its coalescing). One bit per sector per allocation, set with
// atomic or: blocks on several worker threads mark concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cuda_emulator/exec/device_memory.h"

namespace kiln::emu {

struct SectorTrackerBitmaps {
  uint64_t sectors = 0;  // the allocation's size in sectors
  std::unique_ptr<std::atomic<uint64_t>[]> load, store, atomic;
};

// The sectors of one allocation a launch touched, by kind of access: how
// many, and the span from the first to the last of them.
struct SectorFootprint {
  struct Touched {
    uint64_t sectors = 0;
    uint64_t span = 0;  // last - first + 1; 0 when none
  };
  uint64_t allocation_sectors = 0;
  Touched load, store, atomic;
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
  static bool IsMarked(const std::atomic<uint64_t>* bits, uint64_t sector) {
    return (bits[sector >> 6].load(std::memory_order_relaxed) >> (sector & 63)) & 1;
  }
  // Per allocation touched, the sectors marked so far. Not concurrently
  // with Mark.
  std::vector<SectorFootprint> Footprints();

 private:
  std::mutex mu_;
  std::unordered_map<const Allocation*, Bitmaps> maps_;
};

}  // namespace kiln::emu
