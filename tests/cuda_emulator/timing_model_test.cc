// Calibration of the H100 timing model (docs/gpu_timing_model.md).
//
// First the model as a pure function of synthetic counters: occupancy, each
// throughput term, the latency term, the L2 capacity rule, atomics, the
// optimal time, the GEMM and transfer models. Then small hand-written PTX
// kernels run on the emulator (a coalesced copy, a strided copy, one thread
// looping, a 32x32 shared-memory transpose with and without padding, a
// block reduction), whose modeled times are hand-computed in the comments
// from the figures of model/h100_figures.h:
//   clock f = 1.755 GHz, DRAM 3.0e12 B/s, L2 5.5e12 B/s, 132 SMs, launch 2 us,
//   latencies ALU 4, 64-bit integer 8 (2 issue slots), param 4 (no slot),
//   L1 hit 33, L2 hit 260, DRAM 480, shared 30 (+1 per extra wavefront).
// Last, sampling mode (KILN_EMU_SAMPLE) against full emulation.
// Every expected value is computed by hand here, never by the model's code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda_emulator/exec/block_sample.h"
#include "cuda_emulator/model/call_models.h"
#include "cuda_emulator/model/timing_model.h"
#include "tests/cuda_emulator/emulator_test_util.h"

namespace kiln::emu::testing {
namespace {

using model::Bound;
using model::LaunchTime;
using model::ModelLaunch;

constexpr double kUs = 1e-6;
constexpr double kMiB = 1024.0 * 1024.0;

// Relative closeness for hand-computed times.
#define EXPECT_TIME(actual, expected) EXPECT_NEAR((actual), (expected), 1e-6 * (expected) + 1e-12)

// Counters of one launch with the given geometry and nothing counted.
KilnEmuCounters Geometry(uint32_t blocks, uint32_t threads, uint32_t registers = 32, uint32_t shared = 0) {
  KilnEmuCounters c{};
  c.launches = 1;
  c.grid[0] = blocks;
  c.grid[1] = c.grid[2] = 1;
  c.block[0] = threads;
  c.block[1] = c.block[2] = 1;
  c.registers_per_thread = registers;
  c.static_shared_bytes = shared;
  return c;
}

// ---- The model on synthetic counters --------------------------------------------

TEST(TimingModel, OccupancyTakesTheTightestLimit) {
  // 256 threads, 32 registers: threads 2048/256 = 8, registers
  // 65536 / (32*32 * 8 warps) = 8: threads bind first.
  model::Occupancy o = model::ComputeOccupancy(Geometry(1000, 256, 32));
  EXPECT_EQ(o.resident_blocks, 8u);
  EXPECT_STREQ(o.limit, "threads");
  EXPECT_EQ(o.busiest_sm_blocks, 8u);  // ceil(1000 / 132)
  EXPECT_EQ(o.waves, 1u);
  // 128 threads, 128 registers: 65536 / (128*32 * 4 warps) = 4 blocks.
  o = model::ComputeOccupancy(Geometry(1000, 128, 128));
  EXPECT_EQ(o.resident_blocks, 4u);
  EXPECT_STREQ(o.limit, "registers");
  EXPECT_EQ(o.waves, 2u);  // ceil(8 / 4)
  // 33 registers round up to 40: 65536 / (40*32 * 8 warps) = 6.4 -> 6.
  EXPECT_EQ(model::ComputeOccupancy(Geometry(1000, 256, 33)).resident_blocks, 6u);
  // 48 KiB of shared memory + 1 KiB reserved: 228 / 49 = 4.65 -> 4.
  o = model::ComputeOccupancy(Geometry(1000, 128, 16, 48 * 1024));
  EXPECT_EQ(o.resident_blocks, 4u);
  EXPECT_STREQ(o.limit, "shared memory");
  // 32 threads, 16 registers: threads allow 64, the SM holds 32 blocks.
  o = model::ComputeOccupancy(Geometry(1000, 32, 16));
  EXPECT_EQ(o.resident_blocks, 32u);
  EXPECT_STREQ(o.limit, "blocks");
  // 1024 threads declaring 255 registers: allocated what lets one block fit
  // (64 per thread), so one block per SM.
  o = model::ComputeOccupancy(Geometry(1000, 1024, 255));
  EXPECT_EQ(o.resident_blocks, 1u);
  EXPECT_STREQ(o.limit, "registers");
}

// A 64 MiB f32 copy, one element per thread: 2^21 unique sectors read and
// written. DRAM: 2 * 64 MiB / 3.0e12 = 44.739 us; + 2 us launch = 46.739 us.
KilnEmuCounters CopyCounters(uint64_t bytes) {
  uint64_t threads = bytes / 4, warps = threads / 32, sectors = bytes / 32;
  KilnEmuCounters c = Geometry(static_cast<uint32_t>(threads / 256), 256, 24);
  c.warp_instructions[KILN_EMU_CLASS_INTEGER] = 8 * warps;
  c.warp_instructions[KILN_EMU_CLASS_MEMORY] = 2 * warps;
  c.warp_instructions[KILN_EMU_CLASS_CONTROL] = warps;
  c.thread_instructions = 11 * threads;
  c.global_load_requests = c.global_store_requests = warps;
  c.global_load_sectors = c.global_store_sectors = sectors;
  c.global_unique_load_sectors = c.global_unique_store_sectors = sectors;
  c.max_warp_cycles = 500;
  return c;
}

TEST(TimingModel, CopyIsDramBound) {
  LaunchTime t = ModelLaunch(CopyCounters(64 << 20));
  EXPECT_EQ(t.bound, Bound::kDram);
  EXPECT_TIME(t.dram, 2 * 64 * kMiB / 3.0e12);
  EXPECT_TIME(t.total, 2 * 64 * kMiB / 3.0e12 + 2 * kUs);
  EXPECT_NEAR(t.total / kUs, 46.739, 0.001);
  // L2: 128 MiB / 5.5e12 = 24.40 us; optimal = DRAM (compulsory) + launch.
  EXPECT_TIME(t.l2, 2 * 64 * kMiB / 5.5e12);
  EXPECT_TIME(t.optimal, t.total);
}

TEST(TimingModel, IssueAndPipes) {
  // 528 blocks (4 per SM) of 256 threads, every warp 10000 integer
  // instructions: integer pipe 4 blocks * 8 warps * 10000 * 32 / 64 lanes
  // = 160000 cycles = 91.168 us; issue 4 * 8 * 10000 / 4 = 80000 cycles.
  KilnEmuCounters c = Geometry(528, 256);
  c.warp_instructions[KILN_EMU_CLASS_INTEGER] = 528 * 8 * 10000ull;
  c.thread_instructions = 528 * 256 * 10000ull;
  LaunchTime t = ModelLaunch(c);
  EXPECT_EQ(t.bound, Bound::kPipe);
  EXPECT_STREQ(t.pipe_name, "integer");
  EXPECT_TIME(t.pipe, 160000 / 1.755e9);
  EXPECT_TIME(t.issue, 80000 / 1.755e9);
  EXPECT_TIME(t.total, 160000 / 1.755e9 + 2 * kUs);
  // Optimal: thread instructions / 32 over 132 SMs x 4 schedulers
  // = 528 * 8 * 10000 / 528 = 80000 cycles.
  EXPECT_TIME(t.optimal, 80000 / 1.755e9 + 2 * kUs);
  // Half of them 64-bit: one more slot each on issue and the integer pipe:
  // 15000 slots per warp, 4 * 8 * 15000 / 4 = 120000 issue cycles and
  // 4 * 8 * 15000 * 32 / 64 = 240000 integer pipe cycles.
  c.integer64_instructions = 528 * 8 * 5000ull;
  t = ModelLaunch(c);
  EXPECT_TIME(t.pipe, 240000 / 1.755e9);
  EXPECT_TIME(t.issue, 120000 / 1.755e9);
  // ld.param takes no slot: 20000 of them per warp leave issue at 120000.
  c.warp_instructions[KILN_EMU_CLASS_MEMORY] = c.param_loads = 528 * 8 * 20000ull;
  EXPECT_TIME(ModelLaunch(c).issue, 120000 / 1.755e9);
  // MUFU: 16 lanes per clock; 1000 per warp = 4 * 8 * 1000 * 2 = 64000 cycles.
  KilnEmuCounters s = Geometry(528, 256);
  s.warp_instructions[KILN_EMU_CLASS_SPECIAL] = 528 * 8 * 1000ull;
  t = ModelLaunch(s);
  EXPECT_STREQ(t.pipe_name, "special");
  EXPECT_TIME(t.pipe, 64000 / 1.755e9);
}

TEST(TimingModel, OneWarpIssuesOnOneScheduler) {
  // One block of 32 threads: its SM has one warp, so one scheduler and a
  // quarter of each pipe: 1000 fp32 instructions take 1000 issue cycles
  // and 1000 * 32 / (128 / 4) = 1000 pipe cycles.
  KilnEmuCounters c = Geometry(1, 32);
  c.warp_instructions[KILN_EMU_CLASS_FP32] = 1000;
  LaunchTime t = ModelLaunch(c);
  EXPECT_TIME(t.issue, 1000 / 1.755e9);
  EXPECT_TIME(t.pipe, 1000 / 1.755e9);
}

TEST(TimingModel, SharedWavefrontsAndL1Sectors) {
  // 132 blocks, one per SM, 33000 shared wavefronts each: 33000 cycles.
  KilnEmuCounters c = Geometry(132, 1024);
  c.shared_wavefronts = 132 * 33000ull;
  LaunchTime t = ModelLaunch(c);
  EXPECT_EQ(t.bound, Bound::kShared);
  EXPECT_TIME(t.shared, 33000 / 1.755e9);
  // Global requests of 32 sectors pass L1 at 4 sectors per clock:
  // 132 * 1000 requests, 32 sectors each = 8000 cycles per SM.
  KilnEmuCounters g = Geometry(132, 1024);
  g.global_load_requests = 132 * 1000;
  g.global_load_sectors = 132 * 32000;
  EXPECT_TIME(ModelLaunch(g).l1, 8000 / 1.755e9);
}

TEST(TimingModel, OneThreadLoopingOver16MElementsTakesASecond) {
  // The scoreboard's timeline of the row_sum loop below over 16M floats:
  // 40 + 100.875 * 16777216 = 1692401704 cycles = 0.96433 s at 1.755 GHz.
  KilnEmuCounters c = Geometry(1, 1);
  c.max_warp_cycles = 40 + 100875ull * 16777216 / 1000;
  LaunchTime t = ModelLaunch(c);
  EXPECT_EQ(t.bound, Bound::kLatency);
  EXPECT_NEAR(t.total, 1692401704 / 1.755e9 + 2 * kUs, 1e-9);
  EXPECT_GT(t.total, 0.96);
}

TEST(TimingModel, LatencyIsChargedPerWave) {
  // 132 * 16 blocks of 256 threads (8 resident per SM): 2 waves of a
  // 10000-cycle timeline = 20000 cycles.
  KilnEmuCounters c = Geometry(132 * 16, 256, 16);
  c.max_warp_cycles = 10000;
  EXPECT_TIME(ModelLaunch(c).latency, 20000 / 1.755e9);
}

TEST(TimingModel, RereadsMissOnceTheFootprintExceedsL2) {
  // 100 MiB read twice (the second pass misses L1): footprint 100 MiB, so
  // (1 - 50/100) of the 100 MiB of re-reads miss L2 again:
  // DRAM 150 MiB / 3.0e12 = 52.43 us.
  uint64_t sectors = 100 * (1 << 20) / 32;
  KilnEmuCounters c = Geometry(132, 256);
  c.global_unique_load_sectors = sectors;
  c.global_load_sectors = 2 * sectors;
  EXPECT_TIME(ModelLaunch(c).dram, 150 * kMiB / 3.0e12);
  // 40 MiB read twice fits: only the compulsory 40 MiB.
  c.global_unique_load_sectors = sectors * 4 / 10;
  c.global_load_sectors = 2 * c.global_unique_load_sectors;
  EXPECT_TIME(ModelLaunch(c).dram, 40 * kMiB / 3.0e12);
  // Re-reads that hit the warp's L1 do not count: 100 MiB, the second pass
  // all L1 hits.
  c.global_unique_load_sectors = sectors;
  c.global_load_sectors = 2 * sectors;
  c.global_load_l1_hit_sectors = sectors;
  EXPECT_TIME(ModelLaunch(c).dram, 100 * kMiB / 3.0e12);
}

TEST(TimingModel, AtomicsOnOneSectorSerialize) {
  // 1M atomic adds to one address: 1M L2 operations in a row, 1 per clock:
  // 1048576 / 1.755e9 = 597.5 us. Spread over 1M sectors they cost L2
  // bandwidth instead, 32 MiB of sector traffic / 5.5e12 = 6.1 us, and
  // DRAM: each sector read and written once, 64 MiB / 3e12 = 22.4 us.
  KilnEmuCounters c = Geometry(4096, 256);
  c.global_atomic_lanes = 1 << 20;
  c.global_unique_atomic_sectors = 1;
  LaunchTime t = ModelLaunch(c);
  EXPECT_EQ(t.bound, Bound::kAtomics);
  EXPECT_TIME(t.atomics, 1048576 / 1.755e9);
  c.global_unique_atomic_sectors = 1 << 20;
  t = ModelLaunch(c);
  EXPECT_TIME(t.l2, 32 * kMiB / 5.5e12);
  EXPECT_EQ(t.bound, Bound::kDram);
  EXPECT_TIME(t.dram, 64 * kMiB / 3.0e12);
}

TEST(TimingModel, NoLaunchNoTime) {
  KilnEmuCounters c{};
  EXPECT_EQ(ModelLaunch(c).total, 0.0);
}

TEST(CallModels, Gemm) {
  // 4096^3 sgemm on the FP32 cores: 32 x 32 = 1024 tiles of 128x128 in
  // ceil(1024 / 132) = 8 waves; a tile is 2 * 128 * 128 * 4096 flops at
  // 66.9e12 / 132 * 0.8 flop/s per SM = 331.03 us, so 2648.3 us; bytes
  // 3 * 64 MiB / 3e12 = 67 us. Optimal: 2 * 4096^3 / 66.9e12 = 2054.4 us.
  model::GemmShape s{4096, 4096, 4096, 1, 4, true, false};
  model::GemmTime t = model::ModelGemm(s, model::GemmMath::kFp32);
  double tile = 2.0 * 128 * 128 * 4096 / (66.9e12 / 132 * 0.8);
  EXPECT_TIME(t.total, 8 * tile + 2 * kUs);
  EXPECT_NEAR(t.total / kUs, 2650.3, 0.1);
  EXPECT_TIME(t.optimal, 2.0 * 4096 * 4096 * 4096 / 66.9e12 + 2 * kUs);
  EXPECT_TIME(t.bytes, 3 * 64 * kMiB);
  // TF32 tensor cores: 494.7e12.
  EXPECT_TIME(model::ModelGemm(s, model::GemmMath::kTf32Tensor).optimal,
              2.0 * 4096 * 4096 * 4096 / 494.7e12 + 2 * kUs);
  // A skinny GEMM is bandwidth-bound: 8192 x 8 x 8192 with C read: its 64
  // tiles of 128 x 8 take 2 * 128 * 8 * 8192 / (66.9e12 / 132 * 0.8) =
  // 41.4 us, its bytes 4 * (8192*8*2 + 8192*8192 + 8192*8) = 269.2 MB
  // take 89.7 us.
  model::GemmShape skinny{8192, 8, 8192, 1, 4, true, true};
  t = model::ModelGemm(skinny, model::GemmMath::kFp64Tensor);
  double bytes = 4.0 * (8192.0 * 8 * 2 + 8192.0 * 8192 + 8192.0 * 8);
  EXPECT_TIME(t.total, bytes / 3.0e12 + 2 * kUs);
}

// An s8 x s8 -> s32 GEMM on the INT8 tensor cores (1978.9e12 ops/s dense,
// twice the BF16 rate): 8192^3 is 64 x 64 = 4096 tiles in
// ceil(4096 / 132) = 32 waves of 2 * 128 * 128 * 8192 ops at 1978.9e12 /
// 132 * 0.8 = 22.37 us per tile: 715.9 us; its bytes (8192^2 * (1 + 1 + 4)
// = 402.7 MB at 3e12: 134.2 us) do not bind. Optimal: 2 * 8192^3 /
// 1978.9e12 = 555.6 us, plus the launch.
TEST(CallModels, Int8GemmRunsAtTheInt8TensorPeak) {
  model::GemmShape s{8192, 8192, 8192, 1, 1, true, false, 4};
  model::GemmTime t = model::ModelGemm(s, model::GemmMath::kInt8Tensor);
  double tile = 2.0 * 128 * 128 * 8192 / (1978.9e12 / 132 * 0.8);
  EXPECT_TIME(t.total, 32 * tile + 2 * kUs);
  EXPECT_TIME(t.optimal, 2.0 * 8192 * 8192 * 8192 / 1978.9e12 + 2 * kUs);
  EXPECT_TIME(t.bytes, 8192.0 * 8192 * 6);
  EXPECT_NEAR(model::ModelGemm(s, model::GemmMath::kFp16Tensor).optimal - 2 * kUs, 2 * (t.optimal - 2 * kUs),
              1e-3 * t.optimal);
}

// An FP8 GEMM (cuBLASLt) on the FP8 tensor cores: 1978.9e12 flops/s dense
// (the datasheet's 3957.8 with sparsity, halved; twice the BF16 989.4).
// 8192^3 with a bf16 result: 32 waves of 2 * 128 * 128 * 8192 flops at
// 1978.9e12 / 132 * 0.8 per SM: 716.2 us, plus the 2 us launch; its bytes
// (8192^2 * (1 + 1 + 2)) do not bind.
TEST(CallModels, Fp8GemmRunsAtTheFp8TensorPeak) {
  model::GemmShape s{8192, 8192, 8192, 1, 1, true, false, 2};
  model::GemmTime t = model::ModelGemm(s, model::GemmMath::kFp8Tensor);
  EXPECT_TIME(t.total, 32 * 2.0 * 128 * 128 * 8192 / (1978.9e12 / 132 * 0.8) + 2 * kUs);  // 716.2 + 2 us
  EXPECT_TIME(t.bytes, 8192.0 * 8192 * 4);
  model::GemmShape bf16{8192, 8192, 8192, 1, 2, true, false, 4};
  EXPECT_NEAR(model::ModelGemm(bf16, model::GemmMath::kFp16Tensor).compute, 2 * t.compute, 1e-3 * t.compute);
}

TEST(CallModels, GemmSplitsKToFillTheSms) {
  // 512 x 1024 x 2816 sgemm: 4 x 8 = 32 tiles leave 100 of 132 SMs idle.
  // Split in 4 slices of 704: 128 tiles in one wave of 2 * 128 * 128 * 704
  // flops at 66.9e12 / 132 * 0.8 = 56.90 us, then a second launch (2 us)
  // that reads the 4 partial 512x1024 f32 tiles and writes the result after
  // they were written: 9 * 2 MiB / 3e12 = 6.29 us; 65.19 us in all. Unsplit:
  // 227.6 us; in 2: 119.3 us; in 8 (two waves): 70.8 us. Measured on the
  // lent H100: 77 us.
  model::GemmShape s{512, 1024, 2816, 1, 4, true, false};
  model::GemmTime t = model::ModelGemm(s, model::GemmMath::kFp32);
  double rate = 66.9e12 / 132 * 0.8;
  EXPECT_TIME(t.compute, 2.0 * 128 * 128 * 704 / rate + 2 * kUs + 9 * 2 * kMiB / 3e12);
  EXPECT_NEAR(t.total / kUs, 67.19, 0.01);
  // k = 256 cannot be split (slices of at least 256): one wave of 32 tiles.
  model::GemmShape short_k{512, 1024, 256, 1, 4, true, false};
  EXPECT_TIME(model::ModelGemm(short_k, model::GemmMath::kFp32).compute, 2.0 * 128 * 128 * 256 / rate);
}

TEST(CallModels, Fft) {
  // c64[64,4096] C2C: 64 transforms of 4096 points in one pass (4096 fits
  // one kernel): 5 * 4096 * 12 * 64 = 15.73 Mflop at 66.9e12 = 0.235 us;
  // 2 MiB read + 2 MiB written at 3e12 = 1.40 us: memory-bound, one launch.
  model::FftShape c2c;
  c2c.lengths[0] = 4096;
  c2c.batch = 64;
  c2c.input_bytes = c2c.output_bytes = 2 * kMiB;
  model::GemmTime t = model::ModelFft(c2c);
  EXPECT_TIME(t.flops, 5.0 * 4096 * 12 * 64);
  EXPECT_TIME(t.total, 4 * kMiB / 3e12 + 2 * kUs);
  EXPECT_TIME(t.optimal, t.total);
  // A 2-D 8192 x 16 Z2Z: 8192 needs two passes, 16 one: three launches, and
  // the two passes between them write and read the data twice more.
  model::FftShape z2z;
  z2z.rank = 2;
  z2z.lengths[0] = 8192;
  z2z.lengths[1] = 16;
  z2z.double_precision = true;
  z2z.input_bytes = z2z.output_bytes = 8192.0 * 16 * 16;
  t = model::ModelFft(z2z);
  EXPECT_TIME(t.bytes, 6 * z2z.input_bytes);
  EXPECT_TIME(t.total, 6 * z2z.input_bytes / 3e12 + 3 * 2 * kUs);
  EXPECT_TIME(t.compute, 5.0 * 8192 * 16 * 17 / 33.5e12);
  EXPECT_TIME(t.optimal, 2 * z2z.input_bytes / 3e12 + 2 * kUs);
  // A small 3-D transform (3 x 5 x 6 = 90 points) fits one kernel: one pass.
  model::FftShape small;
  small.rank = 3;
  small.lengths[0] = 3, small.lengths[1] = 5, small.lengths[2] = 6;
  small.input_bytes = small.output_bytes = 90 * 8;
  EXPECT_TIME(model::ModelFft(small).total, 2 * 90 * 8 / 3e12 + 2 * kUs);
  // A real transform does half the complex work; a length-1 transform none.
  model::FftShape r2c = c2c;
  r2c.real = true;
  EXPECT_TIME(model::ModelFft(r2c).flops, 5.0 * 4096 * 12 * 64 / 2);
  model::FftShape one;
  one.input_bytes = one.output_bytes = 8;
  EXPECT_TIME(model::ModelFft(one).flops, 0.0);
  EXPECT_TIME(model::ModelFft(one).total, 16 / 3e12 + 2 * kUs);
  // scal: a streaming read and write of the vector.
  EXPECT_TIME(model::ModelScal(1 << 20, 8 * kMiB).total, 16 * kMiB / 3e12 + 2 * kUs);
}

TEST(CallModels, SolverLaunchesPerPanelThenFlops) {
  // dpotrf of 1024 x 1024: 1024^3 / 3 = 357.9 Mflop at 66.9e12 * 0.8 =
  // 6.688 us; 4 panels of 256 x 3 launches = 24 us; the triangle read and
  // written, 2 * 8 * 1024 * 1025 / 2 bytes, takes 2.80 us.
  model::SolverShape s;
  s.flops = 1024.0 * 1024 * 1024 / 3;
  s.bytes = 8.0 * 1024 * 1025;
  s.columns = 1024;
  s.launches_per_panel = 3;
  model::GemmTime t = model::ModelSolver(s, model::GemmMath::kFp64Tensor);
  EXPECT_TIME(t.compute, 1024.0 * 1024 * 1024 / 3 / (66.9e12 * 0.8));
  EXPECT_TIME(t.total, 12 * 2 * kUs + 1024.0 * 1024 * 1024 / 3 / (66.9e12 * 0.8));
  EXPECT_NEAR(t.total / kUs, 30.69, 0.01);
  EXPECT_TIME(t.optimal, 2 * kUs + 1024.0 * 1024 * 1024 / 3 / 66.9e12);
  // A 3 x 3 matrix costs its one panel's launches.
  s = {9, 96, 3, 3};
  EXPECT_NEAR(model::ModelSolver(s, model::GemmMath::kFp32).total / kUs, 6.0, 1e-3);
}

TEST(CallModels, Transfers) {
  using model::TransferKind;
  // 64 MiB over PCIe Gen5 (64e9 B/s): 1048.6 us + 2 us.
  EXPECT_TIME(model::TransferSeconds(TransferKind::kHostToDevice, 64 << 20), 64 * kMiB / 64e9 + 2 * kUs);
  EXPECT_TIME(model::TransferSeconds(TransferKind::kDeviceToHost, 4), 4 / 64e9 + 2 * kUs);
  // Device to device reads and writes: 2 * 64 MiB / 3e12 = 44.74 us.
  EXPECT_TIME(model::TransferSeconds(TransferKind::kDeviceToDevice, 64 << 20), 2 * 64 * kMiB / 3e12 + 2 * kUs);
  EXPECT_TIME(model::TransferSeconds(TransferKind::kMemset, 64 << 20), 64 * kMiB / 3e12 + 2 * kUs);
}

// ---- Hand-written kernels on the emulator -----------------------------------------

// out[i * stride] = in[i * stride], i = ctaid.x * ntid.x + tid.x.
constexpr std::string_view kCopy = R"(
.visible .entry copy(.param .u64 p_in, .param .u64 p_out, .param .u32 p_stride)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<5>;
  .reg .f32 %f1;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  ld.param.u32 %r4, [p_stride];
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %ntid.x;
  mov.u32 %r2, %tid.x;
  mad.lo.s32 %r3, %r0, %r1, %r2;
  mul.lo.s32 %r5, %r3, %r4;
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd0, %rd2;
  add.s64 %rd4, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  st.global.f32 [%rd4], %f1;
  ret;
}
)";

// out[row] = sum of in[row * cols .. + cols), one thread per row, in order.
constexpr std::string_view kRowSum = R"(
.visible .entry row_sum(.param .u64 p_in, .param .u64 p_out, .param .u32 p_cols)
{
  .reg .pred %p1;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  ld.param.u32 %r0, [p_cols];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r1, %r1, %r2, %r3;
  mul.lo.s32 %r4, %r1, %r0;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd2, %rd0, %rd2;
  mov.u32 %r5, 0;
  mov.f32 %f1, 0f00000000;
$loop:
  ld.global.f32 %f2, [%rd2];
  add.f32 %f1, %f1, %f2;
  add.s64 %rd2, %rd2, 4;
  add.s32 %r5, %r5, 1;
  setp.lt.u32 %p1, %r5, %r0;
  @%p1 bra $loop;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd3, %rd1, %rd3;
  st.global.f32 [%rd3], %f1;
  ret;
}
)";

// *out += the sum of in[0 .. 256 * blocks): a block sums its 256 elements
// through a shared-memory tree, then thread 0 adds the block's sum.
constexpr std::string_view kBlockSum = R"(
.visible .entry block_sum(.param .u64 p_in, .param .u64 p_out)
{
  .shared .align 4 .f32 partial[256];
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r0, 8;
  add.s32 %r2, %r2, %r1;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd0, %rd2;
  ld.global.f32 %f1, [%rd3];
  mov.u32 %r3, partial;
  shl.b32 %r4, %r1, 2;
  add.s32 %r5, %r3, %r4;
  st.shared.f32 [%r5], %f1;
  bar.sync 0;
  mov.u32 %r6, 128;
$tree:
  setp.ge.u32 %p1, %r1, %r6;
  @%p1 bra $skip;
  shl.b32 %r7, %r6, 2;
  add.s32 %r7, %r5, %r7;
  ld.shared.f32 %f2, [%r7];
  ld.shared.f32 %f3, [%r5];
  add.f32 %f3, %f3, %f2;
  st.shared.f32 [%r5], %f3;
$skip:
  bar.sync 0;
  shr.u32 %r6, %r6, 1;
  setp.ne.u32 %p2, %r6, 0;
  @%p2 bra $tree;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $done;
  ld.shared.f32 %f1, [partial];
  red.global.add.f32 [%rd1], %f1;
$done:
  ret;
}
)";

// A 32x32 tile transpose of an n x n f32 matrix through shared memory whose
// rows are `pitch` floats apart: 32 is bank-conflicted (a warp reads a
// column: 32 words in one bank), 33 is padded (one bank each). Block
// (32, 32): 24 registers per thread, two blocks per SM.
constexpr std::string_view kTranspose = R"(
.visible .entry transpose(.param .u64 p_in, .param .u64 p_out, .param .u32 p_n, .param .u32 p_pitch)
{
  .shared .align 4 .f32 tile[1056];
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .reg .f32 %f1;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  ld.param.u32 %r0, [p_n];
  ld.param.u32 %r1, [p_pitch];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %tid.y;
  mov.u32 %r4, %ctaid.x;
  mov.u32 %r5, %ctaid.y;
  shl.b32 %r4, %r4, 5;
  shl.b32 %r5, %r5, 5;
  add.s32 %r6, %r5, %r3;
  add.s32 %r7, %r4, %r2;
  mad.lo.s32 %r6, %r6, %r0, %r7;
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd2, %rd0, %rd2;
  ld.global.f32 %f1, [%rd2];
  mov.u32 %r8, tile;
  mad.lo.s32 %r9, %r3, %r1, %r2;
  shl.b32 %r9, %r9, 2;
  add.s32 %r9, %r8, %r9;
  st.shared.f32 [%r9], %f1;
  bar.sync 0;
  mad.lo.s32 %r10, %r2, %r1, %r3;
  shl.b32 %r10, %r10, 2;
  add.s32 %r10, %r8, %r10;
  ld.shared.f32 %f1, [%r10];
  add.s32 %r6, %r4, %r3;
  add.s32 %r7, %r5, %r2;
  mad.lo.s32 %r6, %r6, %r0, %r7;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd3, %rd1, %rd3;
  st.global.f32 [%rd3], %f1;
  ret;
}
)";

class TimingModelKernelTest : public EmulatorTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(Load(kCopy));
    ASSERT_NO_FATAL_FAILURE(Load(kRowSum));
    ASSERT_NO_FATAL_FAILURE(Load(kBlockSum));
    ASSERT_NO_FATAL_FAILURE(Load(kTranspose));
  }

  template <typename... Args>
  KilnEmuCounters Count(std::string_view kernel, Dim3 grid, Dim3 block, const Args&... args) {
    StatusOr<KilnEmuCounters> r = Run(kernel, grid, block, 0, args...);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : KilnEmuCounters{};
  }
  // Copies `n` floats `stride` apart (buffers of n * stride floats).
  KilnEmuCounters Copy(uint32_t n, uint32_t stride) {
    uint64_t bytes = uint64_t{n} * stride * 4;
    uint64_t in = Alloc(bytes), out = Alloc(bytes);  // contents do not matter
    return Count("copy", Dim3{n / 256}, Dim3{256}, in, out, stride);
  }
  KilnEmuCounters RowSum(uint32_t rows, uint32_t cols, uint32_t block) {
    uint64_t in = Upload(std::vector<float>(uint64_t{rows} * cols, 1.0f)), out = Alloc(rows * 4ull);
    return Count("row_sum", Dim3{rows / block}, Dim3{block}, in, out, cols);
  }
  KilnEmuCounters BlockSum(uint32_t n) {
    uint64_t in = Upload(std::vector<float>(n, 1.0f)), out = Upload(std::vector<float>{0.0f});
    return Count("block_sum", Dim3{n / 256}, Dim3{256}, in, out);
  }
  KilnEmuCounters Transpose(uint32_t n, uint32_t pitch) {
    uint64_t bytes = uint64_t{n} * n * 4;
    uint64_t in = Alloc(bytes), out = Alloc(bytes);
    return Count("transpose", Dim3{n / 32, n / 32}, Dim3{32, 32}, in, out, n, pitch);
  }
};

double KernelSeconds(const KilnEmuCounters& c) { return ModelLaunch(c).total - 2 * kUs; }

TEST_F(TimingModelKernelTest, CoalescedCopy) {
  // 64 MiB: 16M threads in 65536 blocks; 2^21 sectors each way.
  // DRAM: 2 * 64 MiB / 3.0e12 = 44.739 us, + 2 us = 46.739 us. Every other
  // term is below it: the integer pipe (8 instructions + 2 for the two
  // add.s64 per warp) 497 blocks * 8 warps * 10 * 32/64 = 19880 cycles =
  // 11.3 us; latency 63 waves (8 blocks per SM) of a 508-cycle timeline
  // (index math 27 cycles, the load 480, the store) = 18.2 us.
  KilnEmuCounters c = Copy(16 << 20, 1);
  EXPECT_EQ(c.global_unique_load_sectors, 1u << 21);
  EXPECT_EQ(c.global_unique_store_sectors, 1u << 21);
  EXPECT_EQ(c.max_warp_cycles, 508u);
  EXPECT_EQ(c.param_loads, 3u << 19);
  EXPECT_EQ(c.integer64_instructions, 2u << 19);
  LaunchTime t = ModelLaunch(c);
  EXPECT_EQ(t.bound, Bound::kDram);
  EXPECT_TIME(t.total, 2 * 64 * kMiB / 3.0e12 + 2 * kUs);
  EXPECT_TIME(t.pipe, 497.0 * 8 * 10 * 32 / 64 / 1.755e9);
  EXPECT_TIME(t.latency, 63.0 * 508 / 1.755e9);
  EXPECT_EQ(c.model_ns, 46739u);  // Launch fills the model's time
  EXPECT_EQ(c.optimal_ns, 46739u);
}

TEST_F(TimingModelKernelTest, StridedCopyIsEightTimesSlowerPerByte) {
  // 2M floats 8 apart: every element has its own sector read and written:
  // 2^21 * 32 * 2 B = 128 MiB of DRAM for 16 MiB of data, as much as the
  // 64 MiB copy above: 44.739 us. The coalesced copy of the same 2M floats
  // moves 16 MiB: 5.592 us.
  KilnEmuCounters strided = Copy(2 << 20, 8);
  KilnEmuCounters coalesced = Copy(2 << 20, 1);
  EXPECT_EQ(strided.global_load_sectors, 2u << 20);
  EXPECT_TIME(KernelSeconds(strided), 2 * 64 * kMiB / 3.0e12);
  EXPECT_TIME(KernelSeconds(coalesced), 2 * 8 * kMiB / 3.0e12);
  EXPECT_GE(KernelSeconds(strided) / KernelSeconds(coalesced), 8.0 - 1e-9);
}

TEST_F(TimingModelKernelTest, OneThreadLoopIsLatencyBound) {
  // One thread summing n = 2^20 floats. Its scoreboard (see row_sum):
  // prologue: the ld.params take no slot, the movs issue at 1, 2, 3, the
  // mad waits for %tid.x's mov (ready at 7), the mul at 11, the mul.wide at
  // 15, the add.s64 at 19 (2 slots, ready at 27), the two movs at 21, 22;
  // the first load issues at 27. Each iteration: load (latency L), add.f32
  // at +L, add.s64 at +L+1 (2 slots), add.s32 at +L+3, setp at +L+7 (after
  // the add's 4), bra at +L+11 (after the setp's 4): the next load at
  // +L+12. L is 480 (DRAM) for the first float of each 32-byte sector and
  // 33 (L1) for the 7 others: 88.875 on average. Epilogue: mul.wide at
  // bra+1, add.s64 at bra+5 (ready bra+13), st at bra+13, ret at bra+14.
  // Total: 27 + 12 (n - 1) + sum(L) + 11 + 14 = 40 + 100.875 n cycles
  // = 105775144 cycles = 60.271 ms.
  uint32_t n = 1 << 20;
  KilnEmuCounters c = RowSum(1, n, 1);
  EXPECT_EQ(c.max_warp_cycles, 40 + 100875ull * n / 1000);
  EXPECT_EQ(c.global_load_l1_hit_sectors, n / 8 * 7);
  LaunchTime t = ModelLaunch(c);
  EXPECT_EQ(t.bound, Bound::kLatency);
  EXPECT_TIME(t.total, 105775144 / 1.755e9 + 2 * kUs);
  // The same sum by 4096 blocks of 256 threads and a shared-memory tree:
  // its 4096 atomic adds on one address (2.33 us), its 4 MiB of DRAM
  // (1.40 us) and its instructions are microseconds: over 1000x less.
  KilnEmuCounters parallel = BlockSum(n);
  EXPECT_EQ(parallel.global_atomic_lanes, 4096u);
  EXPECT_EQ(parallel.global_unique_atomic_sectors, 1u);
  EXPECT_TIME(ModelLaunch(parallel).atomics, 4096 / 1.755e9);
  EXPECT_LT(ModelLaunch(parallel).total, 10 * kUs);
  EXPECT_GT(t.total / ModelLaunch(parallel).total, 1000);
}

TEST_F(TimingModelKernelTest, RowsPerThreadHitTheWarpsL1) {
  // 4096 rows of 768 floats, one thread per row: each lane reads its own
  // sector 8 times, the first from DRAM (one 32-sector request per warp
  // and 8 iterations), the 7 others from the warp's modeled L1.
  KilnEmuCounters c = RowSum(4096, 768, 256);
  EXPECT_EQ(c.global_load_sectors, 4096ull * 768);
  EXPECT_EQ(c.global_load_l1_hit_sectors, 4096ull * 768 / 8 * 7);
  // Timeline: 40 + 100.875 * 768 = 77512 cycles; 16 blocks, one wave.
  EXPECT_EQ(c.max_warp_cycles, 77512u);
}

TEST_F(TimingModelKernelTest, PaddedTransposeBeatsTheConflictedOne) {
  // 2048 x 2048 f32 (16 MiB each way), 4096 blocks of 32 warps, 32 blocks
  // on the busiest SM. Conflicted: each warp's column read needs 32
  // wavefronts and its row write 1: 32 blocks * 32 warps * 33 = 33792
  // cycles = 19.255 us, + 2 = 21.255 us. Padded: 2 wavefronts per warp, so
  // DRAM binds: 2 * 16 MiB / 3e12 = 11.185 us, + 2 = 13.185 us.
  KilnEmuCounters conflicted = Transpose(2048, 32);
  KilnEmuCounters padded = Transpose(2048, 33);
  EXPECT_EQ(conflicted.shared_wavefronts, 4096ull * 32 * 33);
  EXPECT_EQ(padded.shared_wavefronts, 4096ull * 32 * 2);
  LaunchTime c = ModelLaunch(conflicted), p = ModelLaunch(padded);
  EXPECT_EQ(c.bound, Bound::kShared);
  EXPECT_TIME(c.total, 33792 / 1.755e9 + 2 * kUs);
  EXPECT_EQ(p.bound, Bound::kDram);
  EXPECT_TIME(p.total, 2 * 16 * kMiB / 3.0e12 + 2 * kUs);
  EXPECT_LT(p.total, c.total);
}

// ---- Sampling mode -------------------------------------------------------------------

class SamplingTest : public TimingModelKernelTest {
 protected:
  // Runs `launch` in full, then sampling 8 blocks, and checks that the
  // model times agree within 10%.
  template <typename F>
  void ExpectAgreement(const char* what, F launch) {
    sample_blocks_ = 0;
    KilnEmuCounters full = launch();
    sample_blocks_ = 8;
    KilnEmuCounters sampled = launch();
    sample_blocks_ = 0;
    EXPECT_EQ(full.sampled_launches, 0u) << what;
    EXPECT_EQ(sampled.sampled_launches, 1u) << what;
    double ratio = double(sampled.model_ns) / double(full.model_ns);
    EXPECT_NEAR(ratio, 1.0, 0.10) << what << ": full " << full.model_ns << " ns, sampled " << sampled.model_ns
                                  << " ns";
    std::printf("  %-22s full %10.3f us  sampled %10.3f us  ratio %.4f\n", what, full.model_ns / 1e3,
                sampled.model_ns / 1e3, ratio);
  }
};

TEST_F(SamplingTest, SampledAgreesWithFullEmulation) {
  ExpectAgreement("copy 16 MiB", [&] { return Copy(4 << 20, 1); });
  ExpectAgreement("strided copy", [&] { return Copy(1 << 20, 8); });
  ExpectAgreement("row reduction", [&] { return RowSum(4096, 256, 256); });
  ExpectAgreement("block reduction", [&] { return BlockSum(1 << 20); });
  ExpectAgreement("transpose conflicted", [&] { return Transpose(1024, 32); });
  ExpectAgreement("transpose padded", [&] { return Transpose(1024, 33); });
}

TEST_F(SamplingTest, CountsAreExtrapolated) {
  // 4M floats in 16384 blocks, 8 sampled: counts scale by 2048, the unique
  // sectors of each buffer too (each block owns its part), the longest
  // timeline stays.
  sample_blocks_ = 8;
  KilnEmuCounters c = Copy(4 << 20, 1);
  EXPECT_EQ(c.global_load_requests, 4u << 20 >> 5);
  EXPECT_EQ(c.global_unique_load_sectors, 4u << 20 >> 3);
  EXPECT_EQ(c.max_warp_cycles, 508u);
  // A broadcast operand every block reads is counted once: block_sum's
  // output (one atomic sector, the span the sample touched).
  KilnEmuCounters s = BlockSum(1 << 20);
  EXPECT_EQ(s.global_unique_atomic_sectors, 1u);
  EXPECT_EQ(s.global_atomic_lanes, 4096u);
}

TEST(Sampling, UniqueSectorsScaleWithinTheSpanTouched) {
  // 8 of 1024 blocks (scale 128). Owned data: 256 sectors touched over a
  // span of 32768 -> 256 * 128 = 32768. Broadcast data: the same 8 sectors
  // (span 8) for every block -> 8. Stores: 16 sectors spread over a span of
  // 1000 -> capped at 1000. Counts scale: 10 requests -> 1280.
  KilnEmuCounters c{};
  c.global_load_requests = 10;
  c.max_warp_cycles = 777;
  std::vector<SectorFootprint> f(2);
  f[0].allocation_sectors = f[1].allocation_sectors = 1 << 20;
  f[0].load = {256, 32768};
  f[1].load = {8, 8};
  f[1].store = {16, 1000};
  ExtrapolateSample(&c, f, 8, 1024);
  EXPECT_EQ(c.global_unique_load_sectors, 32768u + 8u);
  EXPECT_EQ(c.global_unique_store_sectors, 1000u);
  EXPECT_EQ(c.global_load_requests, 1280u);
  EXPECT_EQ(c.max_warp_cycles, 777u);
  EXPECT_EQ(c.sampled_launches, 1u);
  // A sample of one block has no span to go by: capped at the allocation.
  // 32 sectors of a 4096-sector allocation, 1 of 256 blocks -> 4096.
  KilnEmuCounters one{};
  std::vector<SectorFootprint> g(1);
  g[0].allocation_sectors = 4096;
  g[0].load = {32, 32};
  ExtrapolateSample(&one, g, 1, 256);
  EXPECT_EQ(one.global_unique_load_sectors, 4096u);
}

TEST(Sampling, BlocksAreSpreadOverTheGridEndsIncluded) {
  // 8 of 100: round(i * 99 / 7) = 0, 14, 28, 42, 57, 71, 85, 99.
  const uint64_t want[] = {0, 14, 28, 42, 57, 71, 85, 99};
  for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(SampledBlock(i, 8, 100), want[i]);
  EXPECT_EQ(SampledBlock(0, 1, 100), 0u);
}

}  // namespace
}  // namespace kiln::emu::testing
