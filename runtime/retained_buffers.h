// RetainedBuffers: the large output and temporary buffers of a host
// executable's last execution, kept for the next one. Internal to the
// runtime.
//
// Fresh memory for a large allocation costs a page fault (and the kernel's
// zeroing) per 4 KiB page on its first touch: for a 256 MiB all-reduce
// result that is more than the copy into it, and a good part of the
// exchange itself. An execution therefore hands its buffers of at least
// kMinBytes (128 KiB: glibc's malloc serves larger requests from fresh
// mappings, so they fault again on every execution; a batched GEMM's
// 512 KiB result cost more in page faults than the GEMM) back here, and
// the next one takes an allocation's buffer again
// once nobody holds it any more (the caller dropped the result that was a
// view of it). An executable thus keeps at most one execution's large
// buffers alive between executions.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/runtime.h"

namespace kiln::runtime {

class RetainedBuffers {
 public:
  static constexpr int64_t kMinBytes = int64_t{128} << 10;

  explicit RetainedBuffers(size_t allocations) : buffers_(allocations) {}

  // Allocation `a`'s buffer of an earlier execution when nobody else holds
  // it (its contents are stale); else a null Buffer.
  Buffer Take(size_t a) {
    std::lock_guard<std::mutex> lock(mutex_);
    Buffer& b = buffers_[a];
    // A sole owner cannot gain a handle behind the lock: nobody else has one.
    if (b.is_null() || !b.sole_owner()) return Buffer();
    return std::move(b);
  }

  // Keeps allocation `a`'s buffer of this execution when it is large and
  // the slot is free.
  void Keep(size_t a, const Buffer& b) {
    if (b.is_null() || b.size() < kMinBytes) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (buffers_[a].is_null() || buffers_[a].sole_owner()) buffers_[a] = b;
  }

 private:
  std::mutex mutex_;
  std::vector<Buffer> buffers_;
};

}  // namespace kiln::runtime
