// RadixSortThunk on CUDA; see cuda_radix_sort.h. The kernels' parameters
// and tile sizes are those of kernels_lib/cub_sort/radix_sort_kernels.cu.
#include "runtime/cuda_radix_sort.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels_lib/radix_sort_image.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

constexpr int64_t kSmallTile = 128 * 4, kSmallThreads = 128;
constexpr int64_t kLargeTile = 256 * 16, kLargeThreads = 256;
constexpr int64_t kDigits = 256;
constexpr int kKeyBits[] = {8, 16, 32, 64};
// The kernels take the key order as this number (kUnsigned ... kFloatNumpy).
static_assert(static_cast<int>(th::RadixKeyOrder::kUnsigned) == 0 &&
              static_cast<int>(th::RadixKeyOrder::kSigned) == 1 &&
              static_cast<int>(th::RadixKeyOrder::kFloatTotal) == 2 &&
              static_cast<int>(th::RadixKeyOrder::kFloatPartial) == 3 &&
              static_cast<int>(th::RadixKeyOrder::kFloatNumpy) == 4);

// The bits of +infinity of a float key type (larger magnitudes are NaNs).
uint64_t InfinityBits(ElementType t) {
  switch (t) {
    case ElementType::kF16: return 0x7C00;
    case ElementType::kBF16: return 0x7F80;
    case ElementType::kF32: return 0x7F800000;
    case ElementType::kF64: return 0x7FF0000000000000;
    default: return 0;
  }
}

uint64_t AlignUp(uint64_t v) { return (v + 255) / 256 * 256; }

// A kernel's parameters: each value is kept here and pointed at.
class Params {
 public:
  template <typename T>
  Params& Add(T v) {
    static_assert(sizeof(T) <= 8);
    values_.emplace_back();
    std::memcpy(&values_.back(), &v, sizeof(T));
    return *this;
  }
  std::vector<void*> Pointers() {
    std::vector<void*> p;
    for (uint64_t& v : values_) p.push_back(&v);
    return p;
  }

 private:
  std::vector<uint64_t> values_;
};

struct Launcher {
  CudaExecutionContext& ctx;
  const CudaModule& module;

  Status Launch(const std::string& name, int64_t grid, int64_t block, Params& params) const {
    CUfunction f = module.Find(name);
    if (!f) return Error("radix sort kernel '" + name + "' was not resolved");
    if (grid > 0x7fffffff) return Error("radix sort: grid of " + std::to_string(grid) + " blocks is too large");
    std::vector<void*> pointers = params.Pointers();
    const CudaDriver& d = ctx.backend->driver();
    return d.Check(d.cuLaunchKernel(f, static_cast<unsigned>(grid), 1, 1, static_cast<unsigned>(block), 1, 1, 0,
                                    ctx.stream, pointers.data(), nullptr),
                   "cuLaunchKernel of '" + name + "'");
  }
};

// The operands every sorting kernel writes its outputs from (keys_in,
// keys_out, values_in, values_out, value_bytes, order, descending).
struct Operands {
  CUdeviceptr keys, keys_out, values, values_out;
  int value_bytes, order, descending;
  void AddTo(Params& p) const {
    p.Add(keys).Add(keys_out).Add(values).Add(values_out).Add(value_bytes).Add(order).Add(descending);
  }
};

}  // namespace

std::set<std::string> RadixSortKernelNames() {
  std::set<std::string> names = {"kiln_radix_scan"};
  for (int bits : kKeyBits)
    for (const char* stem : {"tile_small", "tile_large", "prepare", "histogram", "scatter"})
      names.insert("kiln_radix_" + std::string(stem) + "_" + std::to_string(bits));
  return names;
}

Status RunRadixSort(const th::RadixSortThunk& s, CudaExecutionContext& ctx) {
  const int64_t n = s.row_length, count = s.rows * s.row_length;
  if (count == 0) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(const CudaModule* module, ctx.backend->RadixSortModule());
  Launcher launcher{ctx, *module};
  const int key_bytes = static_cast<int>(StorageBytes(s.key_type));
  const std::string bits = std::to_string(8 * key_bytes);
  auto address = [&](const th::BufferSlice& b) {
    return ctx.allocation_base[b.allocation] + static_cast<CUdeviceptr>(b.offset);
  };
  const CUdeviceptr keys = address(s.keys), keys_out = address(s.keys_out);
  const CUdeviceptr values = s.values ? address(*s.values) : 0;
  const CUdeviceptr values_out = s.values_out ? address(*s.values_out) : 0;
  const int value_bytes = s.values ? static_cast<int>(StorageBytes(s.value_type)) : 0;
  const int order = static_cast<int>(s.order), descending = s.descending ? 1 : 0;
  const Operands operands{keys, keys_out, values, values_out, value_bytes, order, descending};
  const uint64_t inf_bits = InfinityBits(s.key_type);
  const int n32 = static_cast<int>(n);

  if (n <= kLargeTile) {
    const bool small = n <= kSmallTile;
    Params p;
    operands.AddTo(p);
    p.Add(n32).Add(inf_bits);
    return launcher.Launch("kiln_radix_tile_" + std::string(small ? "small_" : "large_") + bits, s.rows,
                           small ? kSmallThreads : kLargeThreads, p);
  }

  // Long rows: (radix bits, position) pairs ping-pong between two halves of
  // the scratch, with the digit counts after them.
  const int64_t tiles = (n + kLargeTile - 1) / kLargeTile;
  const uint64_t radix_bytes = AlignUp(static_cast<uint64_t>(count) * key_bytes);
  const uint64_t position_bytes = AlignUp(static_cast<uint64_t>(count) * 4);
  const uint64_t counts_bytes = AlignUp(static_cast<uint64_t>(s.rows * kDigits * tiles) * 4);
  KILN_ASSIGN_OR_RETURN(CUdeviceptr scratch, ctx.backend->LibraryScratch(ctx.lane,
                                                                         2 * (radix_bytes + position_bytes) +
                                                                             counts_bytes));
  const CUdeviceptr radix[2] = {scratch, scratch + radix_bytes};
  const CUdeviceptr positions[2] = {scratch + 2 * radix_bytes, scratch + 2 * radix_bytes + position_bytes};
  const CUdeviceptr counts = scratch + 2 * (radix_bytes + position_bytes);

  Params prepare;
  prepare.Add(keys).Add(radix[0]).Add(positions[0]).Add(count).Add(n32).Add(order).Add(inf_bits).Add(descending);
  KILN_RETURN_IF_ERROR(launcher.Launch("kiln_radix_prepare_" + bits,
                                       std::min<int64_t>((count + 255) / 256, 4096), 256, prepare));
  const int passes = key_bytes;  // 8 bits each
  const int tiles32 = static_cast<int>(tiles);
  for (int pass = 0; pass < passes; ++pass) {
    const int in = pass % 2, out = 1 - in, shift = 8 * pass, last = pass == passes - 1 ? 1 : 0;
    Params histogram;
    histogram.Add(radix[in]).Add(counts).Add(n32).Add(tiles32).Add(shift);
    KILN_RETURN_IF_ERROR(launcher.Launch("kiln_radix_histogram_" + bits, s.rows * tiles, kLargeThreads, histogram));
    Params scan;
    scan.Add(counts).Add(tiles32);
    KILN_RETURN_IF_ERROR(launcher.Launch("kiln_radix_scan", s.rows, kLargeThreads, scan));
    Params scatter;
    scatter.Add(radix[in]).Add(positions[in]).Add(radix[out]).Add(positions[out]).Add(counts);
    scatter.Add(n32).Add(tiles32).Add(shift).Add(last);
    operands.AddTo(scatter);
    KILN_RETURN_IF_ERROR(launcher.Launch("kiln_radix_scatter_" + bits, s.rows * tiles, kLargeThreads, scatter));
  }
  return Status::Ok();
}

}  // namespace kiln::runtime
