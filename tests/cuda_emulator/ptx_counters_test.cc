// The emulator's per-launch counters (KilnEmuCounters), exact for small
// kernels whose every access and instruction is counted by hand here:
// coalesced, strided, offset and broadcast global accesses (requests, 32-byte
// sectors, unique sectors, bytes), shared-memory bank conflicts of a 32x32
// tile read by columns with and without padding, barriers per warp, atomics,
// local accesses, warp instructions by class, and the launch geometry.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"

namespace kiln::emu::testing {
namespace {

class PtxCountersTest : public EmulatorTest {
 protected:
  // Runs and returns the counters (zeros and a failure on error).
  template <typename... Args>
  KilnEmuCounters Count(std::string_view kernel, Dim3 grid, Dim3 block, uint32_t shared, const Args&... args) {
    StatusOr<KilnEmuCounters> r = Run(kernel, grid, block, shared, args...);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : KilnEmuCounters{};
  }
};

// out[i] = in[i * stride + offset] for i = ctaid.x * ntid.x + tid.x.
constexpr std::string_view kGather = R"(
.visible .entry gather(.param .u64 p_in, .param .u64 p_out, .param .u32 p_stride, .param .u32 p_offset)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %f1;
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %ntid.x;
  mov.u32 %r2, %tid.x;
  mad.lo.s32 %r3, %r0, %r1, %r2;
  ld.param.u32 %r4, [p_stride];
  ld.param.u32 %r5, [p_offset];
  mad.lo.s32 %r6, %r3, %r4, %r5;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd3, %rd0, %rd2;
  ld.global.f32 %f1, [%rd3];
  mul.wide.u32 %rd4, %r3, 4;
  add.s64 %rd5, %rd1, %rd4;
  st.global.f32 [%rd5], %f1;
  ret;
}
)";

TEST_F(PtxCountersTest, CoalescedCopy) {
  ASSERT_NO_FATAL_FAILURE(Load(kGather));
  // 1024 floats, 4 blocks of 256: 32 warps, each loading and storing 128
  // contiguous, 256-byte aligned bytes = 4 sectors.
  uint64_t in = Upload(std::vector<float>(1024, 1.0f)), out = Alloc(4096);
  KilnEmuCounters c = Count("gather", Dim3{4}, Dim3{256}, 0, in, out, uint32_t{1}, uint32_t{0});
  EXPECT_EQ(c.launches, 1u);
  EXPECT_EQ(c.global_load_requests, 32u);
  EXPECT_EQ(c.global_load_sectors, 128u);
  EXPECT_EQ(c.global_unique_load_sectors, 128u);
  EXPECT_EQ(c.global_load_bytes, 4096u);
  EXPECT_EQ(c.global_store_requests, 32u);
  EXPECT_EQ(c.global_store_sectors, 128u);
  EXPECT_EQ(c.global_unique_store_sectors, 128u);
  EXPECT_EQ(c.global_store_bytes, 4096u);
  EXPECT_EQ(c.shared_load_requests + c.shared_store_requests, 0u);
  EXPECT_EQ(c.barriers, 0u);
  EXPECT_EQ(c.atomics, 0u);
  EXPECT_EQ(c.grid[0], 4u);
  EXPECT_EQ(c.block[0], 256u);
}

TEST_F(PtxCountersTest, StridedLoadsTouchOneSectorPerLane) {
  ASSERT_NO_FATAL_FAILURE(Load(kGather));
  // Stride 32 floats = 128 bytes: every lane reads its own sector.
  uint64_t in = Upload(std::vector<float>(32 * 1024, 1.0f)), out = Alloc(4096);
  KilnEmuCounters c = Count("gather", Dim3{4}, Dim3{256}, 0, in, out, uint32_t{32}, uint32_t{0});
  EXPECT_EQ(c.global_load_requests, 32u);
  EXPECT_EQ(c.global_load_sectors, 32u * 32u);
  EXPECT_EQ(c.global_unique_load_sectors, 1024u);
  EXPECT_EQ(c.global_load_bytes, 4096u);
  EXPECT_EQ(c.global_store_sectors, 128u);
}

TEST_F(PtxCountersTest, MisalignedWarpSpansFiveSectors) {
  ASSERT_NO_FATAL_FAILURE(Load(kGather));
  // Offset by one float: each warp's 128 bytes start 4 bytes into a sector
  // and end 4 bytes into the fifth. All 1024 loads cover bytes [4, 4100):
  // 129 distinct sectors.
  uint64_t in = Upload(std::vector<float>(1025, 1.0f)), out = Alloc(4096);
  KilnEmuCounters c = Count("gather", Dim3{4}, Dim3{256}, 0, in, out, uint32_t{1}, uint32_t{1});
  EXPECT_EQ(c.global_load_requests, 32u);
  EXPECT_EQ(c.global_load_sectors, 32u * 5u);
  EXPECT_EQ(c.global_unique_load_sectors, 129u);
}

TEST_F(PtxCountersTest, BroadcastLoadIsOneSector) {
  ASSERT_NO_FATAL_FAILURE(Load(kGather));
  // Stride 0: all lanes read in[0].
  uint64_t in = Upload(std::vector<float>(1, 2.0f)), out = Alloc(4096);
  KilnEmuCounters c = Count("gather", Dim3{4}, Dim3{256}, 0, in, out, uint32_t{0}, uint32_t{0});
  EXPECT_EQ(c.global_load_requests, 32u);
  EXPECT_EQ(c.global_load_sectors, 32u);
  EXPECT_EQ(c.global_unique_load_sectors, 1u);
  EXPECT_EQ(c.global_load_bytes, 4096u);
}

// A 32x32 block writes tile[ty][tx] (row-wise) and, after a barrier, reads
// tile[tx][ty] (column-wise) into out[ty * 32 + tx]; the row pitch is
// `pitch` floats.
std::string TransposeKernel(int pitch) {
  std::string p = std::to_string(pitch);
  return std::string(kPtxHeader) + R"(
.visible .entry tile_transpose(.param .u64 p_in, .param .u64 p_out)
{
  .shared .align 4 .f32 tile[)" + std::to_string(32 * pitch) + R"(];
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  .reg .f32 %f<2>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %tid.y;
  shl.b32 %r2, %r1, 5;
  add.u32 %r3, %r2, %r0;
  ld.param.u64 %rd0, [p_in];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r3, 4;
  add.s64 %rd2, %rd0, %rd1;
  ld.global.f32 %f0, [%rd2];
  mov.u32 %r4, tile;
  mad.lo.s32 %r5, %r1, )" + p + R"(, %r0;
  shl.b32 %r6, %r5, 2;
  add.u32 %r7, %r4, %r6;
  st.shared.f32 [%r7], %f0;
  bar.sync 0;
  mad.lo.s32 %r8, %r0, )" + p + R"(, %r1;
  shl.b32 %r9, %r8, 2;
  add.u32 %r10, %r4, %r9;
  ld.shared.f32 %f1, [%r10];
  ld.param.u64 %rd3, [p_out];
  cvta.to.global.u64 %rd3, %rd3;
  add.s64 %rd4, %rd3, %rd1;
  st.global.f32 [%rd4], %f1;
  ret;
}
)";
}

class BankConflictTest : public PtxCountersTest {
 protected:
  KilnEmuCounters Transpose(int pitch) {
    Status s = LoadPtx(TransposeKernel(pitch));
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<float> in(1024);
    for (int i = 0; i < 1024; ++i) in[i] = static_cast<float>(i);
    uint64_t a = Upload(in), out = Alloc(4096);
    KilnEmuCounters c = Count("tile_transpose", Dim3{1}, Dim3{32, 32}, 0, a, out);
    // out[y][x] = in[x][y].
    std::vector<float> got = Download<float>(out, 1024);
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 32; ++x) EXPECT_EQ(got[y * 32 + x], in[x * 32 + y]) << y << "," << x;
    return c;
  }
};

TEST_F(BankConflictTest, ColumnReadWithoutPaddingIs32Way) {
  // 32 warps (one per ty). The row-wise store hits 32 banks: 1 wavefront.
  // The column read of warp ty touches words tx * 32 + ty, all in bank ty:
  // 32 wavefronts. Total 32 + 32 * 32 = 1056; conflicts 1056 - 64 = 992.
  KilnEmuCounters c = Transpose(32);
  EXPECT_EQ(c.shared_store_requests, 32u);
  EXPECT_EQ(c.shared_load_requests, 32u);
  EXPECT_EQ(c.shared_wavefronts, 1056u);
  EXPECT_EQ(c.shared_bank_conflicts, 992u);
  EXPECT_EQ(c.barriers, 32u);
  EXPECT_EQ(c.static_shared_bytes, 32u * 32u * 4u);
}

TEST_F(BankConflictTest, PaddedColumnReadIsConflictFree) {
  // Pitch 33: word tx * 33 + ty is in bank (tx + ty) % 32, distinct per lane;
  // the store's ty * 33 + tx likewise.
  KilnEmuCounters c = Transpose(33);
  EXPECT_EQ(c.shared_store_requests, 32u);
  EXPECT_EQ(c.shared_load_requests, 32u);
  EXPECT_EQ(c.shared_wavefronts, 64u);
  EXPECT_EQ(c.shared_bank_conflicts, 0u);
  EXPECT_EQ(c.static_shared_bytes, 32u * 33u * 4u);
}

// Each lane stores its own word (conflict free), then every lane reads word
// 0: a broadcast, one wavefront.
constexpr std::string_view kBroadcast = R"(
.visible .entry broadcast(.param .u64 p_out)
{
  .shared .align 4 .b32 s[32];
  .reg .b32 %r<4>;
  .reg .b64 %rd<3>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, s;
  shl.b32 %r2, %r0, 2;
  add.u32 %r2, %r1, %r2;
  st.shared.u32 [%r2], %r0;
  bar.sync 0;
  ld.shared.u32 %r3, [s];
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r3;
  ret;
}
)";

TEST_F(PtxCountersTest, SharedBroadcastIsOneWavefront) {
  ASSERT_NO_FATAL_FAILURE(Load(kBroadcast));
  uint64_t out = Alloc(32 * 4);
  KilnEmuCounters c = Count("broadcast", Dim3{1}, Dim3{32}, 0, out);
  EXPECT_EQ(c.shared_store_requests, 1u);
  EXPECT_EQ(c.shared_load_requests, 1u);
  EXPECT_EQ(c.shared_wavefronts, 2u);
  EXPECT_EQ(c.shared_bank_conflicts, 0u);
  EXPECT_EQ(c.barriers, 1u);
  EXPECT_EQ(Download<uint32_t>(out, 32), std::vector<uint32_t>(32, 0));
}

// One atomic add per thread and nothing else global.
constexpr std::string_view kCountAtomics = R"(
.visible .entry count_atomics(.param .u64 p)
{
  .reg .b32 %r1;
  .reg .b64 %rd1;
  ld.param.u64 %rd1, [p];
  atom.global.add.u32 %r1, [%rd1], 1;
  ret;
}
)";

TEST_F(PtxCountersTest, AtomicsCountWarpsAndLanes) {
  ASSERT_NO_FATAL_FAILURE(Load(kCountAtomics));
  uint64_t p = Upload(std::vector<uint32_t>{0});
  // 2 blocks of 48 threads: 2 warps each (32 + 16 lanes).
  KilnEmuCounters c = Count("count_atomics", Dim3{2}, Dim3{48}, 0, p);
  EXPECT_EQ(c.atomics, 4u);
  EXPECT_EQ(c.atomic_lanes, 96u);
  EXPECT_EQ(Download<uint32_t>(p, 1), (std::vector<uint32_t>{96}));
}

// Hand-counted instruction mix, 18 instructions on every thread's path,
// classed as kiln_cuda_emulator.h documents KilnEmuInstructionClass
// (MEMORY: ld, st, atom, red, cvta; CONTROL: bra, ret, exit, bar, shfl,
// vote, setp, selp, mov; SPECIAL: the MUFU functions, of which sqrt only
// as sqrt.approx):
//   memory:  ld.param, cvta, ld.global, st.global     4
//   control: mov x3, setp, selp, ret                   6
//   integer: mul.wide, add.s64                         2
//   fp32:    add.f32, mul.f32, sqrt.rn.f32             3
//   special: ex2.approx                                1
//   fp64:    add.f64                                   1
//   fp16:    add.f16                                   1
constexpr std::string_view kMix = R"(
.visible .entry mix(.param .u64 p)
{
  .reg .pred %p1;
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<4>;
  .reg .f64 %fd<2>;
  .reg .b16 %h<2>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  add.f32 %f2, %f1, %f1;
  mul.f32 %f3, %f2, %f1;
  sqrt.rn.f32 %f3, %f3;
  ex2.approx.f32 %f3, %f3;
  setp.gt.f32 %p1, %f3, 0f00000000;
  selp.f32 %f3, %f3, %f2, %p1;
  mov.f64 %fd1, 0d3FF0000000000000;
  add.f64 %fd1, %fd1, %fd1;
  mov.b16 %h1, 0x3C00;
  add.f16 %h1, %h1, %h1;
  st.global.f32 [%rd3], %f3;
  ret;
}
)";

TEST_F(PtxCountersTest, WarpInstructionsByClass) {
  ASSERT_NO_FATAL_FAILURE(Load(kMix));
  uint64_t p = Upload(std::vector<float>(64, 1.0f));
  KilnEmuCounters c = Count("mix", Dim3{1}, Dim3{32}, 0, p);
  // By the classes kiln_cuda_emulator.h documents: memory = ld.param,
  // ld.global, st.global; control = ret; integer = cvta, mov.u32,
  // mul.wide, add.s64, mov.b16; fp32 = add, mul, setp.f32, selp.f32;
  // special = sqrt.rn, ex2; fp64 = mov.f64, add.f64; fp16 = add.f16.
  EXPECT_EQ(c.warp_instructions[KILN_EMU_CLASS_MEMORY], 3u);
  EXPECT_EQ(c.warp_instructions[KILN_EMU_CLASS_CONTROL], 1u);
  EXPECT_EQ(c.warp_instructions[KILN_EMU_CLASS_INTEGER], 5u);
  EXPECT_EQ(c.warp_instructions[KILN_EMU_CLASS_FP32], 4u);
  EXPECT_EQ(c.warp_instructions[KILN_EMU_CLASS_SPECIAL], 2u);
  EXPECT_EQ(c.warp_instructions[KILN_EMU_CLASS_FP64], 2u);
  EXPECT_EQ(c.warp_instructions[KILN_EMU_CLASS_FP16], 1u);
  EXPECT_EQ(c.thread_instructions, 18u * 32u);
  EXPECT_EQ(c.max_thread_instructions, 18u);
  // 40 threads: two warps (32 + 8 lanes) run the same 18 instructions.
  KilnEmuCounters d = Count("mix", Dim3{1}, Dim3{40}, 0, p);
  uint64_t total = 0;
  for (uint64_t n : d.warp_instructions) total += n;
  EXPECT_EQ(total, 36u);
  EXPECT_EQ(d.warp_instructions[KILN_EMU_CLASS_MEMORY], 6u);
  EXPECT_EQ(d.thread_instructions, 18u * 40u);
  EXPECT_EQ(d.max_thread_instructions, 18u);
}

// Local memory: 16 st.local in a loop and one ld.local per warp.
constexpr std::string_view kLocal = R"(
.visible .entry local_count(.param .u64 p)
{
  .local .align 4 .b8 buf[64];
  .reg .pred %p1;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  mov.u64 %rd0, buf;
  mov.u32 %r0, 0;
$loop:
  mul.wide.u32 %rd1, %r0, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.local.u32 [%rd2], %r0;
  add.u32 %r0, %r0, 1;
  setp.lt.u32 %p1, %r0, 16;
  @%p1 bra $loop;
  ld.local.u32 %r1, [buf+60];
  ld.param.u64 %rd3, [p];
  st.global.u32 [%rd3], %r1;
  ret;
}
)";

TEST_F(PtxCountersTest, LocalRequestsPerWarp) {
  ASSERT_NO_FATAL_FAILURE(Load(kLocal));
  uint64_t p = Alloc(4);
  // One warp of 32 threads (all store the same value to *p).
  KilnEmuCounters c = Count("local_count", Dim3{1}, Dim3{32}, 0, p);
  EXPECT_EQ(c.local_requests, 17u);
  EXPECT_EQ(Download<uint32_t>(p, 1), (std::vector<uint32_t>{15}));
}

// Declares 7 + 3 32-bit registers and 100 bytes of static shared memory.
constexpr std::string_view kGeometry = R"(
.visible .entry geometry()
{
  .shared .align 4 .b8 sbuf[100];
  .reg .b32 %r<7>;
  .reg .f32 %f<3>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, sbuf;
  and.b32 %r3, %r1, 15;
  shl.b32 %r4, %r3, 2;
  add.u32 %r5, %r2, %r4;
  cvt.rn.f32.u32 %f1, %r1;
  st.shared.f32 [%r5], %f1;
  ret;
}
)";

TEST_F(PtxCountersTest, LaunchGeometry) {
  ASSERT_NO_FATAL_FAILURE(Load(kGeometry));
  checks_.race_check = false;  // threads with equal tid % 16 share a word
  KilnEmuCounters c = Count("geometry", Dim3{3, 2, 1}, Dim3{8, 4, 2}, 48);
  EXPECT_EQ(c.grid[0], 3u);
  EXPECT_EQ(c.grid[1], 2u);
  EXPECT_EQ(c.grid[2], 1u);
  EXPECT_EQ(c.block[0], 8u);
  EXPECT_EQ(c.block[1], 4u);
  EXPECT_EQ(c.block[2], 2u);
  EXPECT_EQ(c.dynamic_shared_bytes, 48u);
  EXPECT_EQ(c.static_shared_bytes, 100u);
  // The PTX declares 10 registers, but at most 4 are live at once (r1, r2,
  // r3 and r4 at the shl: r1 and r2 still to be read, r3 its operand, r4 its
  // result), plus 2 for addressing (exec/register_pressure.h).
  EXPECT_EQ(c.registers_per_thread, 6u);
  EXPECT_EQ(c.launches, 1u);
  // 6 blocks of 64 threads = 2 full warps each, 8 instructions per thread.
  EXPECT_EQ(c.thread_instructions, 6u * 64u * 8u);
}

}  // namespace
}  // namespace kiln::emu::testing
