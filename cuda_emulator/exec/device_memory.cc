// DeviceMemory: the emulated GPU's global memory and its ledger; see
// device_memory.h.
//
// Every message names the address it is about through Describe(), so a bad
// copy, free or kernel access reads like a compute-sanitizer report: where
// the address is relative to the nearest live (or freed) allocation.
#include "cuda_emulator/exec/device_memory.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kiln::emu {

namespace {

constexpr uint64_t kAlignment = 256;   // as cuMemAlloc
constexpr uint8_t kUninitializedFill = 0xCB;
constexpr size_t kFreedRangesKept = 4096;
// An address this close to an allocation is described relative to it.
constexpr uint64_t kNearbyBytes = uint64_t{1} << 20;

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return buf;
}

std::string Bytes(uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

std::string KindWord(MemoryKind kind) {
  return kind == MemoryKind::kDevice ? "allocation" : "pinned host allocation";
}

// "a 1024-byte allocation at 0x7f..".
std::string AllocationText(const Allocation& a) {
  return "a " + std::to_string(a.size) + "-byte " + KindWord(a.kind) + " at " + Hex(a.base);
}

std::atomic_ref<uint64_t> Word(const std::vector<uint64_t>& bits, uint64_t i) {
  // atomic_ref<const T> is C++26; the const_cast only serves loads.
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(bits[i]));
}

// Bits [lo, hi) of a word, lo < hi <= 64.
uint64_t BitRange(uint64_t lo, uint64_t hi) {
  uint64_t upper = hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upper & ~((uint64_t{1} << lo) - 1);
}

}  // namespace

void Allocation::MarkInitialized(uint64_t address, uint64_t bytes) {
  if (initialized.empty() || bytes == 0) return;
  uint64_t begin = address - base, end = begin + bytes;
  for (uint64_t word = begin / 64; word * 64 < end; ++word) {
    uint64_t lo = std::max(begin, word * 64) - word * 64;
    uint64_t hi = std::min(end, word * 64 + 64) - word * 64;
    uint64_t mask = BitRange(lo, hi);
    // Kernel blocks on several threads mark neighbouring bytes at once.
    if (mask == ~uint64_t{0}) {
      Word(initialized, word).store(mask, std::memory_order_relaxed);
    } else {
      Word(initialized, word).fetch_or(mask, std::memory_order_relaxed);
    }
  }
}

int64_t Allocation::FirstUninitialized(uint64_t address, uint64_t bytes) const {
  if (initialized.empty() || bytes == 0) return -1;
  uint64_t begin = address - base, end = begin + bytes;
  for (uint64_t word = begin / 64; word * 64 < end; ++word) {
    uint64_t lo = std::max(begin, word * 64) - word * 64;
    uint64_t hi = std::min(end, word * 64 + 64) - word * 64;
    uint64_t missing = ~Word(initialized, word).load(std::memory_order_relaxed) & BitRange(lo, hi);
    if (missing) {
      return static_cast<int64_t>(base + word * 64 + static_cast<uint64_t>(__builtin_ctzll(missing)));
    }
  }
  return -1;
}

DeviceMemory::~DeviceMemory() {
  for (auto& [base, a] : live_) std::free(reinterpret_cast<void*>(base));
}

StatusOr<uint64_t> DeviceMemory::Allocate(uint64_t size, MemoryKind kind, int device) {
  if (size == 0) return Error("cannot allocate 0 bytes");
  if (size > UINT64_MAX - kAlignment) return Error("cannot allocate " + Bytes(size));
  uint64_t padded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, padded);
  if (!p) {
    return Error("cannot allocate " + Bytes(size) + " of host memory for the emulated device");
  }
  auto a = std::make_unique<Allocation>();
  a->base = reinterpret_cast<uint64_t>(p);
  a->size = size;
  a->kind = kind;
  a->device = device;
  if (kind == MemoryKind::kDevice) {
    std::memset(p, kUninitializedFill, padded);
    a->initialized.assign((size + 63) / 64, 0);
  } else {
    std::memset(p, 0, padded);
  }
  uint64_t base = a->base;
  std::unique_lock lock(mu_);
  // The host allocator may hand out a freed range again: it is live now.
  auto it = freed_.lower_bound(base);
  if (it != freed_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second > base) it = prev;
  }
  while (it != freed_.end() && it->first < base + padded) it = freed_.erase(it);
  live_[base] = std::move(a);
  if (kind == MemoryKind::kDevice) bytes_in_use_.fetch_add(size, std::memory_order_relaxed);
  return base;
}

Status DeviceMemory::Free(uint64_t address, MemoryKind kind) {
  std::unique_lock lock(mu_);
  auto it = live_.find(address);
  if (it == live_.end()) {
    if (Find(address, 1)) {
      return Error("invalid free of " + Hex(address) + ": not the start of an allocation (" +
                   Describe(address, 1) + ")");
    }
    return Error("invalid free of " + Hex(address) + ": " + Describe(address, 1));
  }
  const Allocation& a = *it->second;
  if (a.kind != kind) {
    return Error("invalid free of " + Hex(address) + ": it is " +
                 (a.kind == MemoryKind::kDevice ? "device memory; free it with cuMemFree"
                                                : "pinned host memory; free it with cuMemFreeHost"));
  }
  if (a.kind == MemoryKind::kDevice) bytes_in_use_.fetch_sub(a.size, std::memory_order_relaxed);
  freed_[a.base] = a.size;
  freed_order_.push_back(a.base);
  if (freed_order_.size() > kFreedRangesKept) {
    freed_.erase(freed_order_.front());
    freed_order_.pop_front();
  }
  std::free(reinterpret_cast<void*>(a.base));
  live_.erase(it);
  return Status::Ok();
}

uint64_t DeviceMemory::live_allocations(MemoryKind kind) const {
  std::shared_lock lock(mu_);
  uint64_t n = 0;
  for (const auto& [base, a] : live_) n += a->kind == kind ? 1 : 0;
  return n;
}

void DeviceMemory::Reset() {
  std::unique_lock lock(mu_);
  for (auto& [base, a] : live_) {
    freed_[base] = a->size;
    freed_order_.push_back(base);
    std::free(reinterpret_cast<void*>(base));
  }
  while (freed_order_.size() > kFreedRangesKept) {
    freed_.erase(freed_order_.front());
    freed_order_.pop_front();
  }
  live_.clear();
  bytes_in_use_.store(0, std::memory_order_relaxed);
}

Allocation* DeviceMemory::Find(uint64_t address, uint64_t bytes) {
  auto it = live_.upper_bound(address);
  if (it == live_.begin()) return nullptr;
  Allocation* a = std::prev(it)->second.get();
  return a->Contains(address, bytes) ? a : nullptr;
}

std::string DeviceMemory::Describe(uint64_t address, uint64_t bytes) const {
  std::string what = Hex(address) + (bytes > 1 ? " (" + Bytes(bytes) + ")" : "");
  auto above = live_.upper_bound(address);
  const Allocation* below = above == live_.begin() ? nullptr : std::prev(above)->second.get();
  if (below && address - below->base < below->size) {
    uint64_t offset = address - below->base;
    if (bytes <= below->size - offset) {
      return what + " is " + Bytes(offset) + " into " + AllocationText(*below);
    }
    return what + " runs " + Bytes(offset + bytes - below->size) + " past the end of " +
           AllocationText(*below);
  }
  if (address == 0) return what + " is the null pointer";
  auto freed = freed_.upper_bound(address);
  if (freed != freed_.begin()) {
    auto [base, size] = *std::prev(freed);
    if (address - base < size) {
      return what + " is in no live allocation: it is " + Bytes(address - base) + " into a " +
             std::to_string(size) + "-byte allocation at " + Hex(base) + " that was freed";
    }
  }
  // Outside every allocation: relative to the nearest one, when close.
  uint64_t past = below ? address - (below->base + below->size) : UINT64_MAX;
  uint64_t before = above != live_.end() ? above->first - address : UINT64_MAX;
  if (past <= before && past < kNearbyBytes) {
    return what + " is " + Bytes(past) + " past the end of " + AllocationText(*below);
  }
  if (before < kNearbyBytes) {
    return what + " is " + Bytes(before) + " before " + AllocationText(*above->second);
  }
  return what + " is in no live allocation";
}

Status DeviceMemory::CopyToDevice(uint64_t dst, const void* src, uint64_t bytes) {
  if (bytes == 0) return Status::Ok();
  if (!src) return Error("invalid copy source: the host pointer is null");
  std::shared_lock lock(mu_);
  Allocation* d = Find(dst, bytes);
  if (!d) return Error("invalid copy destination: " + Describe(dst, bytes));
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  d->MarkInitialized(dst, bytes);
  return Status::Ok();
}

Status DeviceMemory::CopyFromDevice(void* dst, uint64_t src, uint64_t bytes) {
  if (bytes == 0) return Status::Ok();
  if (!dst) return Error("invalid copy destination: the host pointer is null");
  std::shared_lock lock(mu_);
  if (!Find(src, bytes)) return Error("invalid copy source: " + Describe(src, bytes));
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return Status::Ok();
}

namespace {

// Carries the initialized bits of [src, src + bytes) over to dst, so that a
// copy of never-written bytes stays never-written.
void CopyInitializedBits(Allocation& d, uint64_t dst, const Allocation& s, uint64_t src,
                         uint64_t bytes) {
  if (s.FirstUninitialized(src, bytes) < 0) {
    d.MarkInitialized(dst, bytes);
    return;
  }
  uint64_t run = 0;  // length of the current run of initialized bytes
  for (uint64_t i = 0; i < bytes; ++i) {
    if (s.FirstUninitialized(src + i, 1) < 0) {
      ++run;
    } else if (run) {
      d.MarkInitialized(dst + i - run, run);
      run = 0;
    }
  }
  if (run) d.MarkInitialized(dst + bytes - run, run);
}

}  // namespace

Status DeviceMemory::CopyDeviceToDevice(uint64_t dst, uint64_t src, uint64_t bytes) {
  if (bytes == 0) return Status::Ok();
  std::shared_lock lock(mu_);
  Allocation* s = Find(src, bytes);
  if (!s) return Error("invalid copy source: " + Describe(src, bytes));
  Allocation* d = Find(dst, bytes);
  if (!d) return Error("invalid copy destination: " + Describe(dst, bytes));
  // cuMemcpy does not allow overlap: a GPU copy engine would produce
  // garbage where memcpy here might not, so report it instead.
  if (dst != src && dst < src + bytes && src < dst + bytes) {
    return Error("invalid copy of " + Bytes(bytes) + " from " + Hex(src) + " to " + Hex(dst) +
                 ": the ranges overlap");
  }
  std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  CopyInitializedBits(*d, dst, *s, src, bytes);
  return Status::Ok();
}

Status DeviceMemory::Memset(uint64_t dst, uint32_t pattern, int element_bytes, uint64_t count) {
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4) {
    return Error("invalid memset element size " + std::to_string(element_bytes));
  }
  uint64_t size = static_cast<uint64_t>(element_bytes);
  if (count == 0) return Status::Ok();
  if (dst % size != 0) {
    return Error("misaligned memset destination " + Hex(dst) + ": " + std::to_string(size * 8) +
                 "-bit elements need " + Bytes(size) + " alignment");
  }
  if (count > UINT64_MAX / size) return Error("invalid memset of " + std::to_string(count) + " elements");
  uint64_t bytes = count * size;
  std::shared_lock lock(mu_);
  Allocation* d = Find(dst, bytes);
  if (!d) return Error("invalid memset destination: " + Describe(dst, bytes));
  auto* p = reinterpret_cast<uint8_t*>(dst);
  if (size == 1) {
    std::memset(p, static_cast<int>(pattern & 0xFF), bytes);
  } else {
    for (uint64_t i = 0; i < count; ++i) std::memcpy(p + i * size, &pattern, size);  // little-endian
  }
  d->MarkInitialized(dst, bytes);
  return Status::Ok();
}

}  // namespace kiln::emu
