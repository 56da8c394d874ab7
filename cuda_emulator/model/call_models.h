// Timing models of the device work that is not an emulated kernel: copies,
// memsets and the library doubles' GEMMs, convolutions, FFTs, scal,
// factorizations and triangular solves (docs/gpu_timing_model.md). Like
// the launch model, pure functions of what the call does, with the figures
// of h100_figures.h.
#pragma once

#include <cstdint>

namespace kiln::emu::model {

enum class TransferKind : uint8_t { kHostToDevice, kDeviceToHost, kDeviceToDevice, kMemset };

// A copy or memset of `bytes`: a fixed cost plus PCIe for host <-> device,
// DRAM read + write for device -> device and DRAM writes for a memset.
double TransferSeconds(TransferKind kind, uint64_t bytes);

// The datapath a GEMM runs on, from its element type and math mode.
enum class GemmMath : uint8_t {
  kFp32,        // sgemm, default or pedantic math: FP32 CUDA cores
  kTf32Tensor,  // sgemm with CUBLAS_TF32_TENSOR_OP_MATH
  kFp16Tensor,  // f16/bf16 operands, or sgemm with the legacy CUBLAS_TENSOR_OP_MATH
  kFp64Tensor,  // dgemm: FP64 tensor cores
  kInt8Tensor,  // s8 x s8 -> s32 (CUBLAS_COMPUTE_32I): INT8 tensor cores, "flops" being integer ops
  kFp8Tensor,   // f8e4m3 / f8e5m2 operands (cuBLASLt): FP8 tensor cores
};

struct GemmShape {
  int64_t m = 0, n = 0, k = 0, batches = 1;
  uint32_t element_bytes = 4;  // of A and B
  bool reads_ab = true;  // k > 0 and alpha != 0
  bool reads_c = false;  // beta != 0
  uint32_t c_element_bytes = 0;  // of C; 0: element_bytes
  bool complex = false;  // c64/c128: a multiply-add is 8 real flops, not 2
};

struct GemmTime {
  double flops = 0, bytes = 0;
  double compute = 0;  // 128x128 output tiles (smaller if m or n is) in waves over the SMs, at the
                       // sustained rate, with the best split of k (1 to 16 slices of >= 256)
  double memory = 0;   // operands read and C written once, at the DRAM bandwidth
  double total = 0;    // launch + max(compute, memory)
  double optimal = 0;  // launch + max(flops at the peak, memory)
};

GemmTime ModelGemm(const GemmShape& shape, GemmMath math);

// A cuDNN convolution as the implicit GEMM it runs (`gemm`: one batch per
// group; the double derives m, n, k per direction), whose DRAM traffic is
// its tensors (`bytes`: x, w and y once, plus the output when beta != 0)
// rather than the GEMM's unrolled operands.
GemmTime ModelConvolution(const GemmShape& gemm, double bytes, GemmMath math);

// A cuFFT execution: `batch` transforms of prod(lengths) points.
struct FftShape {
  int64_t lengths[3] = {1, 1, 1};
  int rank = 1;
  int64_t batch = 1;
  bool real = false;              // R2C / C2R: half the work of a complex transform
  bool double_precision = false;  // Z2Z / D2Z / Z2D: the FP64 cores
  double input_bytes = 0, output_bytes = 0;
};

// flops = 5 N log2 N per complex transform of N points (half for the real
// ones) x batch, on the FP32 or FP64 cores; one pass over DRAM per
// kFftPointsPerPass factor of each dimension (one in all when a whole
// transform has at most that many points), each pass a launch, reading and
// writing the data (the first reads the input, the last writes the
// output). The GemmTime fields have the same meaning.
GemmTime ModelFft(const FftShape& shape);

// cuBLAS scal of `bytes` of data in place: read and written once.
GemmTime ModelScal(int64_t elements, double bytes);

// A library Cholesky factorization or triangular solve of one matrix
// (potrf, trsm): blocked over panels of h100::kSolverPanel columns, each
// panel a few dependent launches (the diagonal block, then the update of
// what follows it as GEMMs). Small matrices thus cost their launches, large
// ones their flops at the sustained GEMM rate of `math`.
struct SolverShape {
  double flops = 0;  // LAPACK's count: n^3/3 (potrf), k^2 per right-hand side (trsm); 4x for complex
  double bytes = 0;  // the matrices read and written once
  int64_t columns = 0;  // of the triangle: n (potrf), k (trsm)
  double launches_per_panel = 1;
};

GemmTime ModelSolver(const SolverShape& shape, GemmMath math);

}  // namespace kiln::emu::model
