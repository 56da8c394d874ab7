// kiln's radix sort kernels, built from CUB's block-level primitives
// (BlockRadixSort, BlockExchange, BlockRadixRankMatch, BlockScan) and compiled by nvcc to PTX
// at build time (kernels_lib/CMakeLists.txt). The runtime loads the PTX with
// cuModuleLoadData and launches these kernels with cuLaunchKernel
// (runtime/cuda_radix_sort.cc): CUB's device-level API needs cudart, which
// kiln does not link.
//
// Every sort is a segmented sort of `rows` rows of `n` keys (the sorted
// dimension minor), optionally with one payload operand. Keys are first
// mapped to unsigned "radix bits" whose unsigned order is the comparator's
// order (ToRadix below), and sorted together with their position in the
// row. Keys come back from their radix bits where that mapping is
// invertible (FromRadix), else they are gathered from the operand by
// position (so -0.0 and NaN payloads stay as they were), as payloads of
// any 1, 2, 4 or 8 byte type always are. Radix sorting is stable, as HLO's
// is_stable requires.
//
// Rows of up to 4096 keys are sorted by one block each (BlockRadixSort);
// longer rows by 8-bit LSD passes over all rows at once: histogram per
// tile, exclusive scan per row (digit-major, so a digit's tiles follow each
// other), and a stable scatter ranked by BlockRadixRankMatch, ping-ponging
// (radix bits, position) pairs between two scratch buffers. The last pass
// writes the outputs instead of pairs.
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_radix_rank.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include <cstdint>

namespace {

// Key orders (thunks::RadixKeyOrder).
constexpr int kUnsigned = 0;      // unsigned integers, pred
constexpr int kSigned = 1;        // two's complement integers
constexpr int kFloatTotal = 2;    // TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN
constexpr int kFloatPartial = 3;  // the default float compare: -0 == +0 (NaNs by total order)
constexpr int kFloatNumpy = 4;    // JAX's comparator: -0 == +0, every NaN equal and last

constexpr int kSmallThreads = 128, kSmallItems = 4;   // rows of up to 512 keys
constexpr int kLargeThreads = 256, kLargeItems = 16;  // rows of up to 4096 keys; multi-pass tiles
constexpr int kDigitBits = 8, kDigits = 1 << kDigitBits;

// The unsigned bits whose ascending order is the sort's order.
template <typename UK>
__device__ __forceinline__ UK ToRadix(UK bits, int order, UK inf_bits, int descending) {
  const UK sign = UK(1) << (sizeof(UK) * 8 - 1);
  if (order == kSigned) {
    bits ^= sign;
  } else if (order != kUnsigned) {
    const UK magnitude = bits & UK(~sign);
    if (order != kFloatTotal && magnitude == 0) bits = 0;
    if (order == kFloatNumpy && magnitude > inf_bits) bits = UK(inf_bits + 1);
    bits = (bits & sign) ? UK(~bits) : UK(bits ^ sign);
  }
  return descending ? UK(~bits) : bits;
}

// The key bits back from radix bits, for the orders that keep every bit
// (the others gather the original key).
__device__ __forceinline__ bool Invertible(int order) {
  return order == kUnsigned || order == kSigned || order == kFloatTotal;
}
template <typename UK>
__device__ __forceinline__ UK FromRadix(UK bits, int order, int descending) {
  const UK sign = UK(1) << (sizeof(UK) * 8 - 1);
  if (descending) bits = UK(~bits);
  if (order == kSigned) return UK(bits ^ sign);
  if (order == kFloatTotal) return (bits & sign) ? UK(bits ^ sign) : UK(~bits);
  return bits;
}

template <typename UK>
__device__ __forceinline__ UK LoadRadix(const void* keys, int64_t i, int order, UK inf_bits, int descending) {
  return ToRadix<UK>(static_cast<const UK*>(keys)[i], order, inf_bits, descending);
}

// out[to] = in[from] for elements of `bytes` bytes (0: no operand).
__device__ __forceinline__ void CopyElement(void* out, int64_t to, const void* in, int64_t from, int bytes) {
  switch (bytes) {
    case 1: static_cast<uint8_t*>(out)[to] = static_cast<const uint8_t*>(in)[from]; break;
    case 2: static_cast<uint16_t*>(out)[to] = static_cast<const uint16_t*>(in)[from]; break;
    case 4: static_cast<uint32_t*>(out)[to] = static_cast<const uint32_t*>(in)[from]; break;
    case 8: static_cast<uint64_t*>(out)[to] = static_cast<const uint64_t*>(in)[from]; break;
    default: break;
  }
}

// The operands and results of one sort, as the kernels receive them.
struct SortOperands {
  const void* keys_in;
  void* keys_out;
  const void* values_in;  // null: keys only
  void* values_out;
  int value_bytes;
  int order;       // kUnsigned ... kFloatNumpy
  int descending;  // the radix bits are complemented
};

__device__ __forceinline__ void GatherOutput(const SortOperands& s, int key_bytes, int64_t row_base, int64_t to,
                                             uint32_t from) {
  CopyElement(s.keys_out, row_base + to, s.keys_in, row_base + from, key_bytes);
  if (s.values_in) CopyElement(s.values_out, row_base + to, s.values_in, row_base + from, s.value_bytes);
}

// One block sorts one row of n <= THREADS * ITEMS keys. Positions past n
// get the largest radix bits: they sort after every key (stable: the same
// bits as a real key, but later positions).
template <typename UK, int THREADS, int ITEMS>
__device__ __forceinline__ void TileSort(SortOperands s, int n, UK inf_bits) {
  const int order = s.order, descending = s.descending;
  using Sort = cub::BlockRadixSort<UK, THREADS, ITEMS, uint32_t>;
  using Exchange = cub::BlockExchange<UK, THREADS, ITEMS>;
  __shared__ union {
    typename Sort::TempStorage sort;
    typename Exchange::TempStorage exchange;
  } storage;
  const int64_t row_base = static_cast<int64_t>(blockIdx.x) * n;
  // Coalesced striped loads, then blocked (thread t holds keys t * ITEMS
  // on): the order BlockRadixSort keeps stable.
  UK keys[ITEMS];
  uint32_t positions[ITEMS];
  for (int j = 0; j < ITEMS; ++j) {
    const int i = j * THREADS + threadIdx.x;
    keys[j] = i < n ? LoadRadix<UK>(s.keys_in, row_base + i, order, inf_bits, descending) : UK(~UK(0));
  }
  Exchange(storage.exchange).StripedToBlocked(keys);
  for (int j = 0; j < ITEMS; ++j) positions[j] = threadIdx.x * ITEMS + j;
  __syncthreads();  // the exchange's storage becomes the sort's
  Sort(storage.sort).SortBlockedToStriped(keys, positions);
  const bool invertible = Invertible(order);
  for (int j = 0; j < ITEMS; ++j) {
    const int rank = j * THREADS + threadIdx.x;
    if (rank >= n) continue;
    if (invertible) {
      static_cast<UK*>(s.keys_out)[row_base + rank] = FromRadix<UK>(keys[j], order, descending);
      if (s.values_in) CopyElement(s.values_out, row_base + rank, s.values_in, row_base + positions[j], s.value_bytes);
    } else {
      GatherOutput(s, sizeof(UK), row_base, rank, positions[j]);
    }
  }
}

// Pass 0 of a long sort: (radix bits, position) pairs of every key.
template <typename UK>
__device__ __forceinline__ void Prepare(const void* keys, UK* radix, uint32_t* positions, int64_t count, int n,
                                        int order, UK inf_bits, int descending) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    radix[i] = LoadRadix<UK>(keys, i, order, inf_bits, descending);
    positions[i] = static_cast<uint32_t>(i % n);
  }
}

// Digit counts of one tile (block b: row b / tiles, tile b % tiles), to
// counts[(row * kDigits + digit) * tiles + tile].
template <typename UK>
__device__ __forceinline__ void Histogram(const UK* radix, uint32_t* counts, int n, int tiles, int shift) {
  __shared__ uint32_t bins[kDigits];
  const int row = blockIdx.x / tiles, tile = blockIdx.x % tiles;
  for (int d = threadIdx.x; d < kDigits; d += blockDim.x) bins[d] = 0;
  __syncthreads();
  const int64_t row_base = static_cast<int64_t>(row) * n;
  const int begin = tile * kLargeThreads * kLargeItems;
  for (int j = 0; j < kLargeItems; ++j) {
    const int i = begin + j * kLargeThreads + threadIdx.x;
    if (i < n) atomicAdd(&bins[(radix[row_base + i] >> shift) & (kDigits - 1)], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < kDigits; d += blockDim.x)
    counts[(static_cast<int64_t>(row) * kDigits + d) * tiles + tile] = bins[d];
}

// The running total BlockScan adds to each chunk of a row's counts.
struct RunningPrefix {
  uint32_t total;
  __device__ uint32_t operator()(uint32_t chunk_sum) {
    const uint32_t before = total;
    total += chunk_sum;
    return before;
  }
};

// Exclusive sum of one row's kDigits * tiles counts, in place (block = row).
__device__ __forceinline__ void ScanCounts(uint32_t* counts, int tiles) {
  using Scan = cub::BlockScan<uint32_t, kLargeThreads>;
  __shared__ typename Scan::TempStorage storage;
  const int64_t length = static_cast<int64_t>(kDigits) * tiles;
  uint32_t* row = counts + blockIdx.x * length;
  RunningPrefix prefix{0};
  for (int64_t begin = 0; begin < length; begin += kLargeThreads) {
    const int64_t i = begin + threadIdx.x;
    uint32_t v = i < length ? row[i] : 0;
    Scan(storage).ExclusiveSum(v, v, prefix);
    if (i < length) row[i] = v;
    __syncthreads();  // the storage is reused by the next chunk
  }
}

template <typename UK>
struct DigitAt {
  int shift;
  __device__ __forceinline__ uint32_t Digit(UK key) const { return static_cast<uint32_t>(key >> shift) & (kDigits - 1); }
};

// One stable scatter pass over a tile (block as in Histogram): each key's
// destination is its digit's offset for the tile (the scanned counts) plus
// its rank among the tile's keys of that digit. The last pass writes the
// gathered outputs instead of the pairs.
template <typename UK>
__device__ __forceinline__ void Scatter(const UK* radix_in, const uint32_t* positions_in, UK* radix_out,
                                        uint32_t* positions_out, const uint32_t* offsets, int n, int tiles,
                                        int shift, int last, SortOperands s) {
  // The match.any ranking: its counters are per warp, not per thread (8-bit
  // digits would need 128 KiB of per-thread counters).
  using Rank = cub::BlockRadixRankMatch<kLargeThreads, kDigitBits, false>;
  __shared__ typename Rank::TempStorage storage;
  __shared__ uint32_t digit_begin[kDigits];  // in the row's output
  __shared__ uint32_t tile_begin[kDigits];   // in the tile's ranking
  const int row = blockIdx.x / tiles, tile = blockIdx.x % tiles;
  const int64_t row_base = static_cast<int64_t>(row) * n;
  const int begin = tile * kLargeThreads * kLargeItems;
  for (int d = threadIdx.x; d < kDigits; d += blockDim.x)
    digit_begin[d] = offsets[(static_cast<int64_t>(row) * kDigits + d) * tiles + tile];
  // Warp-striped: warp w holds keys [w * 32 * kLargeItems, ...), item j of
  // lane l the key 32 j + l of those, the order in which BlockRadixRankMatch
  // ranks stably.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_begin = begin + warp * 32 * kLargeItems + lane;
  UK keys[kLargeItems];
  uint32_t positions[kLargeItems];
  for (int j = 0; j < kLargeItems; ++j) {
    const int i = warp_begin + 32 * j;
    keys[j] = i < n ? radix_in[row_base + i] : UK(~UK(0));
    positions[j] = i < n ? positions_in[row_base + i] : 0;
  }
  int ranks[kLargeItems];
  int exclusive_prefix[1];
  Rank(storage).RankKeys(keys, ranks, DigitAt<UK>{shift}, exclusive_prefix);
  tile_begin[threadIdx.x] = exclusive_prefix[0];  // kLargeThreads == kDigits: thread t holds digit t
  __syncthreads();
  for (int j = 0; j < kLargeItems; ++j) {
    if (warp_begin + 32 * j >= n) continue;
    const uint32_t d = DigitAt<UK>{shift}.Digit(keys[j]);
    const int64_t to = digit_begin[d] + (ranks[j] - tile_begin[d]);
    if (last && Invertible(s.order)) {
      static_cast<UK*>(s.keys_out)[row_base + to] = FromRadix<UK>(keys[j], s.order, s.descending);
      if (s.values_in) CopyElement(s.values_out, row_base + to, s.values_in, row_base + positions[j], s.value_bytes);
    } else if (last) {
      GatherOutput(s, sizeof(UK), row_base, to, positions[j]);
    } else {
      radix_out[row_base + to] = keys[j];
      positions_out[row_base + to] = positions[j];
    }
  }
}

static_assert(kLargeThreads == kDigits, "Scatter reads one digit's tile prefix per thread");

}  // namespace

// The entry points, one set per key width (kiln_radix_*_<bits>).
// Operands are passed one scalar each (no aggregate kernel parameters).
#define KILN_SORT_OPERAND_PARAMS                                                                   \
  const void *keys_in, void *keys_out, const void *values_in, void *values_out, int value_bytes, \
      int order, int descending
#define KILN_SORT_OPERANDS \
  SortOperands { keys_in, keys_out, values_in, values_out, value_bytes, order, descending }

// The entry points, one set per key width (kiln_radix_*_<bits>).
#define KILN_RADIX_KERNELS(BITS, UK)                                                                     \
  extern "C" __global__ void __launch_bounds__(kSmallThreads)                                          \
      kiln_radix_tile_small_##BITS(KILN_SORT_OPERAND_PARAMS, int n, uint64_t inf_bits) {               \
    TileSort<UK, kSmallThreads, kSmallItems>(KILN_SORT_OPERANDS, n, UK(inf_bits));                     \
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(kLargeThreads)                                          \
      kiln_radix_tile_large_##BITS(KILN_SORT_OPERAND_PARAMS, int n, uint64_t inf_bits) {               \
    TileSort<UK, kLargeThreads, kLargeItems>(KILN_SORT_OPERANDS, n, UK(inf_bits));                     \
  }                                                                                                     \
  extern "C" __global__ void kiln_radix_prepare_##BITS(const void* keys, UK* radix, uint32_t* positions, \
                                                       int64_t count, int n, int order, uint64_t inf_bits, \
                                                       int descending) {                                \
    Prepare<UK>(keys, radix, positions, count, n, order, UK(inf_bits), descending);                    \
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(kLargeThreads)                                          \
      kiln_radix_histogram_##BITS(const UK* radix, uint32_t* counts, int n, int tiles, int shift) {    \
    Histogram<UK>(radix, counts, n, tiles, shift);                                                      \
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(kLargeThreads) kiln_radix_scatter_##BITS(               \
      const UK* radix_in, const uint32_t* positions_in, UK* radix_out, uint32_t* positions_out,        \
      const uint32_t* offsets, int n, int tiles, int shift, int last, KILN_SORT_OPERAND_PARAMS) {      \
    Scatter<UK>(radix_in, positions_in, radix_out, positions_out, offsets, n, tiles, shift, last,      \
                KILN_SORT_OPERANDS);                                                                    \
  }

KILN_RADIX_KERNELS(8, uint8_t)
KILN_RADIX_KERNELS(16, uint16_t)
KILN_RADIX_KERNELS(32, uint32_t)
KILN_RADIX_KERNELS(64, uint64_t)

extern "C" __global__ void __launch_bounds__(kLargeThreads) kiln_radix_scan(uint32_t* counts, int tiles) {
  ScanCounts(counts, tiles);
}
