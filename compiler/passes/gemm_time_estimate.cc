// GemmSeconds and CopyKernelSeconds: see gemm_time_estimate.h.
#include "compiler/passes/gemm_time_estimate.h"

#include <algorithm>

namespace kiln::passes {
namespace {

double PeakFlops(GemmDatapath datapath, const thunks::RooflineTarget& target) {
  switch (datapath) {
    case GemmDatapath::kFp32: return target.flops_per_second;
    case GemmDatapath::kTf32Tensor: return target.tensor_flops_per_second / 2;
    case GemmDatapath::kHalfTensor: return target.tensor_flops_per_second;
  }
  return target.flops_per_second;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The tile waves of `problem` with k cut into `split` slices: every wave
// takes as long as one tile's slice at the per-SM sustained rate; with
// split > 1 the partial tiles are written, read back and summed by a
// second launch.
double TiledSeconds(const GemmProblem& p, const GpuGemmDevice& d, double peak, int64_t split) {
  const int64_t tiles = CeilDiv(p.m, d.tile) * CeilDiv(p.n, d.tile) * p.batches * split;
  const int64_t waves = CeilDiv(tiles, d.sms);
  const double tile_flops =
      2.0 * double(std::min(p.m, d.tile)) * double(std::min(p.n, d.tile)) * double(CeilDiv(p.k, split));
  double seconds = double(waves) * tile_flops / (peak / double(d.sms) * d.sustained_fraction);
  if (split > 1) {
    const double partials = double(p.batches) * double(p.m) * double(p.n) * 4.0;  // f32 accumulators
    seconds += d.launch_seconds + double(2 * split + 1) * partials / d.roofline.bytes_per_second;
  }
  return seconds;
}

}  // namespace

double GemmSeconds(const GemmProblem& p, const GpuGemmDevice& d) {
  if (p.batches <= 0 || p.m <= 0 || p.n <= 0) return d.launch_seconds;
  const double peak = PeakFlops(p.datapath, d.roofline);
  double compute = 0;
  if (p.k > 0) {
    compute = TiledSeconds(p, d, peak, 1);
    for (int64_t split = 2; split <= d.max_split_k && p.k / split >= d.min_split_k_slice; split *= 2)
      compute = std::min(compute, TiledSeconds(p, d, peak, split));
  }
  const double bytes = double(p.batches) * (double(p.operand_bytes) * double(p.m * p.k + p.k * p.n) +
                                            double(p.output_bytes) * double(p.m * p.n));
  return d.launch_seconds + std::max(compute, bytes / d.roofline.bytes_per_second);
}

double CopyKernelSeconds(int64_t bytes_moved, const GpuGemmDevice& d) {
  return d.launch_seconds + double(bytes_moved) / d.roofline.bytes_per_second;
}

}  // namespace kiln::passes
