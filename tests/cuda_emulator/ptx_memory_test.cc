// PTX memory instructions under the emulator: ld/st of every width with
// sign and zero extension, narrow stores, vector (.v2/.v4) accesses,
// ld.global.nc, kernel parameters of mixed sizes and alignments, static and
// dynamic shared memory (that they do not overlap and that the dynamic array
// keeps its declared alignment), per-thread local
// memory, generic addressing into global and shared memory through cvta,
// and module-scope .global/.const variables with initializers.
//
// The inputs are chosen by hand and every expected value is written out or
// computed on the host from them.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"

namespace kiln::emu::testing {
namespace {

class PtxMemoryTest : public EmulatorTest {};

// Thread i loads bytes[i] as u8 and s8 and halves[i] as u16 and s16 into
// 32-bit registers and stores the four words to out[4i..4i+3].
constexpr std::string_view kWidths = R"(
.visible .entry widths(.param .u64 p_bytes, .param .u64 p_halves, .param .u64 p_out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<10>;
  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd0, [p_bytes];
  ld.param.u64 %rd1, [p_halves];
  ld.param.u64 %rd2, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvt.u64.u32 %rd3, %r0;
  add.s64 %rd4, %rd0, %rd3;
  ld.global.u8 %r1, [%rd4];
  ld.global.s8 %r2, [%rd4];
  mul.wide.u32 %rd5, %r0, 2;
  add.s64 %rd6, %rd1, %rd5;
  ld.global.u16 %r3, [%rd6];
  ld.global.s16 %r4, [%rd6];
  mul.wide.u32 %rd7, %r0, 16;
  add.s64 %rd8, %rd2, %rd7;
  st.global.u32 [%rd8], %r1;
  st.global.u32 [%rd8+4], %r2;
  st.global.u32 [%rd8+8], %r3;
  st.global.u32 [%rd8+12], %r4;
  ret;
}
)";

TEST_F(PtxMemoryTest, LoadWidthsExtendBySignedness) {
  ASSERT_NO_FATAL_FAILURE(Load(kWidths));
  std::vector<uint8_t> bytes = {0x00, 0x7F, 0x80, 0xFF, 0x01, 0xFE, 0x40, 0xC0};
  std::vector<uint16_t> halves = {0x0000, 0x7FFF, 0x8000, 0xFFFF, 0x0001, 0xFFFE, 0x1234, 0xABCD};
  uint64_t b = Upload(bytes), h = Upload(halves), out = Alloc(8 * 16);
  ASSERT_RUN(Run("widths", Dim3{1}, Dim3{8}, 0, b, h, out));
  std::vector<uint32_t> expected = {
      0x00, 0x00000000u, 0x0000, 0x00000000u,  //
      0x7F, 0x0000007Fu, 0x7FFF, 0x00007FFFu,  //
      0x80, 0xFFFFFF80u, 0x8000, 0xFFFF8000u,  //
      0xFF, 0xFFFFFFFFu, 0xFFFF, 0xFFFFFFFFu,  //
      0x01, 0x00000001u, 0x0001, 0x00000001u,  //
      0xFE, 0xFFFFFFFEu, 0xFFFE, 0xFFFFFFFEu,  //
      0x40, 0x00000040u, 0x1234, 0x00001234u,  //
      0xC0, 0xFFFFFFC0u, 0xABCD, 0xFFFFABCDu,
  };
  EXPECT_EQ(Download<uint32_t>(out, 32), expected);
}

// Thread i: w = words[i]; stores w's low byte to out8[i] and low half to
// out16[i]; copies the u64, f32 and f64 elements i.
constexpr std::string_view kStores = R"(
.visible .entry stores(.param .u64 p_words, .param .u64 p_longs, .param .u64 p_floats, .param .u64 p_doubles,
                       .param .u64 p_out8, .param .u64 p_out16, .param .u64 p_out64, .param .u64 p_outf,
                       .param .u64 p_outd)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<24>;
  .reg .f32 %f1;
  .reg .f64 %fd1;
  mov.u32 %r0, %tid.x;
  cvt.u64.u32 %rd0, %r0;
  mul.wide.u32 %rd1, %r0, 2;
  mul.wide.u32 %rd2, %r0, 4;
  mul.wide.u32 %rd3, %r0, 8;
  ld.param.u64 %rd4, [p_words];
  add.s64 %rd5, %rd4, %rd2;
  ld.global.u32 %r1, [%rd5];
  ld.param.u64 %rd6, [p_out8];
  add.s64 %rd7, %rd6, %rd0;
  st.global.u8 [%rd7], %r1;
  ld.param.u64 %rd8, [p_out16];
  add.s64 %rd9, %rd8, %rd1;
  st.global.u16 [%rd9], %r1;
  ld.param.u64 %rd10, [p_longs];
  add.s64 %rd11, %rd10, %rd3;
  ld.global.u64 %rd12, [%rd11];
  ld.param.u64 %rd13, [p_out64];
  add.s64 %rd14, %rd13, %rd3;
  st.global.u64 [%rd14], %rd12;
  ld.param.u64 %rd15, [p_floats];
  add.s64 %rd16, %rd15, %rd2;
  ld.global.f32 %f1, [%rd16];
  ld.param.u64 %rd17, [p_outf];
  add.s64 %rd18, %rd17, %rd2;
  st.global.f32 [%rd18], %f1;
  ld.param.u64 %rd19, [p_doubles];
  add.s64 %rd20, %rd19, %rd3;
  ld.global.f64 %fd1, [%rd20];
  ld.param.u64 %rd21, [p_outd];
  add.s64 %rd22, %rd21, %rd3;
  st.global.f64 [%rd22], %fd1;
  ret;
}
)";

TEST_F(PtxMemoryTest, StoresOfEveryWidth) {
  ASSERT_NO_FATAL_FAILURE(Load(kStores));
  std::vector<uint32_t> words = {0x12345678u, 0xFFFFFF80u, 0x0000ABCDu, 0x80000001u};
  std::vector<uint64_t> longs = {0x0123456789ABCDEFull, 0xFFFFFFFFFFFFFFFFull, 1, 0x8000000000000000ull};
  // A NaN with a payload: loads and stores move bits, they do not
  // canonicalize.
  std::vector<uint32_t> floats = {0x3F800000u, 0x7FC12345u, 0x80000000u, 0x00000001u};
  std::vector<uint64_t> doubles = {0x3FF0000000000000ull, 0x7FF0000000000123ull, 0x8000000000000000ull, 1};
  uint64_t w = Upload(words), l = Upload(longs), f = Upload(floats), d = Upload(doubles);
  uint64_t o8 = Alloc(4), o16 = Alloc(8), o64 = Alloc(32), of = Alloc(16), od = Alloc(32);
  ASSERT_RUN(Run("stores", Dim3{1}, Dim3{4}, 0, w, l, f, d, o8, o16, o64, of, od));
  EXPECT_EQ(Download<uint8_t>(o8, 4), (std::vector<uint8_t>{0x78, 0x80, 0xCD, 0x01}));
  EXPECT_EQ(Download<uint16_t>(o16, 4), (std::vector<uint16_t>{0x5678, 0xFF80, 0xABCD, 0x0001}));
  EXPECT_EQ(Download<uint64_t>(o64, 4), longs);
  EXPECT_EQ(Download<uint32_t>(of, 4), floats);
  EXPECT_EQ(Download<uint64_t>(od, 4), doubles);
}

// Thread i reverses the four words of in[4i..4i+3] with one v4 load and one
// v4 store, swaps the pair of doubles d[2i], d[2i+1] through v2, and copies
// words 1..2 of its group through a v2 access at an immediate offset.
constexpr std::string_view kVectors = R"(
.visible .entry vectors(.param .u64 p_in, .param .u64 p_out, .param .u64 p_din, .param .u64 p_dout,
                        .param .u64 p_mid)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<16>;
  .reg .f64 %fd<3>;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd0, %r0, 16;
  mul.wide.u32 %rd1, %r0, 8;
  ld.param.u64 %rd2, [p_in];
  ld.param.u64 %rd3, [p_out];
  add.s64 %rd4, %rd2, %rd0;
  add.s64 %rd5, %rd3, %rd0;
  ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd4];
  st.global.v4.u32 [%rd5], {%r4, %r3, %r2, %r1};
  ld.param.u64 %rd6, [p_din];
  ld.param.u64 %rd7, [p_dout];
  add.s64 %rd8, %rd6, %rd0;
  add.s64 %rd9, %rd7, %rd0;
  ld.global.v2.f64 {%fd1, %fd2}, [%rd8];
  st.global.v2.f64 [%rd9], {%fd2, %fd1};
  ld.param.u64 %rd10, [p_mid];
  add.s64 %rd11, %rd10, %rd1;
  ld.global.v2.u32 {%r5, %r6}, [%rd4+8];
  st.global.v2.u32 [%rd11], {%r5, %r6};
  ret;
}
)";

TEST_F(PtxMemoryTest, VectorLoadsAndStores) {
  ASSERT_NO_FATAL_FAILURE(Load(kVectors));
  std::vector<uint32_t> in;
  for (uint32_t i = 0; i < 32 * 4; ++i) in.push_back(1000 + i);
  std::vector<double> din;
  for (int i = 0; i < 64; ++i) din.push_back(0.5 * i);
  uint64_t a = Upload(in), out = Alloc(in.size() * 4), d = Upload(din), dout = Alloc(din.size() * 8);
  uint64_t mid = Alloc(32 * 8);
  ASSERT_RUN(Run("vectors", Dim3{1}, Dim3{32}, 0, a, out, d, dout, mid));
  std::vector<uint32_t> reversed, middle;
  std::vector<double> swapped;
  for (size_t g = 0; g < 32; ++g) {
    for (int k = 3; k >= 0; --k) reversed.push_back(in[4 * g + k]);
    swapped.push_back(din[2 * g + 1]);
    swapped.push_back(din[2 * g]);
    middle.push_back(in[4 * g + 2]);
    middle.push_back(in[4 * g + 3]);
  }
  EXPECT_EQ(Download<uint32_t>(out, in.size()), reversed);
  EXPECT_EQ(Download<double>(dout, din.size()), swapped);
  EXPECT_EQ(Download<uint32_t>(mid, 64), middle);
}

// Vector stores of immediates, negative ones included (LLVM emits
// `st.global.v4.b32 [%rd1], {-1, 0, 1, 2}` for constant iota kernels).
constexpr std::string_view kVectorImmediates = R"(
.visible .entry vector_imm(.param .u64 p_out)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd0, [p_out];
  st.global.v4.b32 [%rd0], {-1, 0, 1, -2147483648};
  st.global.v2.b32 [%rd0+16], {7, -7};
  ret;
}
)";

TEST_F(PtxMemoryTest, VectorStoresOfNegativeImmediates) {
  ASSERT_NO_FATAL_FAILURE(Load(kVectorImmediates));
  uint64_t out = Alloc(6 * 4);
  ASSERT_RUN(Run("vector_imm", Dim3{1}, Dim3{1}, 0, out));
  EXPECT_EQ(Download<int32_t>(out, 6), (std::vector<int32_t>{-1, 0, 1, INT32_MIN, 7, -7}));
}

// out[i] = in[i] + in[i + 1] through the non-coherent (read-only) path.
constexpr std::string_view kNonCoherent = R"(
.visible .entry nc_sum(.param .u64 p_in, .param .u64 p_out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<6>;
  .reg .f32 %f<4>;
  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd0, %rd2;
  ld.global.nc.f32 %f1, [%rd3];
  ld.global.nc.f32 %f2, [%rd3+4];
  add.f32 %f3, %f1, %f2;
  add.s64 %rd4, %rd1, %rd2;
  st.global.f32 [%rd4], %f3;
  ret;
}
)";

TEST_F(PtxMemoryTest, NonCoherentLoads) {
  ASSERT_NO_FATAL_FAILURE(Load(kNonCoherent));
  std::vector<float> in;
  for (int i = 0; i < 65; ++i) in.push_back(static_cast<float>(i * i));
  uint64_t a = Upload(in), out = Alloc(64 * 4);
  ASSERT_RUN(Run("nc_sum", Dim3{1}, Dim3{64}, 0, a, out));
  std::vector<float> expected;
  for (int i = 0; i < 64; ++i) expected.push_back(in[i] + in[i + 1]);
  EXPECT_EQ(Download<float>(out, 64), expected);
}

// Parameters of every size, including an aligned byte array (a struct
// passed by value); the kernel writes them back as 32-bit words.
constexpr std::string_view kParams = R"(
.visible .entry params(.param .u64 p_out, .param .u32 p_a, .param .f64 p_b, .param .u16 p_c,
                       .param .f32 p_f, .param .u8 p_e, .param .align 8 .b8 p_s[16], .param .u64 p_g)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .f32 %f1;
  .reg .f64 %fd1;
  .reg .b16 %h1;
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  ld.param.u32 %r1, [p_a];
  st.global.u32 [%rd0], %r1;
  ld.param.f64 %fd1, [p_b];
  st.global.f64 [%rd0+8], %fd1;
  ld.param.u16 %h1, [p_c];
  cvt.u32.u16 %r2, %h1;
  st.global.u32 [%rd0+16], %r2;
  ld.param.f32 %f1, [p_f];
  st.global.f32 [%rd0+20], %f1;
  ld.param.u8 %r3, [p_e];
  st.global.u32 [%rd0+24], %r3;
  ld.param.u32 %r4, [p_s+4];
  st.global.u32 [%rd0+28], %r4;
  ld.param.u64 %rd1, [p_s+8];
  st.global.u64 [%rd0+32], %rd1;
  ld.param.u64 %rd2, [p_g];
  st.global.u64 [%rd0+40], %rd2;
  ret;
}
)";

TEST_F(PtxMemoryTest, KernelParametersOfMixedSizes) {
  ASSERT_NO_FATAL_FAILURE(Load(kParams));
  struct alignas(8) S {
    uint32_t x[2];
    uint64_t y;
  } s = {{0x11111111u, 0x22222222u}, 0x3333333344444444ull};
  uint64_t out = Alloc(48);
  uint32_t a = 0xA0A0A0A0u;
  double b = -2.25;
  uint16_t c = 0xBEEF;
  float f = 1.5f;
  uint8_t e = 0xE7;
  uint64_t g = 0x0102030405060708ull;
  ASSERT_RUN(Run("params", Dim3{1}, Dim3{1}, 0, out, a, b, c, f, e, s, g));
  std::vector<uint8_t> bytes = Download<uint8_t>(out, 48);
  auto word = [&](int off) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + off, 4);
    return v;
  };
  auto dword = [&](int off) {
    uint64_t v;
    std::memcpy(&v, bytes.data() + off, 8);
    return v;
  };
  EXPECT_EQ(word(0), 0xA0A0A0A0u);
  EXPECT_EQ(dword(8), Bits(-2.25));
  EXPECT_EQ(word(16), 0xBEEFu);
  EXPECT_EQ(word(20), Bits(1.5f));
  EXPECT_EQ(word(24), 0xE7u);
  EXPECT_EQ(word(28), 0x22222222u);
  EXPECT_EQ(dword(32), 0x3333333344444444ull);
  EXPECT_EQ(dword(40), 0x0102030405060708ull);
}

// A static array and the dynamic extern array side by side: thread t
// writes stat[t] = t and dyn[t] = 1000 + t, then (after the barrier) reads
// both at (t + 1) % 64 and reports %dynamic_smem_size.
constexpr std::string_view kSharedBoth = R"(
.extern .shared .align 16 .b8 dyn[];
.visible .entry shared_both(.param .u64 p_out)
{
  .shared .align 4 .b32 stat[64];
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  mov.u32 %r0, %tid.x;
  shl.b32 %r1, %r0, 2;
  mov.u32 %r2, stat;
  add.u32 %r3, %r2, %r1;
  st.shared.u32 [%r3], %r0;
  mov.u32 %r4, dyn;
  add.u32 %r5, %r4, %r1;
  add.u32 %r6, %r0, 1000;
  st.shared.u32 [%r5], %r6;
  bar.sync 0;
  add.u32 %r7, %r0, 1;
  and.b32 %r7, %r7, 63;
  shl.b32 %r8, %r7, 2;
  add.u32 %r9, %r2, %r8;
  ld.shared.u32 %r10, [%r9];
  add.u32 %r11, %r4, %r8;
  ld.shared.u32 %r12, [%r11];
  mov.u32 %r13, %dynamic_smem_size;
  ld.param.u64 %rd0, [p_out];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd1, %r0, 12;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r10;
  st.global.u32 [%rd2+4], %r12;
  st.global.u32 [%rd2+8], %r13;
  ret;
}
)";

TEST_F(PtxMemoryTest, StaticAndDynamicSharedMemoryDoNotOverlap) {
  ASSERT_NO_FATAL_FAILURE(Load(kSharedBoth));
  uint64_t out = Alloc(64 * 12);
  ASSERT_RUN(Run("shared_both", Dim3{2}, Dim3{64}, 256, out));
  std::vector<uint32_t> expected;
  for (uint32_t t = 0; t < 64; ++t) {
    uint32_t n = (t + 1) % 64;
    expected.insert(expected.end(), {n, 1000 + n, 256});
  }
  EXPECT_EQ(Download<uint32_t>(out, 64 * 3), expected);
}

// 100 bytes of static shared memory before a 16-byte aligned dynamic
// array: the dynamic array must start at a multiple of 16 past the static
// one, and both must stay usable. out = {dyn % 16, dyn - stat >= 100,
// dyn[0] after thread 0 stored 77 there, stat[24]}.
constexpr std::string_view kDynamicAlignment = R"(
.extern .shared .align 16 .b8 dyn16[];
.visible .entry dyn_alignment(.param .u64 p_out)
{
  .shared .align 4 .b8 stat100[100];
  .reg .pred %p1;
  .reg .b32 %r<10>;
  .reg .b64 %rd<2>;
  mov.u32 %r0, dyn16;
  mov.u32 %r1, stat100;
  and.b32 %r2, %r0, 15;
  sub.u32 %r3, %r0, %r1;
  setp.ge.u32 %p1, %r3, 100;
  selp.u32 %r4, 1, 0, %p1;
  mov.u32 %r5, 77;
  st.shared.u32 [%r0], %r5;
  mov.u32 %r6, 5;
  st.shared.u32 [%r1+96], %r6;
  bar.sync 0;
  ld.shared.u32 %r7, [%r0];
  ld.shared.u32 %r8, [stat100+96];
  ld.param.u64 %rd0, [p_out];
  st.global.v4.u32 [%rd0], {%r2, %r4, %r7, %r8};
  ret;
}
)";

TEST_F(PtxMemoryTest, DynamicSharedStartsAlignedAfterStatic) {
  ASSERT_NO_FATAL_FAILURE(Load(kDynamicAlignment));
  uint64_t out = Alloc(16);
  ASSERT_RUN(Run("dyn_alignment", Dim3{1}, Dim3{1}, 64, out));
  EXPECT_EQ(Download<uint32_t>(out, 4), (std::vector<uint32_t>{0, 1, 77, 5}));
}

// Per-thread local memory: thread t fills buf[j] = j * (t + 1) for j < 16
// in a loop, then reads back sum_j buf[j] * (j + 1), buf[2] through the
// symbol, and buf[3] through a generic (cvta.local) address.
constexpr std::string_view kLocal = R"(
.visible .entry local_mem(.param .u64 p_out)
{
  .local .align 4 .b8 buf[64];
  .reg .pred %p1;
  .reg .b32 %r<16>;
  .reg .b64 %rd<10>;
  mov.u32 %r0, %ntid.x;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  mad.lo.s32 %r0, %r0, %r1, %r2;
  add.u32 %r3, %r0, 1;
  mov.u64 %rd1, buf;
  mov.u32 %r4, 0;
$fill:
  mul.lo.u32 %r5, %r4, %r3;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.local.u32 [%rd3], %r5;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p1, %r4, 16;
  @%p1 bra $fill;
  mov.u32 %r6, 0;
  mov.u32 %r4, 16;
$sum:
  sub.u32 %r4, %r4, 1;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.local.u32 %r7, [%rd3];
  add.u32 %r8, %r4, 1;
  mad.lo.u32 %r6, %r7, %r8, %r6;
  setp.ne.u32 %p1, %r4, 0;
  @%p1 bra $sum;
  ld.local.u32 %r9, [buf+8];
  cvta.local.u64 %rd4, %rd1;
  ld.u32 %r10, [%rd4+12];
  ld.param.u64 %rd5, [p_out];
  cvta.to.global.u64 %rd5, %rd5;
  mul.wide.u32 %rd6, %r0, 12;
  add.s64 %rd7, %rd5, %rd6;
  st.global.u32 [%rd7], %r6;
  st.global.u32 [%rd7+4], %r9;
  st.global.u32 [%rd7+8], %r10;
  ret;
}
)";

TEST_F(PtxMemoryTest, LocalMemoryIsPrivateToEachThread) {
  ASSERT_NO_FATAL_FAILURE(Load(kLocal));
  const uint32_t threads = 128;
  uint64_t out = Alloc(threads * 12);
  ASSERT_RUN(Run("local_mem", Dim3{2}, Dim3{64}, 0, out));
  std::vector<uint32_t> expected;
  for (uint32_t t = 0; t < threads; ++t) {
    uint32_t sum = 0;
    for (uint32_t j = 0; j < 16; ++j) sum += j * (t + 1) * (j + 1);
    expected.insert(expected.end(), {sum, 2 * (t + 1), 3 * (t + 1)});
  }
  EXPECT_EQ(Download<uint32_t>(out, threads * 3), expected);
}

// Generic addressing: the parameter is a generic pointer to global memory
// (as cudaMalloc returns) loaded without cvta; a shared array is written
// through its generic address (cvta.shared) and read back both through
// cvta.to.shared and generically, reversed across the warp.
constexpr std::string_view kGeneric = R"(
.visible .entry generic(.param .u64 p_in, .param .u64 p_out)
{
  .shared .align 4 .b32 tile[32];
  .reg .b32 %r<8>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd0, %rd2;
  ld.u32 %r1, [%rd3];
  mov.u64 %rd4, tile;
  cvta.shared.u64 %rd5, %rd4;
  add.s64 %rd6, %rd5, %rd2;
  mul.lo.u32 %r2, %r1, 3;
  st.u32 [%rd6], %r2;
  bar.sync 0;
  mov.u32 %r3, 31;
  sub.u32 %r3, %r3, %r0;
  mul.wide.u32 %rd7, %r3, 4;
  cvta.to.shared.u64 %rd8, %rd5;
  add.s64 %rd9, %rd8, %rd7;
  ld.shared.u32 %r4, [%rd9];
  add.s64 %rd10, %rd5, %rd7;
  ld.u32 %r5, [%rd10];
  cvta.to.global.u64 %rd11, %rd1;
  mul.wide.u32 %rd12, %r0, 8;
  add.s64 %rd13, %rd11, %rd12;
  st.global.v2.u32 [%rd13], {%r4, %r5};
  ret;
}
)";

TEST_F(PtxMemoryTest, GenericAddressingOfGlobalAndShared) {
  ASSERT_NO_FATAL_FAILURE(Load(kGeneric));
  std::vector<uint32_t> in;
  for (uint32_t i = 0; i < 32; ++i) in.push_back(7 * i + 1);
  uint64_t a = Upload(in), out = Alloc(32 * 8);
  ASSERT_RUN(Run("generic", Dim3{1}, Dim3{32}, 0, a, out));
  std::vector<uint32_t> expected;
  for (uint32_t t = 0; t < 32; ++t) expected.insert(expected.end(), {3 * in[31 - t], 3 * in[31 - t]});
  EXPECT_EQ(Download<uint32_t>(out, 64), expected);
}

// Module variables: an initialized .global table, zero-initialized
// .globals the kernel writes, and an initialized .const array. Thread t
// reports table[t], table[2], scale[0] * scale[1] and (u32)scale[0], stores
// table[t] + 1 to written[t] and counts itself in counter.
constexpr std::string_view kGlobals = R"(
.global .align 4 .u32 table[4] = {10, 20, 30, 40};
.global .align 4 .u32 written[4];
.global .align 8 .u64 counter;
.const .align 4 .f32 scale[2] = {0f40000000, 0f3F000000};
.visible .entry use_globals(.param .u64 p_out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  mov.u32 %r0, %tid.x;
  mov.u64 %rd0, table;
  mul.wide.u32 %rd1, %r0, 4;
  add.s64 %rd2, %rd0, %rd1;
  ld.global.u32 %r1, [%rd2];
  ld.global.u32 %r2, [table+8];
  ld.const.f32 %f1, [scale];
  ld.const.f32 %f2, [scale+4];
  mul.f32 %f3, %f1, %f2;
  cvt.rzi.u32.f32 %r3, %f1;
  atom.global.add.u64 %rd3, [counter], 1;
  add.u32 %r4, %r1, 1;
  mov.u64 %rd7, written;
  add.s64 %rd7, %rd7, %rd1;
  st.global.u32 [%rd7], %r4;
  ld.param.u64 %rd4, [p_out];
  cvta.to.global.u64 %rd4, %rd4;
  mul.wide.u32 %rd5, %r0, 16;
  add.s64 %rd6, %rd4, %rd5;
  st.global.u32 [%rd6], %r1;
  st.global.u32 [%rd6+4], %r2;
  st.global.f32 [%rd6+8], %f3;
  st.global.u32 [%rd6+12], %r3;
  ret;
}
.visible .entry read_counter(.param .u64 p_out)
{
  .reg .b64 %rd<3>;
  ld.global.u64 %rd0, [counter];
  ld.param.u64 %rd1, [p_out];
  st.global.u64 [%rd1], %rd0;
  ret;
}
)";

TEST_F(PtxMemoryTest, ModuleVariablesWithInitializers) {
  ASSERT_NO_FATAL_FAILURE(Load(kGlobals));
  uint64_t table = GlobalAddress("table");
  ASSERT_NE(table, 0u);
  EXPECT_EQ(Download<uint32_t>(table, 4), (std::vector<uint32_t>{10, 20, 30, 40}));
  uint64_t out = Alloc(4 * 16);
  ASSERT_RUN(Run("use_globals", Dim3{1}, Dim3{4}, 0, out));
  std::vector<uint32_t> got = Download<uint32_t>(out, 16);
  for (uint32_t t = 0; t < 4; ++t) {
    EXPECT_EQ(got[4 * t], 10 * (t + 1)) << t;
    EXPECT_EQ(got[4 * t + 1], 30u) << t;
    EXPECT_EQ(got[4 * t + 2], Bits(1.0f)) << t;  // 2.0 * 0.5
    EXPECT_EQ(got[4 * t + 3], 2u) << t;
  }
  // The kernel's stores and atomics persist in the module's memory.
  uint64_t written = GlobalAddress("written");
  ASSERT_NE(written, 0u);
  EXPECT_EQ(Download<uint32_t>(written, 4), (std::vector<uint32_t>{11, 21, 31, 41}));
  EXPECT_EQ(Download<uint32_t>(table, 4), (std::vector<uint32_t>{10, 20, 30, 40}));
  uint64_t counter_out = Alloc(8);
  ASSERT_RUN(Run("read_counter", Dim3{1}, Dim3{1}, 0, counter_out));
  EXPECT_EQ(Download<uint64_t>(counter_out, 1), (std::vector<uint64_t>{4}));
}

}  // namespace
}  // namespace kiln::emu::testing
