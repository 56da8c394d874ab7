// Buffer: a ref-counted handle to memory of one device and memory space;
// see runtime.h. Host memory is 64-byte-aligned aligned_alloc memory; a
// Backend adopts its own (device, pinned) memory with a release function.
#include <cstdlib>
#include <cstring>

#include "runtime/runtime.h"

namespace kiln::runtime {

struct Buffer::Storage {
  uint8_t* host = nullptr;  // null when not host-accessible
  uint64_t device_address = 0;
  int64_t size = 0;
  MemorySpace space = MemorySpace::kHost;
  const Device* device = nullptr;
  std::function<void()> release;  // empty: host memory from aligned_alloc
  ~Storage() {
    if (release) {
      release();
    } else {
      std::free(host);
    }
  }
};

std::string_view MemorySpaceName(MemorySpace space) {
  switch (space) {
    case MemorySpace::kHost: return "host";
    case MemorySpace::kPinnedHost: return "pinned host";
    case MemorySpace::kDevice: return "device";
  }
  return "?";
}

uint8_t* Buffer::data() const {
  return storage_ && storage_->host ? storage_->host + offset_ : nullptr;
}

uint64_t Buffer::device_address() const {
  return storage_ && storage_->device_address ? storage_->device_address + static_cast<uint64_t>(offset_)
                                              : 0;
}

MemorySpace Buffer::memory_space() const { return storage_ ? storage_->space : MemorySpace::kHost; }

const Device* Buffer::device() const { return storage_ ? storage_->device : nullptr; }

StatusOr<Buffer> Buffer::AllocateBytes(int64_t bytes) {
  return Allocate(Shape(ElementType::kU8, {bytes}), bytes);
}

namespace {

// aligned_alloc needs a multiple of the alignment; never allocate 0 bytes
// so every live buffer has a distinct, valid address.
StatusOr<std::pair<uint8_t*, int64_t>> AlignedHostMemory(const Shape& shape, int64_t min_bytes) {
  if (!shape.IsArray()) return Error("Buffer::Allocate: not an array shape: " + shape.ToString());
  int64_t size = std::max(shape.ByteSize(), min_bytes);
  if (size < 0) return Error("Buffer::Allocate: negative size for " + shape.ToString());
  int64_t rounded = std::max<int64_t>(
      kBufferAlignment, (size + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment);
  void* ptr = std::aligned_alloc(kBufferAlignment, static_cast<size_t>(rounded));
  if (!ptr) return Error("Buffer::Allocate: out of memory allocating " + std::to_string(size) + " bytes");
  return std::make_pair(static_cast<uint8_t*>(ptr), size);
}

}  // namespace

StatusOr<Buffer> Buffer::AllocateUninitialized(const Shape& shape, int64_t min_bytes) {
  KILN_ASSIGN_OR_RETURN(auto memory, AlignedHostMemory(shape, min_bytes));
  Buffer b;
  b.storage_ = std::make_shared<Storage>();
  b.storage_->host = memory.first;
  b.storage_->size = memory.second;
  b.size_ = memory.second;
  b.shape_ = shape;
  return b;
}

StatusOr<Buffer> Buffer::Allocate(const Shape& shape, int64_t min_bytes) {
  KILN_ASSIGN_OR_RETURN(Buffer b, AllocateUninitialized(shape, min_bytes));
  std::memset(b.data(), 0, static_cast<size_t>(b.size()));
  return b;
}

Buffer Buffer::Adopt(const Shape& shape, int64_t bytes, MemorySpace space, const Device* device,
                     uint8_t* host, uint64_t device_address, std::function<void()> release) {
  Buffer b;
  b.storage_ = std::make_shared<Storage>();
  b.storage_->host = host;
  b.storage_->device_address = device_address;
  b.storage_->size = bytes;
  b.storage_->space = space;
  b.storage_->device = device;
  b.storage_->release = std::move(release);
  b.size_ = bytes;
  b.shape_ = shape;
  return b;
}

Buffer Buffer::View(const Buffer& base, int64_t offset, const Shape& shape, int64_t size) {
  Buffer b;
  b.storage_ = base.storage_;
  b.offset_ = base.offset_ + offset;
  b.size_ = size;
  b.shape_ = shape;
  return b;
}

}  // namespace kiln::runtime
