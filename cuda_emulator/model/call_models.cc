// Copy, memset, GEMM, convolution, FFT, scal and solver models; see
// call_models.h.
#include "cuda_emulator/model/call_models.h"

#include <algorithm>
#include <cmath>

#include "cuda_emulator/model/h100_figures.h"

namespace kiln::emu::model {

using namespace h100;  // NOLINT: the figures read as in the documentation

double TransferSeconds(TransferKind kind, uint64_t bytes) {
  double b = static_cast<double>(bytes);
  switch (kind) {
    case TransferKind::kHostToDevice:
    case TransferKind::kDeviceToHost:
      return kTransferFixedSeconds + b / kPcieBytesPerSecond;
    case TransferKind::kDeviceToDevice:
      return kTransferFixedSeconds + 2 * b / kDramBytesPerSecond;
    case TransferKind::kMemset:
      return kTransferFixedSeconds + b / kDramBytesPerSecond;
  }
  return kTransferFixedSeconds;
}

namespace {

double PeakFlops(GemmMath math) {
  switch (math) {
    case GemmMath::kFp32: return kFp32Flops;
    case GemmMath::kTf32Tensor: return kTf32TensorFlops;
    case GemmMath::kFp16Tensor: return kFp16TensorFlops;
    case GemmMath::kFp64Tensor: return kFp64TensorFlops;
    case GemmMath::kInt8Tensor: return kInt8TensorOps;
    case GemmMath::kFp8Tensor: return kFp8TensorFlops;
  }
  return kFp32Flops;
}

uint32_t CElementBytes(const GemmShape& s) { return s.c_element_bytes ? s.c_element_bytes : s.element_bytes; }

// Real flops of one multiply-add: 2, or 8 for complex elements (4 real
// multiplies and 4 adds, as cuBLAS' Cgemm counts them).
double FlopsPerMultiplyAdd(const GemmShape& s) { return s.complex ? 8.0 : 2.0; }

// Output tiles of kGemmTile^2 (smaller where m or n is), each split into
// `split` slices of k, in waves over the SMs at the sustained rate; with
// split > 1 the slices' partial tiles go through DRAM and a second launch
// sums them (written s times, read s times, the result written once).
double SplitKSeconds(const GemmShape& s, double peak, int64_t split) {
  auto tiles_of = [](int64_t x) { return double((x + kGemmTile - 1) / kGemmTile); };
  double k_slice = double((s.k + split - 1) / split);
  double tiles = tiles_of(s.m) * tiles_of(s.n) * double(s.batches) * double(split);
  double waves = tiles > 0 ? double(static_cast<uint64_t>((tiles + kSms - 1) / kSms)) : 0.0;
  double tile_flops = FlopsPerMultiplyAdd(s) * double(std::min<int64_t>(s.m, kGemmTile)) *
                      double(std::min<int64_t>(s.n, kGemmTile)) * k_slice;
  double seconds = waves * tile_flops / (peak / kSms * kGemmEfficiency);
  if (split > 1) {
    // Partial sums are kept in the accumulator's type: f32, or f64 for dgemm.
    double partial_bytes =
        double(s.m) * double(s.n) * double(s.batches) * double(std::max<uint32_t>(CElementBytes(s), 4));
    seconds += kLaunchSeconds + double(2 * split + 1) * partial_bytes / kDramBytesPerSecond;
  }
  return seconds;
}

// The fastest of the split-k choices, as a library's heuristic picks one:
// splitting fills the SMs when m x n has fewer tiles than there are SMs.
double BestTiledSeconds(const GemmShape& s, double peak) {
  if (!s.reads_ab) return 0.0;
  double best = SplitKSeconds(s, peak, 1);
  for (int64_t split = 2; split <= kGemmMaxSplitK && s.k / split >= kGemmMinSplitKSlice; split *= 2)
    best = std::min(best, SplitKSeconds(s, peak, split));
  return best;
}

}  // namespace

GemmTime ModelGemm(const GemmShape& s, GemmMath math) {
  const double peak = PeakFlops(math);
  GemmTime t;
  double m = double(s.m), n = double(s.n), k = s.reads_ab ? double(s.k) : 0.0, batches = double(s.batches);
  t.flops = FlopsPerMultiplyAdd(s) * m * n * k * batches;
  t.bytes = batches * (double(CElementBytes(s)) * m * n * (s.reads_c ? 2 : 1) +
                       (s.reads_ab ? double(s.element_bytes) * (m * k + k * n) : 0.0));
  t.memory = t.bytes / kDramBytesPerSecond;
  t.compute = BestTiledSeconds(s, peak);
  t.total = kLaunchSeconds + std::max(t.compute, t.memory);
  t.optimal = kLaunchSeconds + std::max(t.flops / peak, t.memory);
  return t;
}

GemmTime ModelConvolution(const GemmShape& gemm, double bytes, GemmMath math) {
  GemmTime t = ModelGemm(gemm, math);
  t.bytes = bytes;
  t.memory = bytes / kDramBytesPerSecond;
  const double flops_seconds = t.flops / PeakFlops(math);
  t.total = kLaunchSeconds + std::max(t.compute, t.memory);
  t.optimal = kLaunchSeconds + std::max(flops_seconds, t.memory);
  return t;
}

GemmTime ModelFft(const FftShape& s) {
  GemmTime t;
  double points = 1;
  int64_t passes = 0;
  for (int i = 0; i < s.rank; ++i) {
    points *= double(s.lengths[i]);
    // ceil(log_4096(n)) passes for this dimension; a length-1 one is none.
    for (int64_t covered = 1; covered < s.lengths[i]; covered *= kFftPointsPerPass) ++passes;
  }
  // A whole transform that fits one kernel is one pass, whatever its rank.
  if (points <= double(kFftPointsPerPass)) passes = 1;
  passes = std::max<int64_t>(passes, 1);
  double per_transform = points > 1 ? 5 * points * std::log2(points) : 0.0;
  t.flops = per_transform * double(s.batch) * (s.real ? 0.5 : 1.0);
  double data = std::max(s.input_bytes, s.output_bytes);
  t.bytes = s.input_bytes + s.output_bytes + 2 * data * double(passes - 1);
  double peak = s.double_precision ? kFp64Flops : kFp32Flops;
  t.memory = t.bytes / kDramBytesPerSecond;
  t.compute = t.flops / peak;
  t.total = kLaunchSeconds * double(passes) + std::max(t.compute, t.memory);
  t.optimal = kLaunchSeconds + std::max(t.compute, (s.input_bytes + s.output_bytes) / kDramBytesPerSecond);
  return t;
}

GemmTime ModelScal(int64_t elements, double bytes) {
  GemmTime t;
  t.flops = double(elements);
  t.bytes = 2 * bytes;
  t.memory = t.bytes / kDramBytesPerSecond;
  t.total = kLaunchSeconds + t.memory;
  t.optimal = t.total;
  return t;
}

GemmTime ModelSolver(const SolverShape& s, GemmMath math) {
  const double peak = PeakFlops(math);
  const double panels = double(std::max<int64_t>(1, (s.columns + kSolverPanel - 1) / kSolverPanel));
  GemmTime t;
  t.flops = s.flops;
  t.bytes = s.bytes;
  t.memory = s.bytes / kDramBytesPerSecond;
  t.compute = s.flops / (peak * kGemmEfficiency);
  t.total = panels * s.launches_per_panel * kLaunchSeconds + std::max(t.compute, t.memory);
  t.optimal = kLaunchSeconds + std::max(s.flops / peak, t.memory);
  return t;
}

}  // namespace kiln::emu::model
