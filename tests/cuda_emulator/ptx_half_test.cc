// PTX half-precision arithmetic under the emulator: f16 and bf16 add, mul
// and fma (.rn), their packed x2 forms, neg/abs/min/max/setp on halves, and
// cvt between f32/f64 and f16/bf16 with each rounding mode, overflow to
// infinity, subnormals and NaN.
//
// Expected values are bit patterns worked out by hand (f16 1.0 = 0x3C00,
// bf16 1.0 = 0x3F80) or, for the random sweeps, the host's exact double
// result rounded to the half format by half_reference.h, whose functions
// are themselves checked against known patterns first.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"
#include "tests/cuda_emulator/half_reference.h"

namespace kiln::emu::testing {
namespace {

using U16 = std::vector<uint16_t>;
using U32 = std::vector<uint32_t>;

TEST(HalfReferenceTest, RoundingHelpersAgreeWithKnownPatterns) {
  EXPECT_EQ(HalfFromDouble(1.0), 0x3C00);
  EXPECT_EQ(HalfFromDouble(65504.0), 0x7BFF);
  EXPECT_EQ(HalfFromDouble(65519.0), 0x7BFF);
  EXPECT_EQ(HalfFromDouble(65520.0), 0x7C00);
  EXPECT_EQ(HalfFromDouble(1.0 + std::ldexp(1.0, -11)), 0x3C00);      // tie to even
  EXPECT_EQ(HalfFromDouble(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);  // tie to even
  EXPECT_EQ(HalfFromDouble(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(HalfFromDouble(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(HalfFromDouble(-std::ldexp(1.0, -20)), 0x8010);
  EXPECT_EQ(HalfFromDouble(std::ldexp(1023.0, -24)), 0x03FF);
  EXPECT_EQ(HalfFromDouble(std::ldexp(2047.5, -24)), 0x0800);  // 2^-13
  EXPECT_EQ(HalfToDouble(0x3555), 1365.0 / 4096.0);
  EXPECT_EQ(HalfToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(Bf16FromDouble(1.0), 0x3F80);
  EXPECT_EQ(Bf16FromDouble(1.0 + std::ldexp(1.0, -8)), 0x3F80);
  EXPECT_EQ(Bf16FromDouble(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
  EXPECT_EQ(Bf16FromDouble(3.3895313892515355e38), 0x7F7F);  // bf16 max
  EXPECT_EQ(Bf16ToDouble(0x4049), 3.140625);
}

// ---- Tests -----------------------------------------------------------------

class PtxHalfTest : public EmulatorTest {
 protected:
  U16 H(const std::string& body, const std::vector<std::array<uint16_t, 3>>& rows) {
    return Apply<uint16_t, uint16_t>(body, rows);
  }
  U32 H2(const std::string& body, const std::vector<std::array<uint32_t, 3>>& rows) {
    return Apply<uint32_t, uint32_t>(body, rows);
  }
};

void ExpectHalf(const U16& got, const U16& want, std::string_view what) {
  ExpectSameBits(got, want, IsNaN16, what);
}
void ExpectBf16(const U16& got, const U16& want, std::string_view what) {
  ExpectSameBits(got, want, IsNaNBf16, what);
}

TEST_F(PtxHalfTest, F16AddMulFma) {
  // 2^-11 = 0x1000 is half an ulp of 1.0; 16 = 0x4C00, 8 = 0x4800.
  ExpectHalf(H("add.f16 %d, %a, %b;", {{0x3C00, 0x3C00},
                                       {0x3C00, 0x1000},   // tie -> 1.0 (even)
                                       {0x3C01, 0x1000},   // tie -> 0x3C02 (even)
                                       {0x3C00, 0x1001},   // above half -> 0x3C01
                                       {0x7BFF, 0x7BFF},   // overflow -> inf
                                       {0x7BFF, 0x4C00},   // 65520: tie rounds up past max -> inf
                                       {0x7BFF, 0x4800},   // 65512 -> 65504
                                       {0x7E00, 0x3C00},   // NaN
                                       {0xFC00, 0x7C00}}),  // -inf + inf = NaN
             {0x4000, 0x3C00, 0x3C02, 0x3C01, 0x7C00, 0x7C00, 0x7BFF, 0x7E00, 0x7E00}, "add.f16");
  ExpectHalf(H("add.rn.f16 %d, %a, %b;", {{0x3C01, 0x1000}}), {0x3C02}, "add.rn.f16");
  ExpectHalf(H("sub.f16 %d, %a, %b;", {{0x3C00, 0x4000}}), {0xBC00}, "sub.f16");
  // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 -> 0x3C02. 2^-24 * 0.5 = 2^-25: a tie
  // between 0 and 2^-24 -> 0. 3*2^-24 * 0.5: tie between 1 and 2 (x2^-24) ->
  // 2. 32768 * 2 -> inf.
  ExpectHalf(H("mul.f16 %d, %a, %b;",
               {{0x3C01, 0x3C01}, {0x4000, 0x3800}, {0x0001, 0x3800}, {0x0003, 0x3800}, {0x7800, 0x4000}}),
             {0x3C02, 0x3C00, 0x0000, 0x0002, 0x7C00}, "mul.f16");
  // fma rounds once: (1 + 2^-10)(1 - 2^-11) - 1 = 2^-11 - 2^-21 = 0x0FFE
  // exactly (a product rounded first would give 1.0 and then 0);
  // (1 + 2^-10)(1 - 2^-10) - 1 = -2^-20, the subnormal 0x8010.
  ExpectHalf(H("fma.rn.f16 %d, %a, %b, %c;", {{0x3C01, 0x3BFF, 0xBC00}, {0x3C01, 0x3BFE, 0xBC00}}),
             {0x0FFE, 0x8010}, "fma.rn.f16");
  ExpectHalf(H("mul.rn.f16 %th0, %a, %b;\n add.rn.f16 %d, %th0, %c;", {{0x3C01, 0x3BFF, 0xBC00}}), {0x0000},
             "mul+add f16");
}

TEST_F(PtxHalfTest, Bf16AddMulFma) {
  // 2^-8 = 0x3B80 is half an ulp of 1.0 in bf16.
  ExpectBf16(H("add.rn.bf16 %d, %a, %b;",
               {{0x3F80, 0x3F80}, {0x3F80, 0x3B80}, {0x3F81, 0x3B80}, {0x3F80, 0x3B81}, {0x7F7F, 0x7F7F},
                {0x7FC0, 0x3F80}}),
             {0x4000, 0x3F80, 0x3F82, 0x3F81, 0x7F80, 0x7FC0}, "add.rn.bf16");
  // (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 -> 0x3F82; 2 * 0.5 = 1.
  ExpectBf16(H("mul.rn.bf16 %d, %a, %b;", {{0x3F81, 0x3F81}, {0x4000, 0x3F00}}), {0x3F82, 0x3F80},
             "mul.rn.bf16");
  // (1 + 2^-7)(1 - 2^-8) - 1 = 2^-8 - 2^-15 = 2^-9 * (1 + 63/64): exponent
  // 118, mantissa 126 -> 0x3B7E exactly.
  ExpectBf16(H("fma.rn.bf16 %d, %a, %b, %c;", {{0x3F81, 0x3F7F, 0xBF80}}), {0x3B7E}, "fma.rn.bf16");
}

TEST_F(PtxHalfTest, PackedHalves) {
  // Upper and lower halves are independent lanes.
  EXPECT_EQ(H2("add.f16x2 %d, %a, %b;", {{0x40003C00u, 0x3C003C00u}, {0x3C011000u, 0x10003C00u}}),
            (U32{0x42004000u /* 3 | 2 */, 0x3C023C00u}));
  EXPECT_EQ(H2("mul.f16x2 %d, %a, %b;", {{0x40004200u, 0x38004000u}}), (U32{0x3C004600u /* 1 | 6 */}));
  EXPECT_EQ(H2("fma.rn.f16x2 %d, %a, %b, %c;", {{0x3C013C01u, 0x3BFF3BFEu, 0xBC00BC00u}}), (U32{0x0FFE8010u}));
  EXPECT_EQ(H2("add.rn.bf16x2 %d, %a, %b;", {{0x3F803F81u, 0x3F803B80u}}), (U32{0x40003F82u}));
  EXPECT_EQ(H2("mul.rn.bf16x2 %d, %a, %b;", {{0x40003F81u, 0x3F003F81u}}), (U32{0x3F803F82u}));
  // Upper: the fma above (0x3B7E); lower: (1 + 2^-7) * 1 - 1 = 2^-7 = 0x3C00.
  EXPECT_EQ(H2("fma.rn.bf16x2 %d, %a, %b, %c;", {{0x3F813F81u, 0x3F7F3F80u, 0xBF80BF80u}}), (U32{0x3B7E3C00u}));
  // mov.b32 packs and unpacks halves: {lo, hi}.
  EXPECT_EQ(H2("mov.b32 {%th0, %th1}, %a;\n mov.b32 %d, {%th1, %th0};", {{0x12345678u}}), (U32{0x56781234u}));
}

TEST_F(PtxHalfTest, NegAbsMinMaxCompare) {
  ExpectHalf(H("neg.f16 %d, %a;", {{0x3C00}, {0x8000}}), {0xBC00, 0x0000}, "neg.f16");
  ExpectHalf(H("abs.f16 %d, %a;", {{0xBC00}}), {0x3C00}, "abs.f16");
  ExpectBf16(H("neg.bf16 %d, %a;", {{0x3F80}}), {0xBF80}, "neg.bf16");
  // min/max return the non-NaN operand.
  ExpectHalf(H("min.f16 %d, %a, %b;", {{0x3C00, 0x4000}, {0x7E00, 0x3C00}}), {0x3C00, 0x3C00}, "min.f16");
  ExpectHalf(H("max.f16 %d, %a, %b;", {{0x3C00, 0x4000}, {0x3C00, 0x7E00}}), {0x4000, 0x3C00}, "max.f16");
  ExpectBf16(H("max.bf16 %d, %a, %b;", {{0xBF80, 0x3F80}}), {0x3F80}, "max.bf16");
  EXPECT_EQ((ApplyAs<uint32_t, uint16_t>("b16", "b32", "setp.lt.f16 %p1, %a, %b;\n selp.u32 %d, 1, 0, %p1;",
                                         {{0x3C00, 0x4000}, {0x4000, 0x3C00}, {0x7E00, 0x3C00}})),
            (U32{1, 0, 0}));
  EXPECT_EQ((ApplyAs<uint32_t, uint16_t>("b16", "b32", "setp.nan.f16 %p1, %a, %b;\n selp.u32 %d, 1, 0, %p1;",
                                         {{0x7E00, 0x3C00}, {0x3C00, 0x3C00}})),
            (U32{1, 0}));
}

TEST_F(PtxHalfTest, ConvertF32ToF16) {
  auto cvt = [&](const char* op, const U32& in) {
    std::vector<std::array<uint32_t, 3>> rows;
    for (uint32_t x : in) rows.push_back({x, 0, 0});
    return ApplyAs<uint16_t, uint32_t>("f32", "b16", std::string(op) + " %d, %a;", rows);
  };
  // 1.0; 1 + 2^-11 (tie -> 1.0); 1 + 3*2^-11 (tie -> 0x3C02); 1 + 2^-11 +
  // 2^-23 (above the tie -> 0x3C01); 65520 (tie past max -> inf); 65519
  // (-> 65504); 2^-24 (-> 0x0001); 3*2^-25 (tie between 1 and 2 -> 2); 2^-25
  // (tie between 0 and 1 -> 0); -0; NaN; -inf; 1e-8 (-> 0).
  const U32 in = {0x3F800000u, 0x3F801000u, 0x3F803000u, 0x3F801001u, 0x477FF000u, 0x477FEF00u, 0x33800000u,
                  0x33C00000u, 0x33000000u, 0x80000000u, 0x7FC00000u, 0xFF800000u, 0x322BCC77u};
  ExpectHalf(cvt("cvt.rn.f16.f32", in),
             {0x3C00, 0x3C00, 0x3C02, 0x3C01, 0x7C00, 0x7BFF, 0x0001, 0x0002, 0x0000, 0x8000, 0x7E00, 0xFC00, 0x0000},
             "cvt.rn.f16.f32");
  // Toward zero never overflows to infinity: 65520 and 1e6 give 65504.
  ExpectHalf(cvt("cvt.rz.f16.f32", {0x477FF000u, 0x49742400u, 0x3F803000u, 0xC77FF000u}),
             {0x7BFF, 0x7BFF, 0x3C01, 0xFBFF}, "cvt.rz.f16.f32");
  // 1 + 2^-23 rounds up to 0x3C01 toward +inf; -(1 + 2^-23) down to 0xBC01.
  ExpectHalf(cvt("cvt.rp.f16.f32", {0x3F800001u}), {0x3C01}, "cvt.rp.f16.f32");
  ExpectHalf(cvt("cvt.rm.f16.f32", {0xBF800001u, 0x3F800001u}), {0xBC01, 0x3C00}, "cvt.rm.f16.f32");
}

TEST_F(PtxHalfTest, ConvertF64ToF16RoundsOnce) {
  // 1 + 2^-11 + 2^-40: just above the tie, so 0x3C01. Going through f32
  // first would round to 1 + 2^-11 (a tie) and then to 1.0.
  EXPECT_EQ((ApplyAs<uint16_t, uint64_t>("f64", "b16", "cvt.rn.f16.f64 %d, %a;", {{0x3FF0020000001000ull}})),
            (U16{0x3C01}));
}

TEST_F(PtxHalfTest, ConvertF16ToF32IsExact) {
  // 1.0; 2^-24; +inf; -inf; 65504; -0; NaN; 1023 * 2^-24 (largest subnormal).
  std::vector<std::array<uint16_t, 3>> rows = {{0x3C00}, {0x0001}, {0x7C00}, {0xFC00},
                                               {0x7BFF}, {0x8000}, {0x7E00}, {0x03FF}};
  ExpectSameBits(ApplyAs<uint32_t, uint16_t>("b16", "f32", "cvt.f32.f16 %d, %a;", rows),
                 U32{0x3F800000u, 0x33800000u, 0x7F800000u, 0xFF800000u, 0x477FE000u, 0x80000000u,
                     0x7FC00000u, 0x387FC000u},
                 IsNaN32, "cvt.f32.f16");
}

TEST_F(PtxHalfTest, ConvertBf16) {
  auto to_bf16 = [&](const char* op, const U32& in) {
    std::vector<std::array<uint32_t, 3>> rows;
    for (uint32_t x : in) rows.push_back({x, 0, 0});
    return ApplyAs<uint16_t, uint32_t>("f32", "b16", std::string(op) + " %d, %a;", rows);
  };
  // 1 + 2^-8 (tie -> 1.0); 1 + 2^-7 + 2^-8 (tie -> 0x3F82); 1 + 2^-8 + 2^-23
  // (-> 0x3F81); FLT_MAX (rounds up past bf16 max -> inf); NaN; 2^-149 (->
  // +0); -0; 1.0.
  ExpectBf16(to_bf16("cvt.rn.bf16.f32", {0x3F808000u, 0x3F818000u, 0x3F808001u, 0x7F7FFFFFu, 0x7FC00000u,
                                         0x00000001u, 0x80000000u, 0x3F800000u}),
             {0x3F80, 0x3F82, 0x3F81, 0x7F80, 0x7FC0, 0x0000, 0x8000, 0x3F80}, "cvt.rn.bf16.f32");
  ExpectBf16(to_bf16("cvt.rz.bf16.f32", {0x7F7FFFFFu, 0x3F81FFFFu}), {0x7F7F, 0x3F81}, "cvt.rz.bf16.f32");
  ExpectSameBits(ApplyAs<uint32_t, uint16_t>("b16", "f32", "cvt.f32.bf16 %d, %a;", {{0x3F80}, {0x4049}, {0xFF80}}),
                 U32{0x3F800000u, 0x40490000u, 0xFF800000u}, IsNaN32, "cvt.f32.bf16");
  // Packed conversions put a in the upper half and b in the lower.
  EXPECT_EQ((ApplyAs<uint32_t, uint32_t>("f32", "b32", "cvt.rn.f16x2.f32 %d, %a, %b;",
                                         {{0x3F800000u, 0x40000000u}, {0x477FF000u, 0x3F801000u}})),
            (U32{0x3C004000u, 0x7C003C00u}));
  EXPECT_EQ((ApplyAs<uint32_t, uint32_t>("f32", "b32", "cvt.rn.bf16x2.f32 %d, %a, %b;",
                                         {{0x3F800000u, 0x40000000u}})),
            (U32{0x3F804000u}));
}

// Random f16 operands with exponents near 1: the exact add/mul/fma results
// fit in a double, which the host rounds to f16 itself.
TEST_F(PtxHalfTest, F16MatchesHostRoundingOnRandomOperands) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> mant(0, 1023), exp(8, 22), sign(0, 1);
  auto random_half = [&] {
    return static_cast<uint16_t>((sign(rng) << 15) | (exp(rng) << 10) | mant(rng));
  };
  std::vector<std::array<uint16_t, 3>> rows;
  U16 add, mul, fma;
  std::vector<std::array<uint32_t, 3>> packed;
  U32 packed_add;
  for (int i = 0; i < 2000; ++i) {
    uint16_t a = random_half(), b = random_half(), c = random_half();
    rows.push_back({a, b, c});
    double x = HalfToDouble(a), y = HalfToDouble(b), z = HalfToDouble(c);
    add.push_back(HalfFromDouble(x + y));
    mul.push_back(HalfFromDouble(x * y));
    fma.push_back(HalfFromDouble(x * y + z));
    packed.push_back({(uint32_t{a} << 16) | b, (uint32_t{c} << 16) | a, 0});
    packed_add.push_back((uint32_t{HalfFromDouble(x + z)} << 16) | HalfFromDouble(y + x));
  }
  ExpectHalf(H("add.rn.f16 %d, %a, %b;", rows), add, "add.rn.f16");
  ExpectHalf(H("mul.rn.f16 %d, %a, %b;", rows), mul, "mul.rn.f16");
  ExpectHalf(H("fma.rn.f16 %d, %a, %b, %c;", rows), fma, "fma.rn.f16");
  EXPECT_EQ(H2("add.rn.f16x2 %d, %a, %b;", packed), packed_add);
}

TEST_F(PtxHalfTest, Bf16MatchesHostRoundingOnRandomOperands) {
  std::mt19937 rng(6);
  std::uniform_int_distribution<int> mant(0, 127), exp(120, 134), sign(0, 1);
  auto random_bf16 = [&] {
    return static_cast<uint16_t>((sign(rng) << 15) | (exp(rng) << 7) | mant(rng));
  };
  std::vector<std::array<uint16_t, 3>> rows;
  U16 add, mul, fma;
  for (int i = 0; i < 2000; ++i) {
    uint16_t a = random_bf16(), b = random_bf16(), c = random_bf16();
    rows.push_back({a, b, c});
    double x = Bf16ToDouble(a), y = Bf16ToDouble(b), z = Bf16ToDouble(c);
    add.push_back(Bf16FromDouble(x + y));
    mul.push_back(Bf16FromDouble(x * y));
    fma.push_back(Bf16FromDouble(x * y + z));
  }
  ExpectBf16(H("add.rn.bf16 %d, %a, %b;", rows), add, "add.rn.bf16");
  ExpectBf16(H("mul.rn.bf16 %d, %a, %b;", rows), mul, "mul.rn.bf16");
  ExpectBf16(H("fma.rn.bf16 %d, %a, %b, %c;", rows), fma, "fma.rn.bf16");
}

}  // namespace
}  // namespace kiln::emu::testing
