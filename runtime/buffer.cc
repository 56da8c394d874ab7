// Buffer: ref-counted, 64-byte-aligned host memory; see runtime.h.
#include <cstdlib>
#include <cstring>

#include "runtime/runtime.h"

namespace kiln::runtime {

struct Buffer::Storage {
  uint8_t* ptr = nullptr;
  int64_t size = 0;
  ~Storage() { std::free(ptr); }
};

uint8_t* Buffer::data() const { return storage_ ? storage_->ptr + offset_ : nullptr; }

StatusOr<Buffer> Buffer::AllocateBytes(int64_t bytes) {
  return Allocate(Shape(ElementType::kU8, {bytes}), bytes);
}

StatusOr<Buffer> Buffer::Allocate(const Shape& shape, int64_t min_bytes) {
  if (!shape.IsArray()) return Error("Buffer::Allocate: not an array shape: " + shape.ToString());
  int64_t size = std::max(shape.ByteSize(), min_bytes);
  if (size < 0) return Error("Buffer::Allocate: negative size for " + shape.ToString());
  // aligned_alloc needs a multiple of the alignment; never allocate 0 bytes
  // so every live buffer has a distinct, valid address.
  int64_t rounded = std::max<int64_t>(
      kBufferAlignment, (size + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment);
  void* ptr = std::aligned_alloc(kBufferAlignment, static_cast<size_t>(rounded));
  if (!ptr) return Error("Buffer::Allocate: out of memory allocating " + std::to_string(size) + " bytes");
  std::memset(ptr, 0, static_cast<size_t>(rounded));
  Buffer b;
  b.storage_ = std::make_shared<Storage>();
  b.storage_->ptr = static_cast<uint8_t*>(ptr);
  b.storage_->size = rounded;
  b.size_ = size;
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
