// CudaMemoryPool: device memory kept for reuse, so that an execution whose
// outputs stay on the device does not pay cuMemAlloc and cuMemFree (tens
// of microseconds each on a real GPU, and cuMemFree waits for the device)
// for every output, every time.
//
// Blocks are cached by size class: sizes round up to 256 bytes, then to
// one of four steps per power of two (at most 25% over), and from 64 MiB
// up to whole 2 MiB (the driver's granularity), so a serving loop's
// repeated shapes find their blocks again while large buffers waste
// little. A released block goes back to its class's free list; nothing is
// returned to the driver until the pool is destroyed or trimmed. When
// cuMemAlloc runs out of memory, the pool frees every cached block and
// tries once more, so cached memory never makes an allocation fail.
//
// Thread-safe. Release may run on any thread (a Buffer's last handle); a
// block is released only when no work in flight uses it (executions and
// transfers hold their buffers' handles until they complete). The caller
// makes the device's context current before Allocate, Trim and the
// destructor.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "runtime/cuda_driver.h"

namespace kiln::runtime {

class CudaMemoryPool {
 public:
  struct Stats {
    int64_t driver_allocations = 0;  // cuMemAlloc calls that succeeded
    int64_t reuses = 0;              // allocations served from the cache
    int64_t cached_blocks = 0, cached_bytes = 0;
  };

  explicit CudaMemoryPool(const CudaDriver& driver) : driver_(driver) {}
  ~CudaMemoryPool();  // frees the cached blocks
  CudaMemoryPool(const CudaMemoryPool&) = delete;
  CudaMemoryPool& operator=(const CudaMemoryPool&) = delete;

  // The bytes a request of `bytes` takes (its size class).
  static uint64_t ClassBytes(uint64_t bytes);

  // A block of at least `bytes` (ClassBytes(bytes)), 256-byte aligned.
  StatusOr<CUdeviceptr> Allocate(uint64_t bytes);
  // Returns a block that Allocate(bytes) gave, with the same `bytes`.
  void Release(CUdeviceptr block, uint64_t bytes);
  // Frees every cached block.
  void Trim();
  Stats stats() const;

 private:
  void TrimLocked();

  const CudaDriver& driver_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<CUdeviceptr>> free_;  // by ClassBytes
  Stats stats_;
};

}  // namespace kiln::runtime
