// Size-classed cache of device memory; see cuda_memory_pool.h.
#include "runtime/cuda_memory_pool.h"

#include <string>

namespace kiln::runtime {

namespace {

constexpr uint64_t kMinBlock = 256;
constexpr uint64_t kLargeBlock = uint64_t{64} << 20;
constexpr uint64_t kLargeGranule = uint64_t{2} << 20;

uint64_t RoundUp(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

}  // namespace

uint64_t CudaMemoryPool::ClassBytes(uint64_t bytes) {
  bytes = RoundUp(bytes == 0 ? 1 : bytes, kMinBlock);
  if (bytes >= kLargeBlock) return RoundUp(bytes, kLargeGranule);
  // Four steps per power of two: 2^k * {1, 1.25, 1.5, 1.75}.
  uint64_t power = kMinBlock;
  while (power * 2 <= bytes) power *= 2;
  uint64_t step = power / 4 < kMinBlock ? kMinBlock : power / 4;
  return RoundUp(bytes, step);
}

CudaMemoryPool::~CudaMemoryPool() { TrimLocked(); }

StatusOr<CUdeviceptr> CudaMemoryPool::Allocate(uint64_t bytes) {
  const uint64_t size = ClassBytes(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      CUdeviceptr block = it->second.back();
      it->second.pop_back();
      ++stats_.reuses;
      --stats_.cached_blocks;
      stats_.cached_bytes -= static_cast<int64_t>(size);
      return block;
    }
  }
  CUdeviceptr block = 0;
  CUresult r = driver_.cuMemAlloc(&block, static_cast<size_t>(size));
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    // Cached blocks of other sizes may be what is missing.
    Trim();
    r = driver_.cuMemAlloc(&block, static_cast<size_t>(size));
  }
  KILN_RETURN_IF_ERROR(driver_.Check(r, "cuMemAlloc of " + std::to_string(bytes) + " bytes"));
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.driver_allocations;
  return block;
}

void CudaMemoryPool::Release(CUdeviceptr block, uint64_t bytes) {
  const uint64_t size = ClassBytes(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  free_[size].push_back(block);
  ++stats_.cached_blocks;
  stats_.cached_bytes += static_cast<int64_t>(size);
}

void CudaMemoryPool::Trim() {
  std::lock_guard<std::mutex> lock(mu_);
  TrimLocked();
}

void CudaMemoryPool::TrimLocked() {
  for (auto& [size, blocks] : free_) {
    for (CUdeviceptr block : blocks) driver_.cuMemFree(block);
  }
  free_.clear();
  stats_.cached_blocks = stats_.cached_bytes = 0;
}

CudaMemoryPool::Stats CudaMemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace kiln::runtime
