// DeviceMemory: the emulated GPU's global memory and the ledger that
// memcheck reads.
//
// Device addresses are real host addresses of aligned host allocations, so
// the driver's copies are plain memcpy and a kernel's load is a host load.
// What makes it a GPU's memory is the ledger: every kernel access and every
// driver copy is checked against the live allocations, and a byte that was
// never written can be reported when it is read (CheckOptions).
//
// Thread safety: Allocate/Free take the ledger exclusively; a launch holds a
// ReadLock for its whole run, so its blocks (on several threads) look
// allocations up without locking.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::emu {

enum class MemoryKind : uint8_t { kDevice, kPinnedHost };

struct Allocation {
  uint64_t base = 0;
  uint64_t size = 0;
  MemoryKind kind = MemoryKind::kDevice;
  // The emulated device whose context allocated it (its ordinal), which
  // library doubles such as NCCL's check their buffers against.
  int device = 0;
  // One bit per byte: set once the byte was written (copy, memset, kernel
  // store). Only kept for device memory.
  std::vector<uint64_t> initialized;

  bool Contains(uint64_t address, uint64_t bytes) const {
    return address >= base && bytes <= size && address - base <= size - bytes;
  }
  // Safe to call from several threads at once (atomic bit updates).
  void MarkInitialized(uint64_t address, uint64_t bytes);
  // The address of the first uninitialized byte of [address, address +
  // bytes), or -1 (always -1 for pinned host memory).
  int64_t FirstUninitialized(uint64_t address, uint64_t bytes) const;
};

class DeviceMemory {
 public:
  DeviceMemory() = default;
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // `size` bytes, 256-byte aligned (as cuMemAlloc). Device memory starts
  // uninitialized (filled with a 0xCB pattern, so a read that memcheck does
  // not flag still cannot pass for zeros); pinned host memory is zeroed.
  StatusOr<uint64_t> Allocate(uint64_t size, MemoryKind kind, int device = 0);
  // `address` must be the base of a live allocation of `kind`.
  Status Free(uint64_t address, MemoryKind kind);

  // The live allocation holding [address, address + bytes), or nullptr.
  // Callers hold a ReadLock (or are the only thread touching memory).
  Allocation* Find(uint64_t address, uint64_t bytes);
  // "0x7f.. is 16 bytes past the end of a 1024-byte allocation at 0x7f..",
  // "0x.. is in no live allocation: it is 8 bytes into a 256-byte
  // allocation at 0x.. that was freed" and the like. Callers hold a
  // ReadLock, as for Find.
  std::string Describe(uint64_t address, uint64_t bytes) const;

  // Checked copies for the driver: both ranges must be live allocations
  // (device or pinned) or, for the host side of H2D/D2H, any host memory.
  Status CopyToDevice(uint64_t dst, const void* src, uint64_t bytes);
  Status CopyFromDevice(void* dst, uint64_t src, uint64_t bytes);
  Status CopyDeviceToDevice(uint64_t dst, uint64_t src, uint64_t bytes);
  Status Memset(uint64_t dst, uint32_t pattern, int element_bytes, uint64_t count);

  // Frees every allocation (the driver destroys its context). Allocations
  // freed this way are reported as freed afterwards.
  void Reset();

  // Bytes of live device memory (pinned host memory not counted).
  uint64_t bytes_in_use() const { return bytes_in_use_.load(std::memory_order_relaxed); }
  // Live allocations of `kind` (kilnEmuLiveObjects).
  uint64_t live_allocations(MemoryKind kind) const;

  std::shared_lock<std::shared_mutex> ReadLock() const {
    return std::shared_lock<std::shared_mutex>(mu_);
  }

 private:
  mutable std::shared_mutex mu_;
  std::map<uint64_t, std::unique_ptr<Allocation>> live_;  // by base
  // Recently freed ranges (base -> size), for use-after-free messages;
  // freed_order_ holds their bases oldest first, to forget the oldest.
  std::map<uint64_t, uint64_t> freed_;
  std::deque<uint64_t> freed_order_;
  std::atomic<uint64_t> bytes_in_use_{0};
};

}  // namespace kiln::emu
