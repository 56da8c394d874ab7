// HostRadixSort; see host_radix_sort.h.
#include "kernels_lib/host_radix_sort.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

namespace kiln::kernels {
namespace {

namespace th = ::kiln::thunks;

// The bits of an infinity of a float type of `width` bytes, sign cleared.
uint64_t InfinityBits(ElementType type) {
  switch (type) {
    case ElementType::kF16: return 0x7c00;
    case ElementType::kBF16: return 0x7f80;
    case ElementType::kF32: return 0x7f800000;
    default: return 0x7ff0000000000000;
  }
}

// Unsigned bits whose ascending order is the thunk's key order (the same
// mapping as the CUDA kernels' ToRadix, without the descending flip).
uint64_t OrderBits(uint64_t bits, int width, th::RadixKeyOrder order, uint64_t inf_bits) {
  const uint64_t sign = uint64_t{1} << (width * 8 - 1);
  const uint64_t mask = width == 8 ? ~uint64_t{0} : (sign << 1) - 1;
  if (order == th::RadixKeyOrder::kSigned) return (bits ^ sign) & mask;
  if (order == th::RadixKeyOrder::kUnsigned) return bits;
  const uint64_t magnitude = bits & ~sign & mask;
  if (order != th::RadixKeyOrder::kFloatTotal && magnitude == 0) bits = 0;
  if (order == th::RadixKeyOrder::kFloatNumpy && magnitude > inf_bits) bits = inf_bits + 1;
  return ((bits & sign) ? ~bits : (bits ^ sign)) & mask;
}

uint64_t LoadBits(const uint8_t* p, int width) {
  uint64_t v = 0;
  std::memcpy(&v, p, width);  // little-endian
  return v;
}

}  // namespace

Status HostRadixSort(const th::RadixSortThunk& sort, const uint8_t* keys, uint8_t* keys_out, const uint8_t* values,
                     uint8_t* values_out) {
  const int width = StorageBytes(sort.key_type);
  if (width < 1 || width > 8) return Error("radix-sort: unsupported key type");
  const int value_width = values ? StorageBytes(sort.value_type) : 0;
  const uint64_t inf_bits = InfinityBits(sort.key_type);
  const int64_t n = sort.row_length;
  std::vector<uint64_t> ordered(n);
  std::vector<int64_t> position(n);
  for (int64_t row = 0; row < sort.rows; ++row) {
    const int64_t base = row * n;
    for (int64_t i = 0; i < n; ++i)
      ordered[i] = OrderBits(LoadBits(keys + (base + i) * width, width), width, sort.order, inf_bits);
    std::iota(position.begin(), position.end(), 0);
    if (sort.descending) {
      std::stable_sort(position.begin(), position.end(), [&](int64_t a, int64_t b) { return ordered[a] > ordered[b]; });
    } else {
      std::stable_sort(position.begin(), position.end(), [&](int64_t a, int64_t b) { return ordered[a] < ordered[b]; });
    }
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(keys_out + (base + i) * width, keys + (base + position[i]) * width, width);
      if (values)
        std::memcpy(values_out + (base + i) * value_width, values + (base + position[i]) * value_width, value_width);
    }
  }
  return Status::Ok();
}

}  // namespace kiln::kernels
