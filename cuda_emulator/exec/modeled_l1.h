// ModeledL1: the timing model's view of a warp's share of the SM's L1
// cache: the last 32-byte global sectors the warp loaded, 61 sets of 4 ways
// (244 sectors, 7.6 KiB: about a 32nd of a 256 KiB L1). A load whose every
// sector is here hits L1 (its latency, and no L2 traffic; see
// docs/gpu_timing_model.md). The set is the sector index modulo a prime, so
// the sectors of 32 lanes reading at any stride that is not a multiple of
// 61 sectors land in distinct sets. Per warp, so the answer does not
// depend on how the emulator schedules blocks on host threads.
#pragma once

#include <cstdint>

namespace kiln::emu {

class ModeledL1 {
 public:
  // True when `sector` (address / 32) is held; either way it becomes the
  // most recently used sector of its set.
  bool Access(uint64_t sector) {
    uint64_t tag = sector + 1;  // 0 marks an empty way
    uint64_t* set = ways_ + (sector % kSets) * kWays;
    int hit = kWays - 1;
    for (int i = 0; i < kWays; ++i) {
      if (set[i] == tag) {
        hit = i;
        break;
      }
    }
    bool found = set[hit] == tag;
    for (int i = hit; i > 0; --i) set[i] = set[i - 1];
    set[0] = tag;
    return found;
  }

 private:
  static constexpr uint64_t kSets = 61;
  static constexpr int kWays = 4;

  uint64_t ways_[kSets * kWays] = {};
};

}  // namespace kiln::emu
