// PTX synchronization, warp-collective and atomic instructions under the
// emulator: bar.sync across the warps of a block, bar.warp.sync within a
// warp, the thread/block/lane special registers of a 3D launch, shfl.sync in
// every mode with its clamp/segment operand and predicate output, vote.sync,
// redux.sync, activemask, global and shared atomics with many threads on one
// address, 64-bit and float atomics, divergent branches that reconverge
// before a shuffle, loops with per-lane trip counts, and threads that return
// before a barrier.
//
// Expected values are computed on the host from the same inputs with plain
// C++ (sums, permutations, closed forms), never by the emulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"

namespace kiln::emu::testing {
namespace {

class PtxSyncTest : public EmulatorTest {};

// Each 256-thread block stages its slice in shared memory and writes it
// back reversed: thread t reads the element thread 255 - t (another warp)
// wrote, so only a working block-wide barrier gives the right answer.
constexpr std::string_view kReverse = R"(
.visible .entry reverse(.param .u64 p_in, .param .u64 p_out)
{
  .shared .align 4 .b32 smem[256];
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %ctaid.x;
  shl.b32 %r2, %r1, 8;
  add.u32 %r3, %r2, %r0;
  ld.param.u64 %rd0, [p_in];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r3, 4;
  add.s64 %rd2, %rd0, %rd1;
  ld.global.u32 %r4, [%rd2];
  mov.u32 %r5, smem;
  shl.b32 %r6, %r0, 2;
  add.u32 %r7, %r5, %r6;
  st.shared.u32 [%r7], %r4;
  bar.sync 0;
  mov.u32 %r8, 255;
  sub.u32 %r8, %r8, %r0;
  shl.b32 %r9, %r8, 2;
  add.u32 %r10, %r5, %r9;
  ld.shared.u32 %r11, [%r10];
  ld.param.u64 %rd3, [p_out];
  cvta.to.global.u64 %rd3, %rd3;
  add.s64 %rd4, %rd3, %rd1;
  st.global.u32 [%rd4], %r11;
  ret;
}
)";

TEST_F(PtxSyncTest, BarrierOrdersSharedMemoryAcrossWarps) {
  ASSERT_NO_FATAL_FAILURE(Load(kReverse));
  std::vector<uint32_t> in(4 * 256);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
  uint64_t a = Upload(in), out = Alloc(in.size() * 4);
  ASSERT_RUN(Run("reverse", Dim3{4}, Dim3{256}, 0, a, out));
  std::vector<uint32_t> expected;
  for (size_t b = 0; b < 4; ++b)
    for (size_t t = 0; t < 256; ++t) expected.push_back(in[b * 256 + 255 - t]);
  EXPECT_EQ(Download<uint32_t>(out, in.size()), expected);
}

// Every thread of a 3D launch reports its ids: out[8 * linear_thread] =
// tid.{x,y,z}, ctaid.{x,y,z}, laneid, lanemask_lt, where linear_thread
// counts blocks in x-y-z order and threads in x-y-z order within a block.
// Warps are formed from the linear index within the block.
constexpr std::string_view kIds = R"(
.visible .entry ids(.param .u64 p_out)
{
  .reg .b32 %r<24>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %tid.y;
  mov.u32 %r2, %tid.z;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ctaid.y;
  mov.u32 %r5, %ctaid.z;
  mov.u32 %r6, %laneid;
  mov.u32 %r7, %lanemask_lt;
  mov.u32 %r8, %ntid.x;
  mov.u32 %r9, %ntid.y;
  mov.u32 %r10, %ntid.z;
  mov.u32 %r11, %nctaid.x;
  mov.u32 %r12, %nctaid.y;
  mad.lo.s32 %r13, %r5, %r12, %r4;
  mad.lo.s32 %r13, %r13, %r11, %r3;
  mad.lo.s32 %r14, %r2, %r9, %r1;
  mad.lo.s32 %r14, %r14, %r8, %r0;
  mul.lo.s32 %r15, %r8, %r9;
  mul.lo.s32 %r15, %r15, %r10;
  mad.lo.s32 %r16, %r13, %r15, %r14;
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r16, 32;
  add.s64 %rd2, %rd0, %rd1;
  st.global.v4.u32 [%rd2], {%r0, %r1, %r2, %r3};
  st.global.v4.u32 [%rd2+16], {%r4, %r5, %r6, %r7};
  ret;
}
)";

TEST_F(PtxSyncTest, SpecialRegistersIn3DLaunch) {
  ASSERT_NO_FATAL_FAILURE(Load(kIds));
  const Dim3 grid{2, 3, 2}, block{4, 5, 3};  // 60 threads per block: 2 warps
  const uint32_t per_block = 60, threads = 12 * per_block;
  uint64_t out = Alloc(threads * 32);
  ASSERT_RUN(Run("ids", grid, block, 0, out));
  std::vector<uint32_t> expected;
  for (uint32_t bz = 0; bz < 2; ++bz)
    for (uint32_t by = 0; by < 3; ++by)
      for (uint32_t bx = 0; bx < 2; ++bx)
        for (uint32_t tz = 0; tz < 3; ++tz)
          for (uint32_t ty = 0; ty < 5; ++ty)
            for (uint32_t tx = 0; tx < 4; ++tx) {
              uint32_t lane = (tx + 4 * ty + 20 * tz) % 32;
              expected.insert(expected.end(), {tx, ty, tz, bx, by, bz, lane, (1u << lane) - 1});
            }
  EXPECT_EQ(Download<uint32_t>(out, threads * 8), expected);
}

// Thread t (lane t % 32) shuffles its value 100 + t with `shfl` and writes
// the result and the predicate to out[2t], out[2t+1]. %r3 = 31 - lane is
// there for per-lane source operands.
std::string ShuffleKernel(std::string_view shfl) {
  return std::string(kPtxHeader) + R"(
.visible .entry shuffle(.param .u64 p_out)
{
  .reg .pred %p1;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  add.u32 %r1, %r0, 100;
  mov.u32 %r4, %laneid;
  mov.u32 %r3, 31;
  sub.u32 %r3, %r3, %r4;
  )" + std::string(shfl) + R"(
  selp.u32 %r5, 1, 0, %p1;
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 8;
  add.s64 %rd2, %rd0, %rd1;
  st.global.v2.u32 [%rd2], {%r2, %r5};
  ret;
}
)";
}

struct ShuffleCase {
  const char* shfl;
  // Source lane and predicate for lane `l`, by the PTX shfl pseudo-code.
  uint32_t (*source)(uint32_t l);
  bool (*valid)(uint32_t l);
};

TEST_F(PtxSyncTest, ShuffleModesClampsAndPredicate) {
  const ShuffleCase cases[] = {
      // up 3 (c = 0): lanes >= 3 read lane - 3; the rest keep their own value.
      {"shfl.sync.up.b32 %r2|%p1, %r1, 3, 0, 0xffffffff;", [](uint32_t l) { return l >= 3 ? l - 3 : l; },
       [](uint32_t l) { return l >= 3; }},
      // down 5 (c = 0x1f): lanes <= 26 read lane + 5.
      {"shfl.sync.down.b32 %r2|%p1, %r1, 5, 0x1f, 0xffffffff;", [](uint32_t l) { return l <= 26 ? l + 5 : l; },
       [](uint32_t l) { return l <= 26; }},
      // bfly 6: lane ^ 6, always in range.
      {"shfl.sync.bfly.b32 %r2|%p1, %r1, 6, 0x1f, 0xffffffff;", [](uint32_t l) { return l ^ 6u; },
       [](uint32_t) { return true; }},
      // idx 7: everyone reads lane 7.
      {"shfl.sync.idx.b32 %r2|%p1, %r1, 7, 0x1f, 0xffffffff;", [](uint32_t) { return 7u; },
       [](uint32_t) { return true; }},
      // idx with a per-lane source (31 - lane): a reversal.
      {"shfl.sync.idx.b32 %r2|%p1, %r1, %r3, 0x1f, 0xffffffff;", [](uint32_t l) { return 31 - l; },
       [](uint32_t) { return true; }},
      // Segments of 8 lanes (c = (32 - 8) << 8 | 0x1f = 0x181f): down 2 stays
      // inside the lane's segment.
      {"shfl.sync.down.b32 %r2|%p1, %r1, 2, 0x181f, 0xffffffff;",
       [](uint32_t l) { return l % 8 <= 5 ? l + 2 : l; }, [](uint32_t l) { return l % 8 <= 5; }},
      // idx 3 in segments of 8: the segment's lane 3.
      {"shfl.sync.idx.b32 %r2|%p1, %r1, 3, 0x181f, 0xffffffff;", [](uint32_t l) { return (l & ~7u) + 3; },
       [](uint32_t) { return true; }},
      // up 2 in segments of 8 (c = 0x1800): lanes 2..7 of each segment.
      {"shfl.sync.up.b32 %r2|%p1, %r1, 2, 0x1800, 0xffffffff;",
       [](uint32_t l) { return l % 8 >= 2 ? l - 2 : l; }, [](uint32_t l) { return l % 8 >= 2; }},
  };
  for (const ShuffleCase& k : cases) {
    Status s = LoadPtx(ShuffleKernel(k.shfl));
    ASSERT_TRUE(s.ok()) << s.message();
    uint64_t out = Alloc(64 * 8);
    ASSERT_RUN(Run("shuffle", Dim3{1}, Dim3{64}, 0, out));
    std::vector<uint32_t> expected;
    for (uint32_t t = 0; t < 64; ++t) {
      uint32_t warp_base = t & ~31u, lane = t % 32;
      expected.push_back(100 + warp_base + k.source(lane));
      expected.push_back(k.valid(lane) ? 1 : 0);
    }
    EXPECT_EQ(Download<uint32_t>(out, 128), expected) << k.shfl;
  }
}

// Only lanes 0..15 run the shuffle (membermask 0x0000ffff); the others keep
// the sentinel 0xDEAD.
constexpr std::string_view kPartialShuffle = R"(
.visible .entry partial_shuffle(.param .u64 p_out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %laneid;
  add.u32 %r1, %r0, 100;
  mov.u32 %r2, 0xDEAD;
  setp.ge.u32 %p1, %r0, 16;
  @%p1 bra $skip;
  shfl.sync.bfly.b32 %r2, %r1, 1, 0x1f, 0x0000ffff;
$skip:
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r2;
  ret;
}
)";

TEST_F(PtxSyncTest, ShuffleWithinAPartialMask) {
  ASSERT_NO_FATAL_FAILURE(Load(kPartialShuffle));
  uint64_t out = Alloc(32 * 4);
  ASSERT_RUN(Run("partial_shuffle", Dim3{1}, Dim3{32}, 0, out));
  std::vector<uint32_t> expected;
  for (uint32_t l = 0; l < 32; ++l) expected.push_back(l < 16 ? 100 + (l ^ 1) : 0xDEAD);
  EXPECT_EQ(Download<uint32_t>(out, 32), expected);
}

// Lanes exchange through shared memory ordered by bar.warp.sync (what
// __syncwarp compiles to), with a membar.cta for good measure: lane l
// writes smem[warp][l] and reads smem[warp][31 - l]. The race checker must
// accept the warp barrier as ordering.
constexpr std::string_view kWarpSync = R"(
.visible .entry warp_exchange(.param .u64 p_out)
{
  .shared .align 4 .b32 smem[64];
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %laneid;
  sub.u32 %r2, %r0, %r1;
  mov.u32 %r3, smem;
  shl.b32 %r4, %r0, 2;
  add.u32 %r5, %r3, %r4;
  mul.lo.u32 %r6, %r0, 11;
  st.shared.u32 [%r5], %r6;
  membar.cta;
  bar.warp.sync 0xffffffff;
  mov.u32 %r7, 31;
  sub.u32 %r7, %r7, %r1;
  add.u32 %r7, %r7, %r2;
  shl.b32 %r8, %r7, 2;
  add.u32 %r8, %r3, %r8;
  ld.shared.u32 %r9, [%r8];
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r9;
  ret;
}
)";

TEST_F(PtxSyncTest, WarpBarrierOrdersSharedMemoryWithinAWarp) {
  ASSERT_NO_FATAL_FAILURE(Load(kWarpSync));
  std::vector<uint32_t> expected;
  for (uint32_t t = 0; t < 64; ++t) expected.push_back(11 * ((t & ~31u) + 31 - t % 32));
  // The exchanged values, without the race checker...
  checks_.race_check = false;
  uint64_t out = Alloc(64 * 4);
  ASSERT_RUN(Run("warp_exchange", Dim3{1}, Dim3{64}, 0, out));
  EXPECT_EQ(Download<uint32_t>(out, 64), expected);
  // ...and with it: PTX ISA, bar.warp.sync "also guarantees memory ordering
  // among threads participating in barrier", so there is no race to report.
  checks_.race_check = true;
  StatusOr<KilnEmuCounters> checked = Run("warp_exchange", Dim3{1}, Dim3{64}, 0, out);
  EXPECT_TRUE(checked.ok()) << checked.status().message();
}

// Votes on q = (tid % 3 == 0) and on the always-true (tid < 1000):
// out[6t..6t+5] = ballot(q), all(q), any(q), uni(q), all(true), uni(true).
constexpr std::string_view kVote = R"(
.visible .entry vote(.param .u64 p_out)
{
  .reg .pred %p<8>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  rem.u32 %r1, %r0, 3;
  setp.eq.u32 %p1, %r1, 0;
  setp.lt.u32 %p2, %r0, 1000;
  vote.sync.ballot.b32 %r2, %p1, 0xffffffff;
  vote.sync.all.pred %p3, %p1, 0xffffffff;
  vote.sync.any.pred %p4, %p1, 0xffffffff;
  vote.sync.uni.pred %p5, %p1, 0xffffffff;
  vote.sync.all.pred %p6, %p2, 0xffffffff;
  vote.sync.uni.pred %p7, %p2, 0xffffffff;
  selp.u32 %r3, 1, 0, %p3;
  selp.u32 %r4, 1, 0, %p4;
  selp.u32 %r5, 1, 0, %p5;
  selp.u32 %r6, 1, 0, %p6;
  selp.u32 %r7, 1, 0, %p7;
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 24;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r2;
  st.global.u32 [%rd2+4], %r3;
  st.global.u32 [%rd2+8], %r4;
  st.global.u32 [%rd2+12], %r5;
  st.global.u32 [%rd2+16], %r6;
  st.global.u32 [%rd2+20], %r7;
  ret;
}
)";

TEST_F(PtxSyncTest, Votes) {
  ASSERT_NO_FATAL_FAILURE(Load(kVote));
  uint64_t out = Alloc(64 * 24);
  ASSERT_RUN(Run("vote", Dim3{1}, Dim3{64}, 0, out));
  std::vector<uint32_t> expected;
  for (uint32_t t = 0; t < 64; ++t) {
    uint32_t ballot = 0;
    for (uint32_t l = 0; l < 32; ++l)
      if (((t & ~31u) + l) % 3 == 0) ballot |= 1u << l;
    expected.insert(expected.end(), {ballot, 0, 1, 0, 1, 1});
  }
  EXPECT_EQ(Download<uint32_t>(out, 64 * 6), expected);
}

// Every lane of a warp reduces over the warp: add/min/max of signed and
// unsigned values and the bitwise and/or/xor.
constexpr std::string_view kRedux = R"(
.visible .entry redux(.param .u64 p_out)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %laneid;
  mul.lo.u32 %r2, %r1, %r1;
  add.u32 %r2, %r2, 1;
  mul.lo.u32 %r3, %r1, 7;
  mov.u32 %r4, 50;
  sub.u32 %r4, %r4, %r3;
  mov.u32 %r5, 1;
  shl.b32 %r5, %r5, %r1;
  not.b32 %r6, %r5;
  mul.lo.u32 %r7, %r1, 0x01010101;
  redux.sync.add.u32 %r10, %r2, 0xffffffff;
  redux.sync.min.s32 %r11, %r4, 0xffffffff;
  redux.sync.max.s32 %r12, %r4, 0xffffffff;
  redux.sync.max.u32 %r13, %r2, 0xffffffff;
  redux.sync.min.u32 %r14, %r4, 0xffffffff;
  redux.sync.and.b32 %r15, %r6, 0xffffffff;
  redux.sync.or.b32 %r16, %r5, 0xffffffff;
  redux.sync.xor.b32 %r17, %r7, 0xffffffff;
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 32;
  add.s64 %rd2, %rd0, %rd1;
  st.global.v4.u32 [%rd2], {%r10, %r11, %r12, %r13};
  st.global.v4.u32 [%rd2+16], {%r14, %r15, %r16, %r17};
  ret;
}
)";

TEST_F(PtxSyncTest, WarpReductions) {
  ASSERT_NO_FATAL_FAILURE(Load(kRedux));
  uint64_t out = Alloc(32 * 32);
  ASSERT_RUN(Run("redux", Dim3{1}, Dim3{32}, 0, out));
  uint32_t add = 0, max_u = 0, min_u = 0xFFFFFFFFu, and_all = 0xFFFFFFFFu, or_all = 0, xor_all = 0;
  int32_t min_s = INT32_MAX, max_s = INT32_MIN;
  for (uint32_t l = 0; l < 32; ++l) {
    uint32_t sq = l * l + 1;
    int32_t v = 50 - 7 * static_cast<int32_t>(l);
    add += sq;
    max_u = std::max(max_u, sq);
    min_s = std::min(min_s, v);
    max_s = std::max(max_s, v);
    min_u = std::min(min_u, static_cast<uint32_t>(v));
    and_all &= ~(1u << l);
    or_all |= 1u << l;
    xor_all ^= l * 0x01010101u;
  }
  std::vector<uint32_t> row = {add, static_cast<uint32_t>(min_s), static_cast<uint32_t>(max_s), max_u,
                               min_u, and_all, or_all, xor_all};
  std::vector<uint32_t> expected;
  for (int l = 0; l < 32; ++l) expected.insert(expected.end(), row.begin(), row.end());
  EXPECT_EQ(Download<uint32_t>(out, 32 * 8), expected);
}

// activemask everywhere (out[2t]) and inside a branch taken by lanes with
// t % 4 == 0 (out[2t+1], else 0). Block of 48 threads: the second warp has
// 16 lanes.
constexpr std::string_view kActiveMask = R"(
.visible .entry active(.param .u64 p_out)
{
  .reg .pred %p1;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  activemask.b32 %r1;
  mov.u32 %r2, 0;
  and.b32 %r3, %r0, 3;
  setp.ne.u32 %p1, %r3, 0;
  @%p1 bra $join;
  activemask.b32 %r2;
$join:
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 8;
  add.s64 %rd2, %rd0, %rd1;
  st.global.v2.u32 [%rd2], {%r1, %r2};
  ret;
}
)";

TEST_F(PtxSyncTest, ActiveMask) {
  ASSERT_NO_FATAL_FAILURE(Load(kActiveMask));
  uint64_t out = Alloc(48 * 8);
  ASSERT_RUN(Run("active", Dim3{1}, Dim3{48}, 0, out));
  std::vector<uint32_t> expected;
  for (uint32_t t = 0; t < 48; ++t) {
    uint32_t full = t < 32 ? 0xFFFFFFFFu : 0x0000FFFFu;
    uint32_t branch = t < 32 ? 0x11111111u : 0x00001111u;
    expected.insert(expected.end(), {full, t % 4 == 0 ? branch : 0u});
  }
  EXPECT_EQ(Download<uint32_t>(out, 96), expected);
}

// 2048 threads hit the same words of c[] with every integer atomic:
//   c[0] += i % 7 + 1            c[1] = min(c[1], v)     c[2] = max(c[2], v)
//   c[3] = max.u32(c[3], h)      c[4] <-> i + 1 (exch; olds[i] = old)
//   c[6] inc with limit 100      c[7] dec with limit 100
//   c[8] &= ~(1 << i % 16)       c[9] |= 1 << i % 32     c[10] ^= h
// with v = (37 i mod 2048) - 1000 and h = i * 2654435761 (mod 2^32).
constexpr std::string_view kAtomics = R"(
.visible .entry atomics(.param .u64 p_c, .param .u64 p_olds)
{
  .reg .b32 %r<24>;
  .reg .b64 %rd<6>;
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %ntid.x;
  mov.u32 %r2, %tid.x;
  mad.lo.s32 %r3, %r0, %r1, %r2;
  ld.param.u64 %rd0, [p_c];
  cvta.to.global.u64 %rd0, %rd0;
  rem.u32 %r4, %r3, 7;
  add.u32 %r4, %r4, 1;
  atom.global.add.u32 %r5, [%rd0], %r4;
  mul.lo.u32 %r6, %r3, 37;
  and.b32 %r6, %r6, 2047;
  sub.s32 %r6, %r6, 1000;
  atom.global.min.s32 %r7, [%rd0+4], %r6;
  atom.global.max.s32 %r8, [%rd0+8], %r6;
  mul.lo.u32 %r9, %r3, 0x9E3779B1;
  atom.global.max.u32 %r10, [%rd0+12], %r9;
  add.u32 %r11, %r3, 1;
  atom.global.exch.b32 %r12, [%rd0+16], %r11;
  atom.global.inc.u32 %r13, [%rd0+24], 100;
  atom.global.dec.u32 %r14, [%rd0+28], 100;
  and.b32 %r15, %r3, 15;
  mov.u32 %r16, 1;
  shl.b32 %r16, %r16, %r15;
  not.b32 %r16, %r16;
  atom.global.and.b32 %r17, [%rd0+32], %r16;
  and.b32 %r15, %r3, 31;
  mov.u32 %r18, 1;
  shl.b32 %r18, %r18, %r15;
  atom.global.or.b32 %r19, [%rd0+36], %r18;
  atom.global.xor.b32 %r20, [%rd0+40], %r9;
  ld.param.u64 %rd1, [p_olds];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r12;
  ret;
}
)";

TEST_F(PtxSyncTest, GlobalIntegerAtomicsOnOneAddress) {
  ASSERT_NO_FATAL_FAILURE(Load(kAtomics));
  const uint32_t n = 2048;
  std::vector<uint32_t> init(11, 0);
  init[1] = 0x7FFFFFFFu;  // min identity
  init[2] = 0x80000000u;  // max identity (INT_MIN)
  init[8] = 0xFFFFFFFFu;
  uint64_t c = Upload(init), olds = Alloc(n * 4);
  ASSERT_RUN(Run("atomics", Dim3{8}, Dim3{256}, 0, c, olds));
  uint32_t add = 0, max_u = 0, xor_all = 0;
  int32_t min_s = INT32_MAX, max_s = INT32_MIN;
  for (uint32_t i = 0; i < n; ++i) {
    add += i % 7 + 1;
    int32_t v = static_cast<int32_t>((i * 37) % 2048) - 1000;
    min_s = std::min(min_s, v);
    max_s = std::max(max_s, v);
    uint32_t h = i * 2654435761u;
    max_u = std::max(max_u, h);
    xor_all ^= h;
  }
  std::vector<uint32_t> got = Download<uint32_t>(c, 11);
  EXPECT_EQ(got[0], add);
  EXPECT_EQ(static_cast<int32_t>(got[1]), min_s);
  EXPECT_EQ(static_cast<int32_t>(got[2]), max_s);
  EXPECT_EQ(got[3], max_u);
  // inc: old >= 100 ? 0 : old + 1, 2048 times from 0 -> 2048 mod 101 = 28.
  // dec: old == 0 || old > 100 ? 100 : old - 1, 2048 times from 0 ->
  // -2048 mod 101 = 73.
  EXPECT_EQ(got[6], 28u);
  EXPECT_EQ(got[7], 73u);
  EXPECT_EQ(got[8], 0xFFFF0000u);
  EXPECT_EQ(got[9], 0xFFFFFFFFu);
  EXPECT_EQ(got[10], xor_all);
  // exch: the old values and the final value are the initial 0 and every
  // thread's i + 1, each exactly once.
  std::vector<uint32_t> seen = Download<uint32_t>(olds, n);
  seen.push_back(got[4]);
  std::sort(seen.begin(), seen.end());
  std::vector<uint32_t> all(n + 1);
  std::iota(all.begin(), all.end(), 0u);
  EXPECT_EQ(seen, all);
}

// A lock-free increment: each thread retries atom.cas until its own update
// lands. Lanes of one warp contend on the same word, so all but one retry.
constexpr std::string_view kCasLoop = R"(
.visible .entry cas_increment(.param .u64 p_counter)
{
  .reg .pred %p1;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd0, [p_counter];
  cvta.to.global.u64 %rd0, %rd0;
$retry:
  ld.volatile.global.u32 %r1, [%rd0];
  add.u32 %r2, %r1, 1;
  atom.global.cas.b32 %r3, [%rd0], %r1, %r2;
  setp.ne.u32 %p1, %r3, %r1;
  @%p1 bra $retry;
  ret;
}
)";

TEST_F(PtxSyncTest, CompareAndSwapLoop) {
  ASSERT_NO_FATAL_FAILURE(Load(kCasLoop));
  uint64_t counter = Upload(std::vector<uint32_t>{0});
  ASSERT_RUN(Run("cas_increment", Dim3{8}, Dim3{256}, 0, counter));
  EXPECT_EQ(Download<uint32_t>(counter, 1), (std::vector<uint32_t>{2048}));
}

// Float and 64-bit atomics: c64[0] += i + 2^32 (u64), c64[1] <-> i + 2^32
// (exch.b64), c64[2] = i + 2^32 if it is still 0 (cas.b64: only the first
// thread's lands), d[0] += 0.5 i (f64), f[0] += i + 1 (red.f32), f[1] += 1
// via atom.add.f32 (old values kept).
constexpr std::string_view kWideAtomics = R"(
.visible .entry wide_atomics(.param .u64 p_c64, .param .u64 p_d, .param .u64 p_f, .param .u64 p_olds)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<12>;
  .reg .f32 %f<4>;
  .reg .f64 %fd<4>;
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %ntid.x;
  mov.u32 %r2, %tid.x;
  mad.lo.s32 %r3, %r0, %r1, %r2;
  ld.param.u64 %rd0, [p_c64];
  ld.param.u64 %rd1, [p_d];
  ld.param.u64 %rd2, [p_f];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvt.u64.u32 %rd3, %r3;
  add.s64 %rd4, %rd3, 4294967296;
  atom.global.add.u64 %rd5, [%rd0], %rd4;
  cvt.rn.f64.u32 %fd1, %r3;
  mul.f64 %fd2, %fd1, 0d3FE0000000000000;
  atom.global.add.f64 %fd3, [%rd1], %fd2;
  add.u32 %r4, %r3, 1;
  cvt.rn.f32.u32 %f1, %r4;
  red.global.add.f32 [%rd2], %f1;
  atom.global.add.f32 %f2, [%rd2+4], 0f3F800000;
  atom.global.exch.b64 %rd9, [%rd0+8], %rd4;
  atom.global.cas.b64 %rd10, [%rd0+16], 0, %rd4;
  ld.param.u64 %rd6, [p_olds];
  cvta.to.global.u64 %rd6, %rd6;
  mul.wide.u32 %rd7, %r3, 4;
  add.s64 %rd8, %rd6, %rd7;
  st.global.f32 [%rd8], %f2;
  ret;
}
)";

TEST_F(PtxSyncTest, FloatAndWideAtomics) {
  ASSERT_NO_FATAL_FAILURE(Load(kWideAtomics));
  const uint32_t n = 2048;
  uint64_t c64 = Upload(std::vector<uint64_t>{0, 0, 0}), d = Upload(std::vector<double>{0.0});
  uint64_t f = Upload(std::vector<float>{0.0f, 0.0f}), olds = Alloc(n * 4);
  ASSERT_RUN(Run("wide_atomics", Dim3{8}, Dim3{256}, 0, c64, d, f, olds));
  // sum(i + 2^32) = 2047 * 2048 / 2 + 2048 * 2^32.
  std::vector<uint64_t> wide = Download<uint64_t>(c64, 3);
  EXPECT_EQ(wide[0], 2096128ull + (2048ull << 32));
  // exch and cas leave one thread's value i + 2^32, i < 2048.
  EXPECT_EQ(wide[1] >> 32, 1u);
  EXPECT_LT(wide[1] & 0xFFFFFFFFu, 2048u);
  EXPECT_EQ(wide[2] >> 32, 1u);
  EXPECT_LT(wide[2] & 0xFFFFFFFFu, 2048u);
  // 0.5 * 2096128 = 1048064, exact in any order.
  EXPECT_EQ(Download<double>(d, 1), (std::vector<double>{1048064.0}));
  // 1 + ... + 2048 = 2098176 < 2^24: every partial sum is an integer a float
  // holds exactly, so the order does not matter.
  std::vector<float> sums = Download<float>(f, 2);
  EXPECT_EQ(sums[0], 2098176.0f);
  EXPECT_EQ(sums[1], 2048.0f);
  // atom.add.f32 returned each of 0, 1, ..., 2047 exactly once.
  std::vector<float> old = Download<float>(olds, n);
  std::sort(old.begin(), old.end());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(old[i], static_cast<float>(i)) << i;
}

// A per-block histogram in shared memory: 256 threads add 1 to bin
// tid % 16 and take the max of their tid in bins[16]; then threads < 17
// copy the bins out.
constexpr std::string_view kSharedAtomics = R"(
.visible .entry histogram(.param .u64 p_out)
{
  .shared .align 4 .b32 bins[17];
  .reg .pred %p1;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, bins;
  shl.b32 %r2, %r0, 2;
  add.u32 %r3, %r1, %r2;
  setp.lt.u32 %p1, %r0, 17;
  @%p1 st.shared.u32 [%r3], 0;
  bar.sync 0;
  and.b32 %r4, %r0, 15;
  shl.b32 %r5, %r4, 2;
  add.u32 %r6, %r1, %r5;
  atom.shared.add.u32 %r7, [%r6], 1;
  atom.shared.max.u32 %r8, [%r1+64], %r0;
  bar.sync 0;
  @!%p1 bra $done;
  ld.shared.u32 %r9, [%r3];
  mov.u32 %r10, %ctaid.x;
  mad.lo.s32 %r11, %r10, 17, %r0;
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r11, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r9;
$done:
  ret;
}
)";

TEST_F(PtxSyncTest, SharedMemoryAtomics) {
  ASSERT_NO_FATAL_FAILURE(Load(kSharedAtomics));
  uint64_t out = Alloc(3 * 17 * 4);
  ASSERT_RUN(Run("histogram", Dim3{3}, Dim3{256}, 0, out));
  std::vector<uint32_t> expected;
  for (int b = 0; b < 3; ++b) {
    for (int k = 0; k < 16; ++k) expected.push_back(16);
    expected.push_back(255);
  }
  EXPECT_EQ(Download<uint32_t>(out, 3 * 17), expected);
}

// Odd and even lanes take different loops, reconverge, and then exchange
// results with their neighbour (shfl.bfly 1, which needs all 32 lanes):
//   odd lane l:  x = 0 + 1 + ... + (l - 1)
//   even lane l: x = 3^(l % 5)
// out[2t] = x, out[2t+1] = the neighbour's x.
constexpr std::string_view kDivergent = R"(
.visible .entry divergent(.param .u64 p_out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %laneid;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra $even;
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
$odd_loop:
  setp.ge.u32 %p2, %r4, %r1;
  @%p2 bra $join;
  add.u32 %r3, %r3, %r4;
  add.u32 %r4, %r4, 1;
  bra $odd_loop;
$even:
  mov.u32 %r3, 1;
  rem.u32 %r5, %r1, 5;
$even_loop:
  setp.eq.u32 %p3, %r5, 0;
  @%p3 bra $join;
  mul.lo.u32 %r3, %r3, 3;
  sub.u32 %r5, %r5, 1;
  bra $even_loop;
$join:
  shfl.sync.bfly.b32 %r6, %r3, 1, 0x1f, 0xffffffff;
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 8;
  add.s64 %rd2, %rd0, %rd1;
  st.global.v2.u32 [%rd2], {%r3, %r6};
  ret;
}
)";

TEST_F(PtxSyncTest, DivergentBranchesReconvergeBeforeShuffle) {
  ASSERT_NO_FATAL_FAILURE(Load(kDivergent));
  uint64_t out = Alloc(64 * 8);
  ASSERT_RUN(Run("divergent", Dim3{1}, Dim3{64}, 0, out));
  auto x = [](uint32_t l) {
    if (l % 2) return l * (l - 1) / 2;
    uint32_t p = 1;
    for (uint32_t k = 0; k < l % 5; ++k) p *= 3;
    return p;
  };
  std::vector<uint32_t> expected;
  for (uint32_t t = 0; t < 64; ++t) expected.insert(expected.end(), {x(t % 32), x((t % 32) ^ 1)});
  EXPECT_EQ(Download<uint32_t>(out, 128), expected);
}

// Thread i iterates x = 3x + 1 (mod 2^32) i % 37 times starting from x = i.
constexpr std::string_view kTripCounts = R"(
.visible .entry trips(.param .u64 p_out)
{
  .reg .pred %p1;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %ntid.x;
  mov.u32 %r2, %tid.x;
  mad.lo.s32 %r3, %r0, %r1, %r2;
  mov.u32 %r4, %r3;
  rem.u32 %r5, %r3, 37;
$loop:
  setp.eq.u32 %p1, %r5, 0;
  @%p1 bra $done;
  mad.lo.u32 %r4, %r4, 3, 1;
  sub.u32 %r5, %r5, 1;
  bra.uni $loop;
$done:
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r3, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r4;
  ret;
}
)";

TEST_F(PtxSyncTest, LoopWithPerLaneTripCounts) {
  ASSERT_NO_FATAL_FAILURE(Load(kTripCounts));
  uint64_t out = Alloc(1024 * 4);
  ASSERT_RUN(Run("trips", Dim3{4}, Dim3{256}, 0, out));
  std::vector<uint32_t> expected;
  for (uint32_t i = 0; i < 1024; ++i) {
    uint32_t x = i;
    for (uint32_t k = 0; k < i % 37; ++k) x = 3 * x + 1;
    expected.push_back(x);
  }
  EXPECT_EQ(Download<uint32_t>(out, 1024), expected);
}

// Threads t >= n return at once; the others stage in[t] in shared memory,
// meet at a barrier and write out[t] = in[n - 1 - t]. Exited threads must
// not hold the barrier up.
constexpr std::string_view kEarlyExit = R"(
.visible .entry early_exit(.param .u64 p_in, .param .u64 p_out, .param .u32 p_n)
{
  .shared .align 4 .b32 smem[128];
  .reg .pred %p1;
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  mov.u32 %r0, %tid.x;
  ld.param.u32 %r1, [p_n];
  setp.ge.u32 %p1, %r0, %r1;
  @%p1 ret;
  ld.param.u64 %rd0, [p_in];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 4;
  add.s64 %rd2, %rd0, %rd1;
  ld.global.u32 %r2, [%rd2];
  mov.u32 %r3, smem;
  shl.b32 %r4, %r0, 2;
  add.u32 %r5, %r3, %r4;
  st.shared.u32 [%r5], %r2;
  bar.sync 0;
  sub.u32 %r6, %r1, 1;
  sub.u32 %r6, %r6, %r0;
  shl.b32 %r7, %r6, 2;
  add.u32 %r8, %r3, %r7;
  ld.shared.u32 %r9, [%r8];
  ld.param.u64 %rd3, [p_out];
  cvta.to.global.u64 %rd3, %rd3;
  add.s64 %rd4, %rd3, %rd1;
  st.global.u32 [%rd4], %r9;
  ret;
}
)";

TEST_F(PtxSyncTest, EarlyReturnBeforeBarrier) {
  ASSERT_NO_FATAL_FAILURE(Load(kEarlyExit));
  std::vector<uint32_t> in(128);
  for (uint32_t i = 0; i < 128; ++i) in[i] = 5000 + i;
  for (uint32_t n : {100u, 40u}) {
    uint64_t a = Upload(in), out = Upload(std::vector<uint32_t>(128, 0xFFFFFFFFu));
    ASSERT_RUN(Run("early_exit", Dim3{1}, Dim3{128}, 0, a, out, n));
    std::vector<uint32_t> expected(128, 0xFFFFFFFFu);
    for (uint32_t t = 0; t < n; ++t) expected[t] = in[n - 1 - t];
    EXPECT_EQ(Download<uint32_t>(out, 128), expected) << "n = " << n;
  }
}

}  // namespace
}  // namespace kiln::emu::testing
