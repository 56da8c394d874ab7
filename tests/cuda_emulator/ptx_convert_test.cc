// PTX cvt under the emulator: float to integer with the four round-to-
// integer modes and PTX's saturation to the destination range (NaN -> 0),
// integer to float with each rounding mode (including 64-bit sources that
// must round once, not through a double), integer width changes (sign and
// zero extension by the source type, truncation, .sat), f64 <-> f32 with
// rounding modes, overflow and subnormals, and float round-to-integral.
//
// Expected values are written by hand; the arithmetic behind each non-obvious
// one is in its comment.
#include <gtest/gtest.h>

#include <cmath>
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
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

using I32 = std::vector<int32_t>;
using U32 = std::vector<uint32_t>;
using I64 = std::vector<int64_t>;
using U64 = std::vector<uint64_t>;

class PtxConvertTest : public EmulatorTest {
 protected:
  // `op %d, %a;` on each input.
  template <typename TOut, typename TIn>
  std::vector<TOut> Cvt(const std::string& op, const std::vector<TIn>& in) {
    std::vector<std::array<TIn, 3>> rows;
    for (TIn x : in) rows.push_back({x, TIn{}, TIn{}});
    return Apply<TOut, TIn>(op + " %d, %a;", rows);
  }
  // As Cvt, on f32/f64 bit patterns given as integers, returning bits.
  U32 CvtToF32Bits(const std::string& op, std::string_view in_type, const U64& in) {
    std::vector<std::array<uint64_t, 3>> rows;
    for (uint64_t x : in) rows.push_back({x, 0, 0});
    return ApplyAs<uint32_t, uint64_t>(in_type, "f32", op + " %d, %a;", rows);
  }
};

TEST_F(PtxConvertTest, FloatToIntRoundingModes) {
  EXPECT_EQ((Cvt<int32_t, float>("cvt.rzi.s32.f32", {2.7f, -2.7f, 0.9f, 2147483520.0f})),
            (I32{2, -2, 0, 2147483520}));
  // Ties go to the even integer.
  EXPECT_EQ((Cvt<int32_t, float>("cvt.rni.s32.f32", {2.5f, 3.5f, -2.5f, -3.5f, 0.5f, 1.5f, 2.4999998f})),
            (I32{2, 4, -2, -4, 0, 2, 2}));
  EXPECT_EQ((Cvt<int32_t, float>("cvt.rmi.s32.f32", {-2.1f, 2.9f, -0.5f})), (I32{-3, 2, -1}));
  EXPECT_EQ((Cvt<int32_t, float>("cvt.rpi.s32.f32", {2.1f, -2.9f, 0.1f})), (I32{3, -2, 1}));
  EXPECT_EQ((Cvt<int32_t, double>("cvt.rni.s32.f64", {2.5, -7.5})), (I32{2, -8}));
  EXPECT_EQ((Cvt<int64_t, double>("cvt.rzi.s64.f64", {-2.5, 9007199254740992.0})), (I64{-2, 9007199254740992LL}));
}

// PTX: float-to-integer conversions saturate to the destination's range;
// NaN converts to 0.
TEST_F(PtxConvertTest, FloatToIntSaturates) {
  EXPECT_EQ((Cvt<int32_t, float>("cvt.rzi.s32.f32", {3e9f, -3e9f, kNaNf, kInff, -kInff})),
            (I32{kIntMax, kIntMin, 0, kIntMax, kIntMin}));
  // 4294967040 = 0x4F7FFFFF is the largest float below 2^32.
  EXPECT_EQ((Cvt<uint32_t, float>("cvt.rzi.u32.f32", {-1.0f, 5e9f, 4294967040.0f, -0.5f, kNaNf, 3.99f})),
            (U32{0, 0xFFFFFFFFu, 4294967040u, 0, 0, 3}));
  EXPECT_EQ((Cvt<int32_t, double>("cvt.rni.s32.f64", {-1e10, 1e10})), (I32{kIntMin, kIntMax}));
  EXPECT_EQ((Cvt<int64_t, double>("cvt.rzi.s64.f64", {1e19, -1e19})), (I64{kLongMax, kLongMin}));
  // 2^63 fits an unsigned 64-bit integer exactly.
  EXPECT_EQ((Cvt<uint64_t, float>("cvt.rzi.u64.f32", {-5.0f, 1e20f, 9223372036854775808.0f})),
            (U64{0, 0xFFFFFFFFFFFFFFFFull, 0x8000000000000000ull}));
  EXPECT_EQ((Cvt<int32_t, float>("cvt.rzi.sat.s32.f32", {3e9f})), (I32{kIntMax}));
}

TEST_F(PtxConvertTest, IntToFloatRounding) {
  // 2^24 + 1 lies half way between 2^24 (0x4B800000) and 2^24 + 2
  // (0x4B800001); ties go to the even mantissa, 2^24. 2^24 + 3 lies half
  // way between 2^24 + 2 (odd) and 2^24 + 4 (0x4B800002, even).
  auto f32 = [&](const std::string& op, const I32& in) {
    std::vector<float> r = Cvt<float, int32_t>(op, in);
    U32 bits;
    for (float f : r) bits.push_back(Bits(f));
    return bits;
  };
  EXPECT_EQ(f32("cvt.rn.f32.s32", {16777217, 16777219, -16777217, 3, kIntMin}),
            (U32{0x4B800000u, 0x4B800002u, 0xCB800000u, 0x40400000u, 0xCF000000u}));
  EXPECT_EQ(f32("cvt.rz.f32.s32", {16777219}), (U32{0x4B800001u}));
  EXPECT_EQ(f32("cvt.rm.f32.s32", {-16777219}), (U32{0xCB800002u}));
  EXPECT_EQ(f32("cvt.rp.f32.s32", {16777217}), (U32{0x4B800001u}));
  // 2^32 - 1 rounds to 2^32 (0x4F800000), or down to 0x4F7FFFFF toward 0.
  EXPECT_EQ(Bits(Cvt<float, uint32_t>("cvt.rn.f32.u32", {0xFFFFFFFFu}).at(0)), 0x4F800000u);
  EXPECT_EQ(Bits(Cvt<float, uint32_t>("cvt.rz.f32.u32", {0xFFFFFFFFu}).at(0)), 0x4F7FFFFFu);
  // 64-bit sources: 2^53 + 1 -> 2^53 (tie, even); 2^53 + 3 -> 2^53 + 4;
  // toward zero 2^53 + 2; 2^64 - 1 -> 2^64.
  auto f64 = [&](const std::string& op, const I64& in) {
    U64 bits;
    for (double d : Cvt<double, int64_t>(op, in)) bits.push_back(Bits(d));
    return bits;
  };
  EXPECT_EQ(f64("cvt.rn.f64.s64", {(1LL << 53) + 1, (1LL << 53) + 3}),
            (U64{0x4340000000000000ull, 0x4340000000000002ull}));
  EXPECT_EQ(f64("cvt.rz.f64.s64", {(1LL << 53) + 3}), (U64{0x4340000000000001ull}));
  EXPECT_EQ(Bits(Cvt<double, uint64_t>("cvt.rn.f64.u64", {0xFFFFFFFFFFFFFFFFull}).at(0)), 0x43F0000000000000ull);
  // s64 -> f32 must round once: 2^60 + 2^36 + 1 is just above the tie
  // between 2^60 and 2^60 + 2^37, so 0x5D800001. Through a double it would
  // become the tie 2^60 + 2^36 and then round to even, 2^60.
  U32 via64;
  for (float f : Cvt<float, int64_t>("cvt.rn.f32.s64", {(1LL << 60) + (1LL << 36) + 1, kLongMin, (1LL << 24) + 1}))
    via64.push_back(Bits(f));
  EXPECT_EQ(via64, (U32{0x5D800001u, 0xDF000000u, 0x4B800000u}));
  EXPECT_EQ(Bits(Cvt<float, uint64_t>("cvt.rn.f32.u64", {0xFFFFFFFFFFFFFFFFull}).at(0)), 0x5F800000u);
}

TEST_F(PtxConvertTest, IntegerWidths) {
  // Extension follows the source type.
  EXPECT_EQ((Cvt<int32_t, uint16_t>("cvt.s32.s16", {0x8000, 0x7FFF, 0xFFFF})), (I32{-32768, 32767, -1}));
  EXPECT_EQ((Cvt<uint32_t, uint16_t>("cvt.u32.u16", {0x8000, 0xFFFF})), (U32{32768, 65535}));
  // An 8-bit source uses the register's low byte.
  EXPECT_EQ((Cvt<int32_t, uint32_t>("cvt.s32.s8", {0x80, 0x7F, 0x1FF, 0x12345680u})), (I32{-128, 127, -1, -128}));
  EXPECT_EQ((Cvt<uint32_t, uint32_t>("cvt.u32.u8", {0x1FF, 0x80})), (U32{255, 128}));
  EXPECT_EQ((Cvt<int64_t, int32_t>("cvt.s64.s32", {-1, kIntMin})), (I64{-1, kIntMin}));
  EXPECT_EQ((Cvt<uint64_t, uint32_t>("cvt.u64.u32", {0xFFFFFFFFu})), (U64{0xFFFFFFFFull}));
  EXPECT_EQ((Cvt<uint64_t, int32_t>("cvt.u64.s32", {-1})), (U64{0xFFFFFFFFFFFFFFFFull}));
  EXPECT_EQ((Cvt<int64_t, uint32_t>("cvt.s64.u32", {0xFFFFFFFFu})), (I64{4294967295LL}));
  // Narrowing keeps the low bits...
  EXPECT_EQ((Cvt<int32_t, int64_t>("cvt.s32.s64", {0x100000005LL, -1})), (I32{5, -1}));
  EXPECT_EQ((Cvt<uint16_t, uint32_t>("cvt.u16.u32", {0x12345u})), (std::vector<uint16_t>{0x2345}));
  // ...unless .sat clamps to the destination range.
  EXPECT_EQ((Cvt<int32_t, int64_t>("cvt.sat.s32.s64", {0x100000005LL, -(1LL << 40), -5})),
            (I32{kIntMax, kIntMin, -5}));
  EXPECT_EQ((Cvt<uint32_t, int32_t>("cvt.sat.u32.s32", {-5, 5})), (U32{0, 5}));
  EXPECT_EQ((Cvt<int32_t, uint32_t>("cvt.sat.s32.u32", {0x80000000u, 7})), (I32{kIntMax, 7}));
  EXPECT_EQ((Cvt<uint16_t, int32_t>("cvt.sat.u16.s32", {70000, -1, 1234})), (std::vector<uint16_t>{65535, 0, 1234}));
  EXPECT_EQ((Cvt<int16_t, int32_t>("cvt.sat.s16.s32", {40000, -40000, -7})), (std::vector<int16_t>{32767, -32768, -7}));
}

TEST_F(PtxConvertTest, DoubleToFloatRoundingModes) {
  const U64 in = {
      0x3FF0000010000000ull,  // 1 + 2^-24: tie between 1 and 1 + 2^-23
      0x3FF0000010001000ull,  // 1 + 2^-24 + 2^-40: above the tie
      0xBFF0000000400000ull,  // -(1 + 2^-30)
  };
  ExpectSameBits(CvtToF32Bits("cvt.rn.f32.f64", "f64", in), U32{0x3F800000u, 0x3F800001u, 0xBF800000u}, IsNaN32,
                 "cvt.rn.f32.f64");
  ExpectSameBits(CvtToF32Bits("cvt.rz.f32.f64", "f64", in), U32{0x3F800000u, 0x3F800000u, 0xBF800000u}, IsNaN32,
                 "cvt.rz.f32.f64");
  ExpectSameBits(CvtToF32Bits("cvt.rm.f32.f64", "f64", in), U32{0x3F800000u, 0x3F800000u, 0xBF800001u}, IsNaN32,
                 "cvt.rm.f32.f64");
  ExpectSameBits(CvtToF32Bits("cvt.rp.f32.f64", "f64", in), U32{0x3F800001u, 0x3F800001u, 0xBF800000u}, IsNaN32,
                 "cvt.rp.f32.f64");
}

TEST_F(PtxConvertTest, DoubleToFloatOverflowAndUnderflow) {
  const U64 big = {
      0x48078287F49C4A1Dull,  // 1e39
      0xC8078287F49C4A1Dull,  // -1e39
      0x47EFFFFFF0000000ull,  // (2 - 2^-24) * 2^127: half way between FLT_MAX and 2^128
  };
  ExpectSameBits(CvtToF32Bits("cvt.rn.f32.f64", "f64", big), U32{0x7F800000u, 0xFF800000u, 0x7F800000u}, IsNaN32,
                 "cvt.rn overflow");
  ExpectSameBits(CvtToF32Bits("cvt.rz.f32.f64", "f64", big), U32{0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7FFFFFu}, IsNaN32,
                 "cvt.rz overflow");
  ExpectSameBits(CvtToF32Bits("cvt.rm.f32.f64", "f64", big), U32{0x7F7FFFFFu, 0xFF800000u, 0x7F7FFFFFu}, IsNaN32,
                 "cvt.rm overflow");
  ExpectSameBits(CvtToF32Bits("cvt.rp.f32.f64", "f64", big), U32{0x7F800000u, 0xFF7FFFFFu, 0x7F800000u}, IsNaN32,
                 "cvt.rp overflow");
  const U64 small = {
      0x3730000000000000ull,  // 2^-140: the subnormal 0x00000200 exactly
      0x3690000000000000ull,  // 2^-150: tie between 0 and 2^-149 -> 0
      0x3698000000000000ull,  // 3 * 2^-151 = 0.75 * 2^-149 -> 2^-149
      0x358DEE7A4AD4B81Full,  // 1e-50 -> 0
      0x7FF8000000000000ull,  // NaN
  };
  ExpectSameBits(CvtToF32Bits("cvt.rn.f32.f64", "f64", small),
                 U32{0x00000200u, 0x00000000u, 0x00000001u, 0x00000000u, 0x7FC00000u}, IsNaN32, "cvt.rn underflow");
  ExpectSameBits(CvtToF32Bits("cvt.rp.f32.f64", "f64", {0x358DEE7A4AD4B81Full}), U32{0x00000001u}, IsNaN32,
                 "cvt.rp underflow");
}

TEST_F(PtxConvertTest, FloatToDoubleIsExact) {
  // 0.1f = 0x3DCCCCCD widens to 0x3FB99999A0000000; 2^-149 to 2^-149.
  std::vector<std::array<uint32_t, 3>> rows = {{0x3DCCCCCDu}, {0x00000001u}, {0xFF800000u}, {0x7FC00000u}};
  ExpectSameBits(ApplyAs<uint64_t, uint32_t>("f32", "f64", "cvt.f64.f32 %d, %a;", rows),
                 U64{0x3FB99999A0000000ull, 0x36A0000000000000ull, 0xFFF0000000000000ull, 0x7FF8000000000000ull},
                 IsNaN64, "cvt.f64.f32");
}

TEST_F(PtxConvertTest, RoundToIntegralInFloat) {
  auto bits = [](const std::vector<float>& v) {
    U32 b;
    for (float f : v) b.push_back(Bits(f));
    return b;
  };
  // -0.5 rounds to -0.0 (0x80000000): the sign survives.
  EXPECT_EQ(bits(Cvt<float, float>("cvt.rni.f32.f32", {2.5f, 3.5f, -0.5f, 1e30f})),
            (U32{Bits(2.0f), Bits(4.0f), 0x80000000u, Bits(1e30f)}));
  EXPECT_EQ(bits(Cvt<float, float>("cvt.rzi.f32.f32", {-2.7f})), (U32{Bits(-2.0f)}));
  EXPECT_EQ(bits(Cvt<float, float>("cvt.rmi.f32.f32", {-2.1f})), (U32{Bits(-3.0f)}));
  EXPECT_EQ(bits(Cvt<float, float>("cvt.rpi.f32.f32", {2.1f})), (U32{Bits(3.0f)}));
  EXPECT_EQ(Bits(Cvt<double, double>("cvt.rni.f64.f64", {2.5}).at(0)), Bits(2.0));
}

}  // namespace
}  // namespace kiln::emu::testing
