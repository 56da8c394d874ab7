// SharedRaceChecker; see shared_race_checker.h.
#include "cuda_emulator/exec/shared_race_checker.h"

#include <cstdio>

namespace kiln::emu {
namespace {

std::string Hazard(const char* kind, uint32_t offset, uint32_t other) {
  char buf[128];
  if (other == 0xffffffffu) {
    std::snprintf(buf, sizeof(buf), "%s race on shared byte 0x%x with other threads", kind, offset);
  } else {
    std::snprintf(buf, sizeof(buf), "%s race on shared byte 0x%x with thread %u", kind, offset,
                  other);
  }
  return buf;
}

}  // namespace

void SharedRaceChecker::StartBlock(uint32_t shared_bytes, uint32_t warps) {
  if (shadow_.size() < shared_bytes) shadow_.resize(shared_bytes);
  warp_syncs_.assign(warps, 0);
  ++interval_;
}

std::string SharedRaceChecker::Access(uint32_t offset, uint32_t size, uint32_t thread,
                                      bool write) {
  const uint64_t now = interval_;
  const uint32_t warp = thread / 32, sync = warp_syncs_[warp];
  for (uint32_t i = 0; i < size; ++i) {
    Shadow& s = shadow_[offset + i];
    bool written_now = s.write_interval == now && s.writer != thread &&
                       !OrderedInWarp(thread, s.writer / 32, s.write_sync);
    if (write) {
      if (written_now) return Hazard("write-after-write", offset + i, s.writer);
      if (s.read_interval == now && s.reader != thread &&
          !OrderedInWarp(thread, s.reader_warp, s.read_sync))
        return Hazard("write-after-read", offset + i, s.reader);
      s.write_interval = now;
      s.writer = thread;
      s.write_sync = sync;
    } else {
      if (written_now) return Hazard("read-after-write", offset + i, s.writer);
      if (s.read_interval == now && s.reader != thread) {
        if (s.reader_warp != warp) s.reader_warp = kManyWarps;
        s.reader = kManyReaders;
      } else if (s.read_interval != now) {
        s.read_interval = now;
        s.reader = thread;
        s.reader_warp = warp;
      }
      s.read_sync = sync;
    }
  }
  return "";
}

}  // namespace kiln::emu
