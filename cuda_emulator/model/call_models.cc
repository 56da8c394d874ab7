// Copy, memset and GEMM models; see call_models.h.
#include "cuda_emulator/model/call_models.h"

#include <algorithm>

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

GemmTime ModelGemm(const GemmShape& s, GemmMath math) {
  double peak = kFp32Flops;
  switch (math) {
    case GemmMath::kFp32: peak = kFp32Flops; break;
    case GemmMath::kTf32Tensor: peak = kTf32TensorFlops; break;
    case GemmMath::kFp16Tensor: peak = kFp16TensorFlops; break;
    case GemmMath::kFp64Tensor: peak = kFp64TensorFlops; break;
  }
  GemmTime t;
  double m = double(s.m), n = double(s.n), k = s.reads_ab ? double(s.k) : 0.0, batches = double(s.batches);
  t.flops = 2 * m * n * k * batches;
  double elements = m * n * (s.reads_c ? 2 : 1) + (s.reads_ab ? m * k + k * n : 0.0);
  t.bytes = double(s.element_bytes) * batches * elements;
  t.memory = t.bytes / kDramBytesPerSecond;
  auto tiles_of = [](int64_t x) { return double((x + kGemmTile - 1) / kGemmTile); };
  double tiles = tiles_of(s.m) * tiles_of(s.n) * batches;
  double waves = tiles > 0 ? double(static_cast<uint64_t>((tiles + kSms - 1) / kSms)) : 0.0;
  // Edge tiles are full tiles, except that a dimension below the tile
  // gets a tile of its size.
  double tile_flops = 2.0 * double(std::min<int64_t>(s.m, kGemmTile)) * double(std::min<int64_t>(s.n, kGemmTile)) * k;
  double sm_flops = peak / kSms * kGemmEfficiency;
  t.compute = waves * tile_flops / sm_flops;
  t.total = kLaunchSeconds + std::max(t.compute, t.memory);
  t.optimal = kLaunchSeconds + std::max(t.flops / peak, t.memory);
  return t;
}

}  // namespace kiln::emu::model
