// The H100 SXM figures the timing model is built on, in one place. Every
// figure is an input of the model, not a measurement kiln made: each one
// says where it comes from, and docs/gpu_timing_model.md discusses them.
//
// Sources, by short name:
//   [whitepaper] NVIDIA H100 Tensor Core GPU Architecture whitepaper and the
//                H100 SXM datasheet (peak rates, SM count, L2 size, PCIe).
//   [guide]      CUDA C++ Programming Guide: the compute capability 9.0
//                columns of "Features and Technical Specifications" and
//                "Arithmetic Instructions" (throughput per clock per SM).
//   [luo]        Luo et al., "Benchmarking and Dissecting the Nvidia Hopper
//                GPU Architecture" (2024) / "Dissecting the NVIDIA Hopper
//                Architecture through Microbenchmarking and Multiple Level
//                Analysis" (2025): latencies on Hopper.
//   [cnc]        Chips and Cheese, "Nvidia's H100: Funny L2, and Tons of
//                Bandwidth" (2023): clock under load, cache latencies and
//                bandwidths.
//   [peers]      ../shared/notes/peers.md: figures measured on the H100s lent
//                to this project.
#pragma once

#include <cstdint>

namespace kiln::emu::model::h100 {

// ---- The chip -----------------------------------------------------------
// SM clock: 1.755 GHz, the boost clock kiln models ([cnc] reports 1755 MHz
// as the H100's maximum core boost clock under their load; the SXM part's
// absolute maximum is 1.98 GHz [whitepaper], which power limits rarely
// sustain). Every cycle count below converts to time with it.
inline constexpr double kSmClockHz = 1.755e9;
inline constexpr uint32_t kSms = 132;             // [whitepaper] H100 SXM5
inline constexpr uint32_t kSchedulersPerSm = 4;  // one warp instruction per clock each [whitepaper]

// ---- Residency per SM [guide, compute capability 9.0] ----------------------
inline constexpr uint32_t kMaxThreadsPerSm = 2048;
inline constexpr uint32_t kMaxBlocksPerSm = 32;
inline constexpr uint32_t kRegistersPerSm = 65536;
inline constexpr uint32_t kMaxRegistersPerThread = 255;
// Registers are allocated per warp in units of 256 (8 per thread).
inline constexpr uint32_t kRegisterAllocationUnit = 256;
inline constexpr uint32_t kSharedBytesPerSm = 228 * 1024;
inline constexpr uint32_t kSharedReservedPerBlock = 1024;  // the driver's per-block reservation

// ---- Pipes: results (lanes) per clock per SM [guide, 9.0 column] --------------
inline constexpr double kFp32LanesPerClock = 128;
inline constexpr double kFp64LanesPerClock = 64;
// 16-bit float: 256 results per clock, two per lane of an f16x2/bf16x2
// instruction, so 128 instruction lanes per clock.
inline constexpr double kFp16LanesPerClock = 128;
inline constexpr double kIntegerLanesPerClock = 64;  // 32-bit integer add, multiply, compare, logic
inline constexpr double kSpecialLanesPerClock = 16;  // MUFU: rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh
// Load/store units: one warp-wide memory instruction per clock per SM (32
// LD/ST lanes, 8 per SM sub-partition [whitepaper SM diagram]).
inline constexpr double kMemoryLanesPerClock = 32;
// L1/shared data path: 128 bytes per clock per SM (32 banks x 4 bytes),
// i.e. one shared-memory wavefront or four 32-byte global sectors per clock
// (132 SMs x 128 B x 1.98 GHz = the whitepaper's 33 TB/s).
inline constexpr double kSharedWavefrontsPerClock = 1;
inline constexpr double kL1SectorsPerClock = 4;

// ---- Memory system ----------------------------------------------------------------
// DRAM: the device-to-device copy bandwidth measured on the lent H100
// (bytes read + written) [peers]; the datasheet peak is 3.35 TB/s.
inline constexpr double kDramBytesPerSecond = 3.0e12;
// L2: 50 MB [whitepaper]. Bandwidth: an assumed 5.5 TB/s, about 1.8x the
// DRAM copy bandwidth, in the range of published H100 L2 bandwidth
// measurements [cnc] (which vary with the L2 partition holding the data).
inline constexpr double kL2Bytes = 50.0 * 1024 * 1024;
inline constexpr double kL2BytesPerSecond = 5.5e12;
inline constexpr double kSectorBytes = 32;
// Global atomics execute at the L2; atomics on one sector are assumed to
// serialize there at one per clock.
inline constexpr double kAtomicsPerSectorPerClock = 1;

// ---- Latencies, in SM cycles (dependent-issue latencies) ------------------------
// ALU (fp32, fp16/bf16, 32-bit integer): 4 cycles, unchanged since Volta
// and measured again on Hopper [luo].
inline constexpr uint32_t kAluLatency = 4;
// 64-bit integer arithmetic: two dependent 32-bit instructions (carry).
inline constexpr uint32_t kWideIntegerLatency = 2 * kAluLatency;
// FP64 (DFMA on the FP64 pipe): about 8 cycles [luo].
inline constexpr uint32_t kFp64Latency = 8;
// MUFU (special functions): about 20 cycles [luo; Volta/Turing studies
// measured 18-23].
inline constexpr uint32_t kSpecialLatency = 20;
// Warp-synchronous instructions (shfl, vote, redux): assumed 24 cycles, of
// the order of a shared-memory access (shuffles use the same crossbar).
inline constexpr uint32_t kWarpSyncLatency = 24;
// Shared memory load: about 30 cycles without conflicts [luo]; each extra
// wavefront of a conflicted request adds one cycle.
inline constexpr uint32_t kSharedLatency = 30;
// Global load hitting L1: about 33 cycles [luo, cnc].
inline constexpr uint32_t kL1HitLatency = 33;
// Global load hitting L2: about 260 cycles [luo: ~261 on Hopper; cnc].
inline constexpr uint32_t kL2HitLatency = 260;
// Global load missing L2 (DRAM): about 480 cycles, ~270 ns at 1.755 GHz
// [luo: pointer chasing past L2 on Hopper measures roughly 470-480].
inline constexpr uint32_t kDramLatency = 480;
// Parameters live in the constant bank, an instruction operand.
inline constexpr uint32_t kParamLatency = kAluLatency;
// From the last warp's arrival at bar.sync to the release: assumed 20.
inline constexpr uint32_t kBarrierLatency = 20;

// ---- Fixed costs ------------------------------------------------------------------
// A kernel launch as events on its stream see it (command processing, block
// dispatch, completion): assumed 2 us, the order of the empty-kernel times
// that event timing reports on recent NVIDIA GPUs (2-3 us).
inline constexpr double kLaunchSeconds = 2.0e-6;
// A copy or memset: the same fixed cost.
inline constexpr double kTransferFixedSeconds = kLaunchSeconds;
// Host <-> device: PCIe Gen5 x16, 64 GB/s per direction (the datasheet's
// 128 GB/s is both directions) [whitepaper].
inline constexpr double kPcieBytesPerSecond = 64e9;

// ---- Library GEMMs (dense, no sparsity) [whitepaper, SXM5] ----------------------
inline constexpr double kFp32Flops = 66.9e12;         // FP32 on the CUDA cores
inline constexpr double kTf32TensorFlops = 494.7e12;  // TF32 tensor cores
inline constexpr double kFp16TensorFlops = 989.4e12;  // FP16/BF16 tensor cores
inline constexpr double kFp64TensorFlops = 66.9e12;   // FP64 tensor cores (DMMA)
inline constexpr double kInt8TensorOps = 1978.9e12;   // INT8 tensor cores (IMMA), ops/s
inline constexpr double kFp8TensorFlops = 1978.9e12;  // FP8 (E4M3/E5M2) tensor cores
// Sustained fraction of the tensor peak on a large GEMM: 798 / 989 TFLOP/s,
// the bf16 8192^3 matmul measured on the lent H100 [peers].
inline constexpr double kGemmEfficiency = 0.8;
// Output tile per thread block of the modeled GEMM (one block per SM at a
// time): 128x128, the common cuBLAS/CUTLASS tile on Hopper.
inline constexpr uint32_t kGemmTile = 128;
// Split-k: the model may cut k into up to 16 slices of at least 256 (a
// power of two), as cuBLAS's heuristics do for GEMMs with fewer output
// tiles than SMs. Without it a 512x1024x2816 sgemm (32 tiles on 132 SMs)
// was modeled at 229.6 us against 77 us measured on the lent H100
// (docs/gpu_timing_model.md, "Measured on an H100").
inline constexpr int64_t kGemmMaxSplitK = 16;
inline constexpr int64_t kGemmMinSplitKSlice = 256;

// ---- Library FFTs -----------------------------------------------------------------
// FP64 on the CUDA cores (cuFFT's double precision does not use DMMA)
// [whitepaper, SXM5].
inline constexpr double kFp64Flops = 33.5e12;
// Points of one dimension a cuFFT kernel transforms in one pass through
// DRAM (the factorization stays in shared memory and registers): assumed
// 4096, not measured; longer dimensions take one more pass per 4096-fold
// factor.
inline constexpr int64_t kFftPointsPerPass = 4096;

// ---- Library factorizations and triangular solves (assumed) ---------------------
// potrf and trsm are blocked over panels of 256 columns (the order of the
// block sizes of LAPACK-style GPU solvers); each panel is a few dependent
// launches: potrf factors the diagonal block, solves the panel below it and
// updates the trailing matrix (3), trsm solves the diagonal block and
// updates the remaining right-hand sides (2). The updates are GEMMs at
// kGemmEfficiency of the peak of the type's datapath.
inline constexpr int64_t kSolverPanel = 256;
inline constexpr double kPotrfLaunchesPerPanel = 3;
inline constexpr double kTrsmLaunchesPerPanel = 2;
// getrf, geqrf and orgqr likewise: the panel's factorization (or reflector
// block), its application to the trailing columns, and the row swaps or the
// triangular factor of the block reflector (3).
inline constexpr double kLuQrLaunchesPerPanel = 3;

}  // namespace kiln::emu::model::h100
