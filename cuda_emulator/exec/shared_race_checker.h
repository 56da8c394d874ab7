// SharedRaceChecker: finds shared-memory hazards between threads of one
// block, as compute-sanitizer's racecheck does: a byte written by one thread
// and read or written by another, or read by one and written by another,
// with no barrier (bar.sync) between the two accesses.
//
// Shadow state per shared byte: the last writer and the reader(s) of the
// current barrier interval. Intervals are numbered by a counter that never
// repeat for the checker's lifetime (blocks and barriers both advance it),
// so starting a block costs nothing: stale entries simply belong to an old
// interval. Atomics are not hazards and are not recorded.
//
// bar.warp.sync orders memory among the lanes of its warp (PTX ISA): each
// warp counts its warp barriers, and two accesses by lanes of one warp are
// ordered when a warp barrier came between them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::emu {

class SharedRaceChecker {
 public:
  // A new block with `shared_bytes` of shared memory.
  void StartBlock(uint32_t shared_bytes, uint32_t warps);
  // Every thread of the block passed a barrier.
  void Barrier() { ++interval_; }
  // The lanes of warp `warp` passed a bar.warp.sync together.
  void WarpBarrier(uint32_t warp) {
    if (warp < warp_syncs_.size()) ++warp_syncs_[warp];
  }

  // Records an access by `thread` (linear id in the block) of
  // [offset, offset + size). Returns "" or the hazard, e.g. "read-after-
  // write race on shared byte 0x40 with thread 33".
  std::string Access(uint32_t offset, uint32_t size, uint32_t thread, bool write);

 private:
  static constexpr uint32_t kManyReaders = 0xffffffffu;
  static constexpr uint32_t kManyWarps = 0xffffffffu;
  struct Shadow {
    uint64_t write_interval = 0;
    uint64_t read_interval = 0;
    uint32_t writer = 0;
    uint32_t reader = 0;       // kManyReaders when several threads read
    uint32_t reader_warp = 0;  // the readers' warp, or kManyWarps
    uint32_t write_sync = 0;   // the writer's warp barrier count at the write
    uint32_t read_sync = 0;    // the latest reader's warp barrier count
  };
  // Whether an access by `thread` is ordered after one by a lane of warp
  // `other_warp` recorded at that warp's barrier count `sync`.
  bool OrderedInWarp(uint32_t thread, uint32_t other_warp, uint32_t sync) const {
    uint32_t warp = thread / 32;
    return other_warp == warp && warp_syncs_[warp] > sync;
  }
  std::vector<Shadow> shadow_;
  std::vector<uint32_t> warp_syncs_;
  uint64_t interval_ = 1;
};

}  // namespace kiln::emu
