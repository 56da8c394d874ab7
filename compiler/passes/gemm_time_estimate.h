// GemmTimeEstimate: how long a tuned GPU GEMM library (cuBLAS) takes for one
// batched [b,m,k] x [b,k,n] call, as the passes that reshape GEMMs see it.
//
// A roofline bound (flops / peak, bytes / bandwidth) says nothing about
// what makes small GEMMs slow on a GPU: the library covers the output with
// fixed-size tiles, one per SM at a time, so a GEMM whose tiles fill only a
// fraction of the SMs, or spill into a partly filled last wave, pays for
// whole waves, and every call pays a launch. The estimate therefore counts
// waves of 128x128 output tiles over the SMs at a sustained fraction of the
// datapath's peak, lets the library split k when that fills the SMs better
// (as cuBLAS' heuristics do, paying for the partial sums' traffic and a
// second launch), and adds a fixed launch cost. It decides, for example,
// whether several small GEMMs run faster as one larger one (DotMerger).
#pragma once

#include <cstdint>

#include "thunks/roofline.h"

namespace kiln::passes {

// The parts of a GPU that shape a library GEMM's time, beside the
// roofline's rates (H100 SXM by default).
struct GpuGemmDevice {
  thunks::RooflineTarget roofline = thunks::CudaRooflineTarget();
  int64_t sms = 132;
  int64_t tile = 128;                // output tile edge a thread block computes
  double sustained_fraction = 0.8;   // of the datapath's peak, in a full wave
  double launch_seconds = 2e-6;      // per kernel launch, as the GPU's event timing sees it
  int64_t max_split_k = 16;
  int64_t min_split_k_slice = 256;   // the library does not split k finer than this
};

// The datapath a GEMM runs on.
enum class GemmDatapath {
  kFp32,         // f32 (and f64) on the CUDA cores
  kTf32Tensor,   // f32 operands rounded to TF32 on the tensor cores: half the bf16 rate
  kHalfTensor,   // bf16/f16 operands on the tensor cores
};

struct GemmProblem {
  int64_t batches = 1, m = 0, n = 0, k = 0;
  int64_t operand_bytes = 4;  // per element of A and B
  int64_t output_bytes = 4;   // per element of C
  GemmDatapath datapath = GemmDatapath::kFp32;
};

// Estimated seconds of one library call computing `problem` on `device`,
// launch included.
double GemmSeconds(const GemmProblem& problem, const GpuGemmDevice& device);

// Estimated seconds of one memory-bound kernel that reads and writes
// `bytes_moved` bytes in all, launch included (a copy or concatenate).
double CopyKernelSeconds(int64_t bytes_moved, const GpuGemmDevice& device);

}  // namespace kiln::passes
