// The emulator's checkers, one negative test each (with the matching
// positive case where there is one): memcheck on global stores past an
// allocation, use after free and misaligned accesses; the shared-memory race
// checker (a missing barrier); the loader's rejection of instructions it
// does not implement; shared accesses past the launch's dynamic size; the
// optional uninitialized-read check; and trap.
//
// Each report must say where the fault is: kernel, block, thread, PTX line
// and address. The PTX line is found in the test's own text by searching
// for the faulting instruction, not taken from the emulator.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"

namespace kiln::emu::testing {
namespace {

// 1-based line of the first line of `text` containing `needle`.
int LineOf(std::string_view text, std::string_view needle) {
  size_t at = text.find(needle);
  if (at == std::string_view::npos) return -1;
  int line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  return line;
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

class PtxChecksTest : public EmulatorTest {
 protected:
  std::string Load(std::string_view body) {
    std::string text = std::string(kPtxHeader) + std::string(body);
    Status s = LoadPtx(text);
    EXPECT_TRUE(s.ok()) << s.message();
    return text;
  }
};

// Thread i stores i to p[i]; p has `n` valid elements.
constexpr std::string_view kStoreIndex = R"(
.visible .entry store_index(.param .u64 p)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %ntid.x;
  mov.u32 %r2, %tid.x;
  mad.lo.s32 %r3, %r0, %r1, %r2;
  ld.param.u64 %rd0, [p];
  mul.wide.u32 %rd1, %r3, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r3;
  ret;
}
)";

TEST_F(PtxChecksTest, StorePastTheEndOfAnAllocation) {
  std::string text = Load(kStoreIndex);
  int line = LineOf(text, "st.global.u32 [%rd2], %r3;");
  // 256 bytes hold 64 words: 2 blocks of 32 threads fit exactly; 5 blocks
  // of 13 threads are 65, and only the last, block (4,0,0) thread (12,0,0),
  // stores to word 64, just past the end.
  uint64_t p = Alloc(256);
  StatusOr<KilnEmuCounters> ok = Run("store_index", Dim3{2}, Dim3{32}, 0, p);
  EXPECT_TRUE(ok.ok()) << ok.status().message();
  StatusOr<KilnEmuCounters> r = Run("store_index", Dim3{5}, Dim3{13}, 0, p);
  ASSERT_FALSE(r.ok());
  std::string m = r.status().message();
  EXPECT_NE(m.find("store_index"), std::string::npos) << m;
  EXPECT_NE(m.find("block (4,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("thread (12,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("PTX line " + std::to_string(line)), std::string::npos) << m;
  EXPECT_NE(m.find(Hex(p + 256)), std::string::npos) << m;
}

// out[0] = *p.
constexpr std::string_view kLoadOne = R"(
.visible .entry load_one(.param .u64 p, .param .u64 out)
{
  .reg .b32 %r1;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd0, [p];
  ld.global.u32 %r1, [%rd0];
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

TEST_F(PtxChecksTest, UseAfterFree) {
  std::string text = Load(kLoadOne);
  int line = LineOf(text, "ld.global.u32 %r1, [%rd0];");
  uint64_t out = Alloc(4);
  uint64_t p = Upload(std::vector<uint32_t>{42});
  ASSERT_TRUE(Run("load_one", Dim3{1}, Dim3{1}, 0, p, out).ok());
  EXPECT_EQ(Download<uint32_t>(out, 1), (std::vector<uint32_t>{42}));
  ASSERT_TRUE(memory().Free(p, MemoryKind::kDevice).ok());
  StatusOr<KilnEmuCounters> r = Run("load_one", Dim3{1}, Dim3{1}, 0, p, out);
  ASSERT_FALSE(r.ok());
  std::string m = r.status().message();
  EXPECT_NE(m.find("load_one"), std::string::npos) << m;
  EXPECT_NE(m.find("PTX line " + std::to_string(line)), std::string::npos) << m;
  EXPECT_NE(m.find(Hex(p)), std::string::npos) << m;
  EXPECT_NE(m.find("freed"), std::string::npos) << m;
}

TEST_F(PtxChecksTest, MisalignedAccess) {
  std::string text = Load(kLoadOne);
  int line = LineOf(text, "ld.global.u32 %r1, [%rd0];");
  uint64_t out = Alloc(4);
  uint64_t p = Upload(std::vector<uint32_t>{1, 2});
  // A 4-byte load from an address that is 2 mod 4 faults on a GPU.
  StatusOr<KilnEmuCounters> r = Run("load_one", Dim3{1}, Dim3{1}, 0, p + 2, out);
  ASSERT_FALSE(r.ok());
  std::string m = r.status().message();
  EXPECT_NE(m.find("load_one"), std::string::npos) << m;
  EXPECT_NE(m.find("PTX line " + std::to_string(line)), std::string::npos) << m;
  EXPECT_NE(m.find(Hex(p + 2)), std::string::npos) << m;
}

// Thread i writes smem[i] and reads smem[(i + 1) % 64], with or without a
// barrier in between; thread 31 reads what warp 1 writes and thread 63 what
// warp 0 writes.
std::string NeighbourKernel(bool with_barrier) {
  return std::string(R"(
.visible .entry neighbour(.param .u64 out)
{
  .shared .align 4 .b32 smem[64];
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, smem;
  shl.b32 %r2, %r0, 2;
  add.u32 %r3, %r1, %r2;
  st.shared.u32 [%r3], %r0;
)") + (with_barrier ? "  bar.sync 0;\n" : "") +
         R"(
  add.u32 %r4, %r0, 1;
  and.b32 %r4, %r4, 63;
  shl.b32 %r5, %r4, 2;
  add.u32 %r6, %r1, %r5;
  ld.shared.u32 %r7, [%r6];
  ld.param.u64 %rd0, [out];
  mul.wide.u32 %rd1, %r0, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r7;
  ret;
}
)";
}

TEST_F(PtxChecksTest, MissingBarrierIsARace) {
  Load(NeighbourKernel(/*with_barrier=*/false));
  uint64_t out = Alloc(64 * 4);
  StatusOr<KilnEmuCounters> r = Run("neighbour", Dim3{1}, Dim3{64}, 0, out);
  ASSERT_FALSE(r.ok());
  std::string m = r.status().message();
  EXPECT_NE(m.find("race"), std::string::npos) << m;
  EXPECT_NE(m.find("neighbour"), std::string::npos) << m;
}

TEST_F(PtxChecksTest, WithTheBarrierThereIsNoRace) {
  Load(NeighbourKernel(/*with_barrier=*/true));
  uint64_t out = Alloc(64 * 4);
  StatusOr<KilnEmuCounters> r = Run("neighbour", Dim3{1}, Dim3{64}, 0, out);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::vector<uint32_t> expected;
  for (uint32_t i = 0; i < 64; ++i) expected.push_back((i + 1) % 64);
  EXPECT_EQ(Download<uint32_t>(out, 64), expected);
}

TEST_F(PtxChecksTest, RaceCheckerCanBeTurnedOff) {
  Load(NeighbourKernel(/*with_barrier=*/false));
  checks_.race_check = false;
  uint64_t out = Alloc(64 * 4);
  StatusOr<KilnEmuCounters> r = Run("neighbour", Dim3{1}, Dim3{64}, 0, out);
  EXPECT_TRUE(r.ok()) << r.status().message();
}

TEST_F(PtxChecksTest, UnknownInstructionFailsToLoad) {
  std::string text = std::string(kPtxHeader) + R"(
.visible .entry odd(.param .u64 out)
{
  .reg .b32 %r<3>;
  mov.u32 %r1, 5;
  frobnicate.b32 %r1, %r2;
  ret;
}
)";
  int line = LineOf(text, "frobnicate");
  Status s = LoadPtx(text);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("frobnicate"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("PTX line " + std::to_string(line)), std::string::npos) << s.message();
}

// Thread 0 stores to word `idx` of the dynamic shared array.
constexpr std::string_view kDynamicStore = R"(
.extern .shared .align 16 .b8 dsmem[];
.visible .entry dynamic_store(.param .u32 idx)
{
  .reg .b32 %r<4>;
  mov.u32 %r0, dsmem;
  ld.param.u32 %r1, [idx];
  shl.b32 %r2, %r1, 2;
  add.u32 %r3, %r0, %r2;
  st.shared.u32 [%r3], %r1;
  ret;
}
)";

TEST_F(PtxChecksTest, SharedAccessBeyondTheDynamicSize) {
  std::string text = Load(kDynamicStore);
  int line = LineOf(text, "st.shared.u32 [%r3], %r1;");
  // 128 dynamic bytes hold words 0..31.
  StatusOr<KilnEmuCounters> ok = Run("dynamic_store", Dim3{1}, Dim3{1}, 128, uint32_t{31});
  EXPECT_TRUE(ok.ok()) << ok.status().message();
  StatusOr<KilnEmuCounters> r = Run("dynamic_store", Dim3{1}, Dim3{1}, 128, uint32_t{32});
  ASSERT_FALSE(r.ok());
  std::string m = r.status().message();
  EXPECT_NE(m.find("dynamic_store"), std::string::npos) << m;
  EXPECT_NE(m.find("shared"), std::string::npos) << m;
  EXPECT_NE(m.find("PTX line " + std::to_string(line)), std::string::npos) << m;
}

// out[i] = in[i] for i < n.
constexpr std::string_view kCopyN = R"(
.visible .entry copy_n(.param .u64 in, .param .u64 out, .param .u32 n)
{
  .reg .pred %p1;
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  mov.u32 %r0, %tid.x;
  ld.param.u32 %r1, [n];
  setp.ge.u32 %p1, %r0, %r1;
  @%p1 bra $done;
  ld.param.u64 %rd0, [in];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd0, %rd2;
  ld.global.u32 %r2, [%rd3];
  add.s64 %rd4, %rd1, %rd2;
  st.global.u32 [%rd4], %r2;
$done:
  ret;
}
)";

TEST_F(PtxChecksTest, UninitializedReadsOnlyWhenAsked) {
  std::string text = Load(kCopyN);
  int line = LineOf(text, "ld.global.u32 %r2, [%rd3];");
  // 64 words of which only the first 63 were written: only thread 63
  // reads an unwritten word, at in + 252.
  uint64_t in = Alloc(256), out = Alloc(256);
  std::vector<uint32_t> first(63, 7);
  ASSERT_TRUE(memory().CopyToDevice(in, first.data(), 63 * 4).ok());
  // Off by default: the copy runs and moves the 0xCB fill of the unwritten
  // word.
  StatusOr<KilnEmuCounters> off = Run("copy_n", Dim3{1}, Dim3{64}, 0, in, out, uint32_t{64});
  ASSERT_TRUE(off.ok()) << off.status().message();
  std::vector<uint32_t> expected(63, 7);
  expected.push_back(0xCBCBCBCBu);
  EXPECT_EQ(Download<uint32_t>(out, 64), expected);
  checks_.uninitialized = true;
  StatusOr<KilnEmuCounters> initialized_only = Run("copy_n", Dim3{1}, Dim3{64}, 0, in, out, uint32_t{63});
  EXPECT_TRUE(initialized_only.ok()) << initialized_only.status().message();
  StatusOr<KilnEmuCounters> r = Run("copy_n", Dim3{1}, Dim3{64}, 0, in, out, uint32_t{64});
  ASSERT_FALSE(r.ok());
  std::string m = r.status().message();
  EXPECT_NE(m.find("copy_n"), std::string::npos) << m;
  EXPECT_NE(m.find("thread (63,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("PTX line " + std::to_string(line)), std::string::npos) << m;
  EXPECT_NE(m.find(Hex(in + 252)), std::string::npos) << m;
}

// Thread 5 executes trap; a launch where no thread reaches it succeeds.
constexpr std::string_view kTrap = R"(
.visible .entry trapper(.param .u32 who)
{
  .reg .pred %p1;
  .reg .b32 %r<2>;
  mov.u32 %r0, %tid.x;
  ld.param.u32 %r1, [who];
  setp.eq.u32 %p1, %r0, %r1;
  @%p1 trap;
  ret;
}
)";

TEST_F(PtxChecksTest, TrapIsAnError) {
  std::string text = Load(kTrap);
  int line = LineOf(text, "@%p1 trap;");
  StatusOr<KilnEmuCounters> ok = Run("trapper", Dim3{1}, Dim3{32}, 0, uint32_t{99});
  EXPECT_TRUE(ok.ok()) << ok.status().message();
  StatusOr<KilnEmuCounters> r = Run("trapper", Dim3{1}, Dim3{32}, 0, uint32_t{5});
  ASSERT_FALSE(r.ok());
  std::string m = r.status().message();
  EXPECT_NE(m.find("trap"), std::string::npos) << m;
  EXPECT_NE(m.find("thread (5,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("PTX line " + std::to_string(line)), std::string::npos) << m;
}

}  // namespace
}  // namespace kiln::emu::testing
