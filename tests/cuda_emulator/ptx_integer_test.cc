// PTX integer instructions under the emulator: arithmetic and its
// wraparound, the .hi/.wide multiplies, division and remainder with negative
// operands (PTX: signed division truncates toward zero), saturation, min/max
// signedness, shifts including the PTX clamping of amounts >= the width, the
// bit instructions (popc, clz, brev, bfind, bfe, bfi, bmsk, prmt, lop3, shf),
// carries, setp's compare operators and predicate combining, selp and
// predicated execution.
//
// Every expected value is written by hand (with the arithmetic in a
// comment) or computed on the host with plain C++ integer operations.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"

namespace kiln::emu::testing {
namespace {

constexpr int32_t kIntMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr int64_t kLongMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();
constexpr uint64_t kULongMax = std::numeric_limits<uint64_t>::max();

using I32 = std::vector<int32_t>;
using U32 = std::vector<uint32_t>;
using I64 = std::vector<int64_t>;
using U64 = std::vector<uint64_t>;

class PtxIntegerTest : public EmulatorTest {};

TEST_F(PtxIntegerTest, AddSubWrapAround) {
  EXPECT_EQ((Apply<int32_t, int32_t>("add.s32 %d, %a, %b;",
                                     {{kIntMax, 1}, {-5, 3}, {-1, -1}, {kIntMin, kIntMin}})),
            (I32{kIntMin, -2, -2, 0}));
  EXPECT_EQ((Apply<int32_t, int32_t>("sub.s32 %d, %a, %b;", {{kIntMin, 1}, {3, 5}, {0, kIntMin}})),
            (I32{kIntMax, -2, kIntMin}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("add.u32 %d, %a, %b;", {{0xFFFFFFFFu, 1}, {0x80000000u, 0x80000000u}})),
            (U32{0, 0}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("sub.u32 %d, %a, %b;", {{0, 1}})), (U32{0xFFFFFFFFu}));
  EXPECT_EQ((Apply<int64_t, int64_t>("add.s64 %d, %a, %b;", {{kLongMax, 1}, {1LL << 40, 1LL << 40}})),
            (I64{kLongMin, 1LL << 41}));
  EXPECT_EQ((Apply<int64_t, int64_t>("sub.s64 %d, %a, %b;", {{0, 1}, {kLongMin, 1}})),
            (I64{-1, kLongMax}));
  // 16-bit registers wrap at 16 bits.
  EXPECT_EQ((Apply<uint16_t, uint16_t>("add.u16 %d, %a, %b;", {{0xFFFF, 1}, {0x8000, 0x7FFF}})),
            (std::vector<uint16_t>{0, 0xFFFF}));
}

TEST_F(PtxIntegerTest, MultiplyLowHighWide) {
  // 65536 * 65536 = 2^32, whose low word is 0.
  EXPECT_EQ((Apply<int32_t, int32_t>("mul.lo.s32 %d, %a, %b;", {{65536, 65536}, {-3, 7}, {kIntMin, -1}})),
            (I32{0, -21, kIntMin}));
  // 0x12345678 * 0x9abcdef0 computed on the host, low 32 bits.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("mul.lo.u32 %d, %a, %b;", {{0x12345678u, 0x9abcdef0u}})),
            (U32{static_cast<uint32_t>(uint64_t{0x12345678u} * 0x9abcdef0u)}));
  // hi(-2^31 * 2) = hi(-2^32) = -1; hi(2^30 * 4) = 1; hi(-1 * -1) = 0;
  // hi(-2 * 3) = hi(-6) = -1.
  EXPECT_EQ((Apply<int32_t, int32_t>("mul.hi.s32 %d, %a, %b;",
                                     {{kIntMin, 2}, {0x40000000, 4}, {-1, -1}, {-2, 3}})),
            (I32{-1, 1, 0, -1}));
  // (2^32-1)^2 = 2^64 - 2^33 + 1: high word 0xFFFFFFFE.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("mul.hi.u32 %d, %a, %b;",
                                       {{0xFFFFFFFFu, 0xFFFFFFFFu}, {0x80000000u, 2}})),
            (U32{0xFFFFFFFEu, 1}));
  // (2^31-1)^2 = 2^62 - 2^32 + 1 = 0x3FFFFFFF00000001; (-2^31)^2 = 2^62.
  EXPECT_EQ((Apply<int64_t, int32_t>("mul.wide.s32 %d, %a, %b;",
                                     {{-2, 3}, {kIntMax, kIntMax}, {kIntMin, kIntMin}})),
            (I64{-6, 0x3FFFFFFF00000001LL, 0x4000000000000000LL}));
  EXPECT_EQ((Apply<uint64_t, uint32_t>("mul.wide.u32 %d, %a, %b;", {{0xFFFFFFFFu, 0xFFFFFFFFu}})),
            (U64{0xFFFFFFFE00000001ull}));
  EXPECT_EQ((Apply<uint32_t, uint16_t>("mul.wide.u16 %d, %a, %b;", {{0xFFFF, 0xFFFF}})),
            (U32{0xFFFE0001u}));
  // (2^32+1)^2 = 2^64 + 2^33 + 1: low 64 bits 0x200000001.
  EXPECT_EQ((Apply<uint64_t, uint64_t>("mul.lo.u64 %d, %a, %b;", {{0x100000001ull, 0x100000001ull}})),
            (U64{0x200000001ull}));
  // (2^64-1)*2 = 2^65 - 2: high word 1; (2^64-1)^2 = 2^128 - 2^65 + 1: high
  // word 2^64 - 2.
  EXPECT_EQ((Apply<uint64_t, uint64_t>("mul.hi.u64 %d, %a, %b;",
                                       {{kULongMax, 2}, {kULongMax, kULongMax}})),
            (U64{1, 0xFFFFFFFFFFFFFFFEull}));
  // hi(-1 * 2) = -1; hi(-2^63 * 2) = hi(-2^64) = -1; (-2^63)^2 = 2^126, high
  // word 2^62.
  EXPECT_EQ((Apply<int64_t, int64_t>("mul.hi.s64 %d, %a, %b;",
                                     {{-1, 2}, {kLongMin, 2}, {kLongMin, kLongMin}})),
            (I64{-1, -1, 0x4000000000000000LL}));
}

TEST_F(PtxIntegerTest, MultiplyAdd) {
  EXPECT_EQ((Apply<int32_t, int32_t>("mad.lo.s32 %d, %a, %b, %c;",
                                     {{3, 4, 5}, {-3, 4, 5}, {65536, 65536, 7}})),
            (I32{17, -7, 7}));
  // (2^32-1)*2 + 3 = 2^33 + 1 -> low word 1.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("mad.lo.u32 %d, %a, %b, %c;", {{0xFFFFFFFFu, 2, 3}})), (U32{1}));
  // mad.wide.s32 adds a 64-bit c: -2*3 + -10 = -16; (2^31-1)*2 + 1 = 2^32 - 1.
  EXPECT_EQ((Apply<int64_t, int32_t>("cvt.s64.s32 %td0, %c;\n mad.wide.s32 %d, %a, %b, %td0;",
                                     {{-2, 3, -10}, {kIntMax, 2, 1}})),
            (I64{-16, 4294967295LL}));
  // mad.hi.u32: hi((2^32-1)*(2^32-1)) + 5 = 0xFFFFFFFE + 5 wraps to 3.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("mad.hi.u32 %d, %a, %b, %c;", {{0xFFFFFFFFu, 0xFFFFFFFFu, 5}})),
            (U32{3}));
}

TEST_F(PtxIntegerTest, DivisionTruncatesTowardZero) {
  EXPECT_EQ((Apply<int32_t, int32_t>("div.s32 %d, %a, %b;",
                                     {{7, 2}, {-7, 2}, {7, -2}, {-7, -2}, {kIntMin, 1}, {0, 5}})),
            (I32{3, -3, -3, 3, kIntMin, 0}));
  // The remainder takes the dividend's sign: a == (a/b)*b + a%b.
  EXPECT_EQ((Apply<int32_t, int32_t>("rem.s32 %d, %a, %b;", {{7, 2}, {-7, 2}, {7, -2}, {-7, -2}, {6, 3}})),
            (I32{1, -1, 1, -1, 0}));
  // As unsigned, -7 is 0xFFFFFFF9 = 4294967289 = 2 * 2147483644 + 1.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("div.u32 %d, %a, %b;", {{0xFFFFFFF9u, 2}})), (U32{0x7FFFFFFCu}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("rem.u32 %d, %a, %b;", {{0xFFFFFFF9u, 2}, {100, 7}})), (U32{1, 2}));
  // 9000000000 = 7 * 1285714285 + 5.
  EXPECT_EQ((Apply<int64_t, int64_t>("div.s64 %d, %a, %b;", {{-9000000000LL, 7}, {9000000000LL, -7}})),
            (I64{-1285714285LL, -1285714285LL}));
  EXPECT_EQ((Apply<int64_t, int64_t>("rem.s64 %d, %a, %b;", {{-9000000000LL, 7}, {9000000000LL, -7}})),
            (I64{-5, 5}));
  // 2^64 - 1 = 18446744073709551615 = 10 * 1844674407370955161 + 5.
  EXPECT_EQ((Apply<uint64_t, uint64_t>("div.u64 %d, %a, %b;", {{kULongMax, 10}})),
            (U64{1844674407370955161ull}));
  EXPECT_EQ((Apply<uint64_t, uint64_t>("rem.u64 %d, %a, %b;", {{kULongMax, 10}})), (U64{5}));
}

// PTX leaves x/0 and INT_MIN/-1 machine specific; the emulator must still
// produce some value rather than fault (a host idiv would raise SIGFPE).
TEST_F(PtxIntegerTest, DivisionByZeroAndOverflowDoNotFault) {
  EXPECT_EQ((Apply<int32_t, int32_t>("div.s32 %d, %a, %b;", {{1, 0}, {kIntMin, -1}})).size(), 2u);
  EXPECT_EQ((Apply<int32_t, int32_t>("rem.s32 %d, %a, %b;", {{1, 0}, {kIntMin, -1}})).size(), 2u);
  EXPECT_EQ((Apply<uint32_t, uint32_t>("div.u32 %d, %a, %b;", {{5, 0}})).size(), 1u);
  EXPECT_EQ((Apply<int64_t, int64_t>("div.s64 %d, %a, %b;", {{kLongMin, -1}, {3, 0}})).size(), 2u);
  EXPECT_EQ((Apply<int64_t, int64_t>("rem.s64 %d, %a, %b;", {{kLongMin, -1}, {3, 0}})).size(), 2u);
}

TEST_F(PtxIntegerTest, SaturatingAddSub) {
  EXPECT_EQ((Apply<int32_t, int32_t>("add.sat.s32 %d, %a, %b;",
                                     {{kIntMax, 1}, {kIntMin, -1}, {100, -50}, {kIntMax, kIntMin}, {kIntMax, kIntMax}})),
            (I32{kIntMax, kIntMin, 50, -1, kIntMax}));
  EXPECT_EQ((Apply<int32_t, int32_t>("sub.sat.s32 %d, %a, %b;", {{kIntMin, 1}, {kIntMax, -1}, {5, 7}})),
            (I32{kIntMin, kIntMax, -2}));
}

TEST_F(PtxIntegerTest, MinMaxAbsNegRespectSignedness) {
  EXPECT_EQ((Apply<int32_t, int32_t>("min.s32 %d, %a, %b;", {{-1, 1}, {kIntMin, kIntMax}})), (I32{-1, kIntMin}));
  EXPECT_EQ((Apply<int32_t, int32_t>("max.s32 %d, %a, %b;", {{-1, 1}, {kIntMin, kIntMax}})), (I32{1, kIntMax}));
  // The same bits as unsigned: 0xFFFFFFFF is the largest.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("min.u32 %d, %a, %b;", {{0xFFFFFFFFu, 1}})), (U32{1}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("max.u32 %d, %a, %b;", {{0xFFFFFFFFu, 1}})), (U32{0xFFFFFFFFu}));
  EXPECT_EQ((Apply<int64_t, int64_t>("min.s64 %d, %a, %b;", {{-5, 3}})), (I64{-5}));
  EXPECT_EQ((Apply<uint64_t, uint64_t>("min.u64 %d, %a, %b;", {{static_cast<uint64_t>(-5), 3}})), (U64{3}));
  EXPECT_EQ((Apply<uint64_t, uint64_t>("max.u64 %d, %a, %b;", {{kULongMax, 0}})), (U64{kULongMax}));
  // |INT_MIN| and -INT_MIN do not fit: both wrap to INT_MIN.
  EXPECT_EQ((Apply<int32_t, int32_t>("abs.s32 %d, %a;", {{-5}, {7}, {kIntMin}})), (I32{5, 7, kIntMin}));
  EXPECT_EQ((Apply<int32_t, int32_t>("neg.s32 %d, %a;", {{5}, {-7}, {kIntMin}})), (I32{-5, 7, kIntMin}));
}

TEST_F(PtxIntegerTest, ShiftAmountsClampAtTheWidth) {
  // PTX: shift amounts greater than the register width are clamped to it.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("shl.b32 %d, %a, %b;",
                                       {{1, 31}, {1, 32}, {0xFFFFFFFFu, 100}, {3, 0}, {1, 0xFFFFFFFFu}})),
            (U32{0x80000000u, 0, 0, 3, 0}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("shr.u32 %d, %a, %b;",
                                       {{0x80000000u, 31}, {0x80000000u, 32}, {0xFFFFFFFFu, 0xFFFFFFFFu}})),
            (U32{1, 0, 0}));
  // shr.s32 is arithmetic (rounds toward -inf: -7 >> 1 = -4) and fills
  // with the sign when clamped.
  EXPECT_EQ((Apply<int32_t, int32_t>("shr.s32 %d, %a, %b;",
                                     {{kIntMin, 31}, {-8, 1}, {-7, 1}, {-8, 40}, {8, 40}, {-8, -1}})),
            (I32{-1, -4, -4, -1, 0, -1}));
  // 64-bit shifts take a 32-bit amount.
  const char* shl64 = "cvt.u32.u64 %t0, %b;\n shl.b64 %d, %a, %t0;";
  EXPECT_EQ((Apply<uint64_t, uint64_t>(shl64, {{1, 63}, {1, 64}, {1, 200}})), (U64{1ull << 63, 0, 0}));
  const char* shr64u = "cvt.u32.u64 %t0, %b;\n shr.u64 %d, %a, %t0;";
  EXPECT_EQ((Apply<uint64_t, uint64_t>(shr64u, {{1ull << 63, 63}, {1ull << 63, 64}})), (U64{1, 0}));
  const char* shr64s = "cvt.u32.u64 %t0, %b;\n shr.s64 %d, %a, %t0;";
  EXPECT_EQ((Apply<int64_t, int64_t>(shr64s, {{kLongMin, 63}, {kLongMin, 64}, {kLongMin, 1}})),
            (I64{-1, -1, -(1LL << 62)}));
}

TEST_F(PtxIntegerTest, LogicOperations) {
  const std::vector<std::array<uint32_t, 3>> rows = {{0xF0F0F0F0u, 0xFF00FF00u}};
  EXPECT_EQ((Apply<uint32_t, uint32_t>("and.b32 %d, %a, %b;", rows)), (U32{0xF000F000u}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("or.b32 %d, %a, %b;", rows)), (U32{0xFFF0FFF0u}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("xor.b32 %d, %a, %b;", rows)), (U32{0x0FF00FF0u}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("not.b32 %d, %a;", rows)), (U32{0x0F0F0F0Fu}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("cnot.b32 %d, %a;", {{0}, {5}, {0x80000000u}})), (U32{1, 0, 0}));
  EXPECT_EQ((Apply<uint64_t, uint64_t>("xor.b64 %d, %a, %b;", {{0xFFFF0000FFFF0000ull, 0x0F0F0F0F0F0F0F0Full}})),
            (U64{0xF0F00F0FF0F00F0Full}));
  // Predicate logic: xor/and/or/not of (a != 0) and (b != 0), as 0/1.
  const std::vector<std::array<uint32_t, 3>> truth = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  auto pred = [&](const char* op) {
    return std::string("setp.ne.b32 %p1, %a, 0;\n setp.ne.b32 %p2, %b, 0;\n") + op +
           "\n selp.u32 %d, 1, 0, %p3;";
  };
  EXPECT_EQ((Apply<uint32_t, uint32_t>(pred("xor.pred %p3, %p1, %p2;"), truth)), (U32{0, 1, 1, 0}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>(pred("and.pred %p3, %p1, %p2;"), truth)), (U32{0, 0, 0, 1}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>(pred("or.pred %p3, %p1, %p2;"), truth)), (U32{0, 1, 1, 1}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>(pred("not.pred %p3, %p1;"), truth)), (U32{1, 0, 1, 0}));
}

TEST_F(PtxIntegerTest, BitCounting) {
  EXPECT_EQ((Apply<uint32_t, uint32_t>("popc.b32 %d, %a;", {{0xFFFFFFFFu}, {0}, {0x80000001u}, {0xF0F0F0F0u}})),
            (U32{32, 0, 2, 16}));
  // popc.b64 and clz.b64 produce a 32-bit count.
  EXPECT_EQ((Apply<uint32_t, uint64_t>("popc.b64 %d, %a;", {{kULongMax}, {0x8000000000000001ull}})),
            (U32{64, 2}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("clz.b32 %d, %a;", {{0}, {1}, {0x80000000u}, {0x00010000u}})),
            (U32{32, 31, 0, 15}));
  EXPECT_EQ((Apply<uint32_t, uint64_t>("clz.b64 %d, %a;", {{1}, {0}, {0x0000000100000000ull}})),
            (U32{63, 64, 31}));
  // 0x12345678 = 0001 0010 0011 0100 0101 0110 0111 1000; reversed:
  // 0001 1110 0110 1010 0010 1100 0100 1000 = 0x1E6A2C48.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("brev.b32 %d, %a;", {{1}, {0x12345678u}})),
            (U32{0x80000000u, 0x1E6A2C48u}));
  EXPECT_EQ((Apply<uint64_t, uint64_t>("brev.b64 %d, %a;", {{1}, {0xF0}})),
            (U64{0x8000000000000000ull, 0x0F00000000000000ull}));
  // bfind: the position of the most significant 1 (unsigned) or of the most
  // significant bit differing from the sign (signed); 0xFFFFFFFF for none.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("bfind.u32 %d, %a;", {{0x00010000u}, {0}, {1}, {0xFFFFFFFFu}})),
            (U32{16, 0xFFFFFFFFu, 0, 31}));
  EXPECT_EQ((Apply<uint32_t, int32_t>("bfind.s32 %d, %a;", {{-1}, {-2}, {0x40000000}, {kIntMin}, {0}})),
            (U32{0xFFFFFFFFu, 0, 30, 30, 0xFFFFFFFFu}));
}

TEST_F(PtxIntegerTest, BitFieldExtractAndInsert) {
  // bfe d, a, pos, len: bits [pos, pos+len) of a; bits past bit 31 read as
  // 0 (unsigned) or as the field's last valid bit (signed).
  EXPECT_EQ((Apply<uint32_t, uint32_t>("bfe.u32 %d, %a, %b, %c;",
                                       {{0x12345678u, 4, 8}, {0x12345678u, 28, 8}, {0x12345678u, 0, 0},
                                        {0x12345678u, 0, 32}, {0x80000000u, 28, 8}})),
            (U32{0x67, 0x1, 0, 0x12345678u, 0x8}));
  // 0xF0 bits 4..7 = 1111 -> -1; 0x70 -> 0111 = 7; 0x80000000 bits 28..31
  // = 1000 with bit 31 replicated upward -> 0xFFFFFFF8 = -8; 0xF0 bits 4..11
  // = 0x0F, top field bit 0 -> 15.
  EXPECT_EQ((Apply<int32_t, int32_t>("bfe.s32 %d, %a, %b, %c;",
                                     {{0xF0, 4, 4}, {0x70, 4, 4}, {kIntMin, 28, 8}, {0xF0, 4, 8},
                                      {0x12345678, 4, 8}})),
            (I32{-1, 7, -8, 15, 0x67}));
  // 64-bit fields still take 32-bit pos and len.
  const char* bfe64u = "cvt.u32.u64 %t0, %b;\n cvt.u32.u64 %t1, %c;\n bfe.u64 %d, %a, %t0, %t1;";
  EXPECT_EQ((Apply<uint64_t, uint64_t>(bfe64u, {{0x123456789ABCDEF0ull, 32, 16}})), (U64{0x5678}));
  const char* bfe64s = "cvt.u32.u64 %t0, %b;\n cvt.u32.u64 %t1, %c;\n bfe.s64 %d, %a, %t0, %t1;";
  EXPECT_EQ((Apply<int64_t, int64_t>(bfe64s, {{kLongMin, 60, 8}})), (I64{-8}));
  // bfi d, f, b, pos, 8: f's low 8 bits replace bits [pos, pos+8) of b.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("bfi.b32 %d, %a, %b, %c, 8;",
                                       {{0xAB, 0x12345678u, 8}, {0xFF, 0, 28}, {0x1FF, 0xFFFFFFFFu, 0},
                                        {0x00, 0xFFFFFFFFu, 4}})),
            (U32{0x1234AB78u, 0xF0000000u, 0xFFFFFFFFu, 0xFFFFF00Fu}));
}

// bmsk d, a, b: b one bits from bit a up (CUB's radix digit masks).
// .clamp limits a and b to 32 and drops bits past 31; .wrap takes both
// modulo 32.
TEST_F(PtxIntegerTest, BitMask) {
  EXPECT_EQ((Apply<uint32_t, uint32_t>("bmsk.clamp.b32 %d, %a, %b;",
                                       {{0, 8}, {4, 4}, {28, 8}, {0, 32}, {0, 40}, {32, 4}, {3, 0}})),
            (U32{0xFFu, 0xF0u, 0xF0000000u, 0xFFFFFFFFu, 0xFFFFFFFFu, 0u, 0u}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("bmsk.wrap.b32 %d, %a, %b;", {{0, 8}, {33, 4}, {4, 36}, {0, 32}})),
            (U32{0xFFu, 0x1Eu, 0xF0u, 0u}));
}

TEST_F(PtxIntegerTest, PermuteDefaultMode) {
  // Bytes of {b, a}: b0..b3 = 0x11 0x22 0x33 0x44 (a), b4..b7 = 0x55 0x66
  // 0x77 0x88 (b). Selector nibble i picks result byte i; its bit 3
  // replicates the picked byte's sign bit. Only c[15:0] matters.
  const uint32_t a = 0x44332211u, b = 0x88776655u;
  EXPECT_EQ((Apply<uint32_t, uint32_t>("prmt.b32 %d, %a, %b, %c;",
                                       {{a, b, 0x3210}, {a, b, 0x7654}, {a, b, 0x0123}, {a, b, 0x5140},
                                        {a, b, 0x000F}, {a, b, 0x0008}, {a, b, 0xF777}, {a, b, 0xABCD3210u}})),
            (U32{0x44332211u, 0x88776655u, 0x11223344u, 0x66225511u, 0x111111FFu, 0x11111100u,
                 0xFF888888u, 0x44332211u}));
}

TEST_F(PtxIntegerTest, Lop3MatchesItsTruthTable) {
  // immLut is F(0xF0, 0xCC, 0xAA): the function applied to the operands'
  // canonical patterns. Expected values use the same function on the host.
  const uint32_t a = 0x0F0F1234u, b = 0x00FF5678u, c = 0x33339ABCu;
  struct Case {
    const char* lut;
    uint32_t expected;
  } cases[] = {
      {"0xEA", (a & b) | c},  {"0x96", a ^ b ^ c},  {"0x80", a & b & c},
      {"0xFE", a | b | c},    {"0x00", 0},          {"0xFF", 0xFFFFFFFFu},
      {"0xF0", a},            {"0xCC", b},          {"0xAA", c},
      {"0xCA", (a & b) | (~a & c)},
  };
  for (const Case& k : cases) {
    std::string body = std::string("lop3.b32 %d, %a, %b, %c, ") + k.lut + ";";
    EXPECT_EQ((Apply<uint32_t, uint32_t>(body, {{a, b, c}})), (U32{k.expected})) << body;
  }
}

TEST_F(PtxIntegerTest, FunnelShift) {
  // shf.l: high word of {b:a} << n; shf.r: low word of {b:a} >> n. .wrap
  // takes n mod 32, .clamp min(n, 32).
  EXPECT_EQ((Apply<uint32_t, uint32_t>("shf.l.wrap.b32 %d, %a, %b, %c;",
                                       {{0x80000000u, 1, 1}, {0x80000000u, 1, 33}, {5, 7, 0}})),
            (U32{3, 3, 7}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("shf.l.clamp.b32 %d, %a, %b, %c;", {{0x80000000u, 1, 33}})),
            (U32{0x80000000u}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("shf.r.wrap.b32 %d, %a, %b, %c;",
                                       {{1, 3, 1}, {1, 3, 33}, {5, 7, 0}})),
            (U32{0x80000000u, 0x80000000u, 5}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("shf.r.clamp.b32 %d, %a, %b, %c;", {{1, 3, 40}})), (U32{3}));
}

TEST_F(PtxIntegerTest, CarryChains) {
  // {c : a} + {0 : b} as a 64-bit add through the carry flag.
  EXPECT_EQ((Apply<uint32_t, uint32_t>("add.cc.u32 %t0, %a, %b;\n addc.u32 %d, %c, 0;",
                                       {{0xFFFFFFFFu, 1, 5}, {1, 1, 5}, {0x80000000u, 0x80000000u, 0}})),
            (U32{6, 5, 1}));
  EXPECT_EQ((Apply<uint32_t, uint32_t>("sub.cc.u32 %t0, %a, %b;\n subc.u32 %d, %c, 0;",
                                       {{0, 1, 5}, {1, 0, 5}})),
            (U32{4, 5}));
  // A three-word add: carries propagate through addc.cc.
  EXPECT_EQ((Apply<uint32_t, uint32_t>(
                "add.cc.u32 %t0, %a, %b;\n addc.cc.u32 %t1, %a, %b;\n addc.u32 %d, %c, 0;",
                {{0xFFFFFFFFu, 1, 10}, {0x7FFFFFFFu, 0x80000000u, 10}})),
            // Row 1: word0 carries 1, word1 = 0xFFFFFFFF + 1 + 1 carries 1 -> 11.
            // Row 2: word0 = 0xFFFFFFFF no carry, word1 likewise -> 10.
            (U32{11, 10}));
}

TEST_F(PtxIntegerTest, SelectOnPredicate) {
  EXPECT_EQ((Apply<uint32_t, uint32_t>("setp.ne.b32 %p1, %c, 0;\n selp.b32 %d, %a, %b, %p1;",
                                       {{10, 20, 1}, {10, 20, 0}})),
            (U32{10, 20}));
  EXPECT_EQ((Apply<uint64_t, uint64_t>("setp.ne.b64 %p1, %c, 0;\n selp.b64 %d, %a, %b, %p1;",
                                       {{1ull << 40, 7, 0}})),
            (U64{7}));
}

TEST_F(PtxIntegerTest, CompareOperators) {
  // Rows (a, b): (-1, 1), (1, -1), (5, 5), (INT_MIN, INT_MAX). As unsigned
  // the first is (0xFFFFFFFF, 1) and the last (0x80000000, 0x7FFFFFFF).
  const std::vector<std::array<int32_t, 3>> rows = {{-1, 1}, {1, -1}, {5, 5}, {kIntMin, kIntMax}};
  struct Case {
    const char* op;
    U32 expected;
  } cases[] = {
      {"eq.s32", {0, 0, 1, 0}}, {"ne.s32", {1, 1, 0, 1}}, {"lt.s32", {1, 0, 0, 1}},
      {"le.s32", {1, 0, 1, 1}}, {"gt.s32", {0, 1, 0, 0}}, {"ge.s32", {0, 1, 1, 0}},
      {"lt.u32", {0, 1, 0, 0}}, {"le.u32", {0, 1, 1, 0}}, {"gt.u32", {1, 0, 0, 1}},
      {"ge.u32", {1, 0, 1, 1}}, {"lo.u32", {0, 1, 0, 0}}, {"ls.u32", {0, 1, 1, 0}},
      {"hi.u32", {1, 0, 0, 1}}, {"hs.u32", {1, 0, 1, 1}}, {"eq.b32", {0, 0, 1, 0}},
      {"ne.b32", {1, 1, 0, 1}},
  };
  for (const Case& k : cases) {
    std::string body = std::string("setp.") + k.op + " %p1, %a, %b;\n selp.u32 %d, 1, 0, %p1;";
    EXPECT_EQ((Apply<uint32_t, int32_t>(body, rows)), k.expected) << k.op;
  }
  EXPECT_EQ((Apply<uint32_t, int64_t>("setp.lt.s64 %p1, %a, %b;\n selp.u32 %d, 1, 0, %p1;", {{-1, 1}})),
            (U32{1}));
  EXPECT_EQ((Apply<uint32_t, int64_t>("setp.lt.u64 %p1, %a, %b;\n selp.u32 %d, 1, 0, %p1;", {{-1, 1}})),
            (U32{0}));
}

TEST_F(PtxIntegerTest, CompareCombinesWithASecondPredicate) {
  // %p2 = (c != 0). .and/.or combine the comparison with %p2 (or !%p2).
  auto body = [](const char* setp) {
    return std::string("setp.ne.s32 %p2, %c, 0;\n") + setp + "\n selp.u32 %d, 1, 0, %p1;";
  };
  const std::vector<std::array<int32_t, 3>> rows = {{1, 2, 1}, {1, 2, 0}, {2, 1, 1}, {2, 1, 0}};
  EXPECT_EQ((Apply<uint32_t, int32_t>(body("setp.lt.and.s32 %p1, %a, %b, %p2;"), rows)), (U32{1, 0, 0, 0}));
  EXPECT_EQ((Apply<uint32_t, int32_t>(body("setp.lt.or.s32 %p1, %a, %b, %p2;"), rows)), (U32{1, 1, 1, 0}));
  EXPECT_EQ((Apply<uint32_t, int32_t>(body("setp.lt.xor.s32 %p1, %a, %b, %p2;"), rows)), (U32{0, 1, 1, 0}));
  EXPECT_EQ((Apply<uint32_t, int32_t>(body("setp.lt.and.s32 %p1, %a, %b, !%p2;"), rows)), (U32{0, 1, 0, 0}));
  // Two destinations: p = cmp OP c, q = !cmp OP c; d = p + 2q.
  const char* both =
      "setp.ne.s32 %p2, %c, 0;\n setp.lt.and.s32 %p1|%p3, %a, %b, %p2;\n"
      " selp.u32 %t0, 1, 0, %p1;\n selp.u32 %t1, 2, 0, %p3;\n add.u32 %d, %t0, %t1;";
  EXPECT_EQ((Apply<uint32_t, int32_t>(both, rows)), (U32{1, 0, 2, 0}));
  const char* plain_pair =
      "setp.lt.s32 %p1|%p3, %a, %b;\n"
      " selp.u32 %t0, 1, 0, %p1;\n selp.u32 %t1, 2, 0, %p3;\n add.u32 %d, %t0, %t1;";
  EXPECT_EQ((Apply<uint32_t, int32_t>(plain_pair, rows)), (U32{1, 1, 2, 2}));
}

TEST_F(PtxIntegerTest, PredicatedExecutionPerLane) {
  // Lanes of the same warp take different guards: d = 100, then +1 where
  // a < b and +10 where not.
  const char* body =
      "mov.u32 %d, 100;\n setp.lt.s32 %p1, %a, %b;\n"
      " @%p1 add.u32 %d, %d, 1;\n @!%p1 add.u32 %d, %d, 10;";
  std::vector<std::array<int32_t, 3>> rows;
  U32 expected;
  for (int i = 0; i < 300; ++i) {
    rows.push_back({i % 3, 1, 0});
    expected.push_back(i % 3 < 1 ? 101 : 110);
  }
  EXPECT_EQ((Apply<uint32_t, int32_t>(body, rows)), expected);
}

}  // namespace
}  // namespace kiln::emu::testing
