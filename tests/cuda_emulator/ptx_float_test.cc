// PTX f32/f64 arithmetic under the emulator: the four IEEE rounding modes of
// add/sub/mul/fma/div/sqrt/rcp on operands whose exact result is not
// representable, fused multiply-add's single rounding, .ftz flushing of
// subnormal inputs and results, .sat clamping, the 2-ulp divides, min/max
// with NaN and signed zeros, abs/neg/copysign, setp's ordered and unordered
// compares, and testp.
//
// Expected results are bit patterns worked out by hand (the arithmetic is in
// the comments) or computed on the host with IEEE float operations, which
// are correctly rounded.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"

namespace kiln::emu::testing {
namespace {

using U32 = std::vector<uint32_t>;
using U64 = std::vector<uint64_t>;
using Rows32 = std::vector<std::array<uint32_t, 3>>;
using Rows64 = std::vector<std::array<uint64_t, 3>>;

// Frequently used f32 bit patterns.
constexpr uint32_t kOne = 0x3F800000u;         // 1.0
constexpr uint32_t kOneUlp = 0x3F800001u;      // 1 + 2^-23
constexpr uint32_t kMinusOne = 0xBF800000u;    // -1.0
constexpr uint32_t kTwo = 0x40000000u;         // 2.0
constexpr uint32_t kHalf = 0x3F000000u;        // 0.5
constexpr uint32_t kPow2m24 = 0x33800000u;     // 2^-24: half an ulp of 1.0
constexpr uint32_t kPow2m25 = 0x33000000u;     // 2^-25
constexpr uint32_t kNaN = 0x7FC00000u;
constexpr uint32_t kInf = 0x7F800000u;
constexpr uint32_t kNegInf = 0xFF800000u;
constexpr uint32_t kNegZero = 0x80000000u;
constexpr uint32_t kMinSubnormal = 0x00000001u;  // 2^-149

constexpr uint64_t kOneD = 0x3FF0000000000000ull;
constexpr uint64_t kNaND = 0x7FF8000000000000ull;

class PtxFloatTest : public EmulatorTest {
 protected:
  // Runs an f32 body on rows of bit patterns and returns the result bits.
  U32 RunF32(const std::string& body, const Rows32& rows) {
    return ApplyAs<uint32_t, uint32_t>("f32", "f32", body, rows);
  }
  U64 RunF64(const std::string& body, const Rows64& rows) {
    return ApplyAs<uint64_t, uint64_t>("f64", "f64", body, rows);
  }
  // f32 operands, a 0/1 result.
  U32 Pred32(const std::string& body, const Rows32& rows) {
    return ApplyAs<uint32_t, uint32_t>("f32", "b32", body, rows);
  }
};

void Expect32(const U32& got, const U32& want, std::string_view what) {
  ExpectSameBits(got, want, IsNaN32, what);
}
void Expect64(const U64& got, const U64& want, std::string_view what) {
  ExpectSameBits(got, want, IsNaN64, what);
}

TEST_F(PtxFloatTest, AddRoundingModes) {
  const Rows32 rows = {
      {kOne, kPow2m24},          // 1 + 2^-24: exactly half way, even neighbour is 1.0
      {kOne, 0x33800001u},       // 1 + 2^-24(1 + 2^-23): just above half way
      {kOneUlp, kPow2m24},       // (1 + 2^-23) + 2^-24: half way, even neighbour 1 + 2^-22
      {kMinusOne, 0xB3800000u},  // -1 - 2^-24: half way below -1
  };
  Expect32(RunF32("add.rn.f32 %d, %a, %b;", rows), {kOne, kOneUlp, 0x3F800002u, kMinusOne}, "add.rn");
  Expect32(RunF32("add.f32 %d, %a, %b;", rows), {kOne, kOneUlp, 0x3F800002u, kMinusOne}, "add");
  Expect32(RunF32("add.rz.f32 %d, %a, %b;", rows), {kOne, kOne, kOneUlp, kMinusOne}, "add.rz");
  Expect32(RunF32("add.rm.f32 %d, %a, %b;", rows), {kOne, kOne, kOneUlp, 0xBF800001u}, "add.rm");
  Expect32(RunF32("add.rp.f32 %d, %a, %b;", rows), {kOneUlp, kOneUlp, 0x3F800002u, kMinusOne}, "add.rp");
  // 1 - 2^-25 lies half way between 1 - 2^-24 (0x3F7FFFFF, odd) and 1.0.
  const Rows32 sub = {{kOne, kPow2m25}};
  Expect32(RunF32("sub.rn.f32 %d, %a, %b;", sub), {kOne}, "sub.rn");
  Expect32(RunF32("sub.rz.f32 %d, %a, %b;", sub), {0x3F7FFFFFu}, "sub.rz");
  Expect32(RunF32("sub.rm.f32 %d, %a, %b;", sub), {0x3F7FFFFFu}, "sub.rm");
  Expect32(RunF32("sub.rp.f32 %d, %a, %b;", sub), {kOne}, "sub.rp");
}

TEST_F(PtxFloatTest, MulAndFmaRoundingModes) {
  // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46: between 1 + 2^-22 (0x3F800002) and
  // 1 + 3*2^-23 (0x3F800003), much nearer the first.
  const Rows32 mul = {{kOneUlp, kOneUlp}, {0xBF800001u, kOneUlp}};
  Expect32(RunF32("mul.rn.f32 %d, %a, %b;", mul), {0x3F800002u, 0xBF800002u}, "mul.rn");
  Expect32(RunF32("mul.rz.f32 %d, %a, %b;", mul), {0x3F800002u, 0xBF800002u}, "mul.rz");
  Expect32(RunF32("mul.rm.f32 %d, %a, %b;", mul), {0x3F800002u, 0xBF800003u}, "mul.rm");
  Expect32(RunF32("mul.rp.f32 %d, %a, %b;", mul), {0x3F800003u, 0xBF800002u}, "mul.rp");
  // fma((1 + 2^-23), (1 + 2^-23), -1) = 2^-22 + 2^-46 = 2^-22 (1 + 2^-24):
  // half an ulp above 2^-22 (0x34800000), so rn ties to it.
  const Rows32 fma = {{kOneUlp, kOneUlp, kMinusOne}};
  Expect32(RunF32("fma.rn.f32 %d, %a, %b, %c;", fma), {0x34800000u}, "fma.rn");
  Expect32(RunF32("fma.rz.f32 %d, %a, %b, %c;", fma), {0x34800000u}, "fma.rz");
  Expect32(RunF32("fma.rm.f32 %d, %a, %b, %c;", fma), {0x34800000u}, "fma.rm");
  Expect32(RunF32("fma.rp.f32 %d, %a, %b, %c;", fma), {0x34800001u}, "fma.rp");
}

TEST_F(PtxFloatTest, FmaRoundsOnce) {
  // (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46 exactly (0xA8800000). Rounding the
  // product first gives 1.0 (2^-46 is far below half an ulp) and then 0.
  const Rows32 rows = {{kOneUlp, 0x3F7FFFFEu, kMinusOne}};
  Expect32(RunF32("fma.rn.f32 %d, %a, %b, %c;", rows), {0xA8800000u}, "fma.rn");
  Expect32(RunF32("mad.rn.f32 %d, %a, %b, %c;", rows), {0xA8800000u}, "mad.rn");
  Expect32(RunF32("mul.rn.f32 %tf0, %a, %b;\n add.rn.f32 %d, %tf0, %c;", rows), {0}, "mul.rn+add.rn");
  // The same in f64: (1 + 2^-52)(1 - 2^-52) - 1 = -2^-104.
  Expect64(RunF64("fma.rn.f64 %d, %a, %b, %c;", {{0x3FF0000000000001ull, 0x3FEFFFFFFFFFFFFEull, 0xBFF0000000000000ull}}),
           {0xB970000000000000ull}, "fma.rn.f64");
}

TEST_F(PtxFloatTest, DoubleRoundingModes) {
  const uint64_t pow2m53 = 0x3CA0000000000000ull;  // half an ulp of 1.0
  const Rows64 add = {{kOneD, pow2m53}, {0xBFF0000000000000ull, 0xBCA0000000000000ull}};
  Expect64(RunF64("add.rn.f64 %d, %a, %b;", add), {kOneD, 0xBFF0000000000000ull}, "add.rn.f64");
  Expect64(RunF64("add.rz.f64 %d, %a, %b;", add), {kOneD, 0xBFF0000000000000ull}, "add.rz.f64");
  Expect64(RunF64("add.rm.f64 %d, %a, %b;", add), {kOneD, 0xBFF0000000000001ull}, "add.rm.f64");
  Expect64(RunF64("add.rp.f64 %d, %a, %b;", add), {0x3FF0000000000001ull, 0xBFF0000000000000ull}, "add.rp.f64");
  // (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104.
  const Rows64 mul = {{0x3FF0000000000001ull, 0x3FF0000000000001ull}};
  Expect64(RunF64("mul.rn.f64 %d, %a, %b;", mul), {0x3FF0000000000002ull}, "mul.rn.f64");
  Expect64(RunF64("mul.rz.f64 %d, %a, %b;", mul), {0x3FF0000000000002ull}, "mul.rz.f64");
  Expect64(RunF64("mul.rp.f64 %d, %a, %b;", mul), {0x3FF0000000000003ull}, "mul.rp.f64");
  // 1/3 = 0x3FD5555555555555.55..: rn and rz round down, rp up.
  const Rows64 third = {{kOneD, 0x4008000000000000ull}};
  Expect64(RunF64("div.rn.f64 %d, %a, %b;", third), {0x3FD5555555555555ull}, "div.rn.f64");
  Expect64(RunF64("div.rz.f64 %d, %a, %b;", third), {0x3FD5555555555555ull}, "div.rz.f64");
  Expect64(RunF64("div.rp.f64 %d, %a, %b;", third), {0x3FD5555555555556ull}, "div.rp.f64");
  Expect64(RunF64("rcp.rn.f64 %d, %a;", {{0x4008000000000000ull}}), {0x3FD5555555555555ull}, "rcp.rn.f64");
  // sqrt(2) = 0x3FF6A09E667F3BCD (correctly rounded).
  Expect64(RunF64("sqrt.rn.f64 %d, %a;", {{0x4000000000000000ull}}), {0x3FF6A09E667F3BCDull}, "sqrt.rn.f64");
}

TEST_F(PtxFloatTest, DivideSqrtReciprocal) {
  const uint32_t three = 0x40400000u;
  // 1/3 = 0x3EAAAAAA.AA..: rn rounds up to ..AB; rz and rm truncate.
  const Rows32 third = {{kOne, three}, {kTwo, three}, {0x41200000u /*10*/, 0x40800000u /*4*/}};
  Expect32(RunF32("div.rn.f32 %d, %a, %b;", third), {0x3EAAAAABu, 0x3F2AAAABu, 0x40200000u /*2.5*/}, "div.rn");
  Expect32(RunF32("div.rz.f32 %d, %a, %b;", third), {0x3EAAAAAAu, 0x3F2AAAAAu, 0x40200000u}, "div.rz");
  Expect32(RunF32("div.rm.f32 %d, %a, %b;", third), {0x3EAAAAAAu, 0x3F2AAAAAu, 0x40200000u}, "div.rm");
  Expect32(RunF32("div.rp.f32 %d, %a, %b;", third), {0x3EAAAAABu, 0x3F2AAAABu, 0x40200000u}, "div.rp");
  Expect32(RunF32("rcp.rn.f32 %d, %a;", {{three}, {0}, {kNegZero}, {kInf}}),
           {0x3EAAAAABu, kInf, kNegInf, 0}, "rcp.rn");
  Expect32(RunF32("rcp.rz.f32 %d, %a;", {{three}}), {0x3EAAAAAAu}, "rcp.rz");
  // sqrt(2) rounds down to 0x3FB504F3 (its square is below 2).
  const Rows32 roots = {{kTwo}, {0x40800000u /*4*/}, {kMinusOne}, {kNegZero}, {kInf}};
  Expect32(RunF32("sqrt.rn.f32 %d, %a;", roots), {0x3FB504F3u, kTwo, kNaN, kNegZero, kInf}, "sqrt.rn");
  Expect32(RunF32("sqrt.rz.f32 %d, %a;", {{kTwo}}), {0x3FB504F3u}, "sqrt.rz");
  Expect32(RunF32("sqrt.rp.f32 %d, %a;", {{kTwo}}), {0x3FB504F4u}, "sqrt.rp");
}

// Host float arithmetic is IEEE round-to-nearest-even: the emulator's .rn
// operations must match it bit for bit on random operands.
TEST_F(PtxFloatTest, RoundToNearestMatchesHostOnRandomOperands) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> exp(-30, 30), sign(0, 1);
  auto random_float = [&] { return std::ldexp(mant(rng), exp(rng)) * (sign(rng) ? -1.0f : 1.0f); };
  Rows32 rows;
  U32 add, mul, div, fma, sqrt;
  for (int i = 0; i < 2000; ++i) {
    float a = random_float(), b = random_float(), c = random_float();
    rows.push_back({Bits(a), Bits(b), Bits(c)});
    add.push_back(Bits(a + b));
    mul.push_back(Bits(a * b));
    div.push_back(Bits(a / b));
    fma.push_back(Bits(std::fma(a, b, c)));
    sqrt.push_back(Bits(std::sqrt(std::fabs(a))));
  }
  Expect32(RunF32("add.rn.f32 %d, %a, %b;", rows), add, "add.rn");
  Expect32(RunF32("mul.rn.f32 %d, %a, %b;", rows), mul, "mul.rn");
  Expect32(RunF32("div.rn.f32 %d, %a, %b;", rows), div, "div.rn");
  Expect32(RunF32("fma.rn.f32 %d, %a, %b, %c;", rows), fma, "fma.rn");
  Expect32(RunF32("abs.f32 %tf0, %a;\n sqrt.rn.f32 %d, %tf0;", rows), sqrt, "sqrt.rn");
}

// Directed rounding on random operands: the exact sum or product of two
// floats whose exponents are within 20 of each other fits in a double, so
// the host rounds the exact value itself.
TEST_F(PtxFloatTest, DirectedRoundingMatchesExactHostResult) {
  auto round = [](double exact, char mode) {
    float r = static_cast<float>(exact);  // nearest
    double back = r;
    if ((mode == 'm' || (mode == 'z' && exact > 0)) && back > exact)
      r = std::nextafter(r, -std::numeric_limits<float>::infinity());
    if ((mode == 'p' || (mode == 'z' && exact < 0)) && back < exact)
      r = std::nextafter(r, std::numeric_limits<float>::infinity());
    return Bits(r);
  };
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> exp(-10, 10), sign(0, 1);
  auto random_float = [&] { return std::ldexp(mant(rng), exp(rng)) * (sign(rng) ? -1.0f : 1.0f); };
  Rows32 rows;
  for (int i = 0; i < 1000; ++i) rows.push_back({Bits(random_float()), Bits(random_float()), 0});
  for (char mode : {'z', 'm', 'p'}) {
    U32 add, mul;
    for (const auto& r : rows) {
      double a = F32(r[0]), b = F32(r[1]);
      add.push_back(round(a + b, mode));
      mul.push_back(round(a * b, mode));
    }
    std::string m = std::string(".r") + mode;
    Expect32(RunF32("add" + m + ".f32 %d, %a, %b;", rows), add, "add" + m);
    Expect32(RunF32("mul" + m + ".f32 %d, %a, %b;", rows), mul, "mul" + m);
  }
}

TEST_F(PtxFloatTest, FlushToZero) {
  const uint32_t pow2m70 = 0x1C800000u;  // 2^-70; its square 2^-140 is subnormal
  // Subnormal inputs flush to a zero of the same sign: -0 + +0 = +0.
  const Rows32 add = {{kMinSubnormal, 0}, {0x80000001u, 0}};
  Expect32(RunF32("add.ftz.f32 %d, %a, %b;", add), {0, 0}, "add.ftz");
  Expect32(RunF32("add.f32 %d, %a, %b;", add), {kMinSubnormal, 0x80000001u}, "add");
  // Subnormal results flush: 2^-140 = 0x00000200; 2^-126 * 0.5 = 2^-127 =
  // 0x00400000.
  const Rows32 mul = {{pow2m70, pow2m70}, {0x9C800000u, pow2m70}, {0x00800000u, kHalf}};
  Expect32(RunF32("mul.ftz.f32 %d, %a, %b;", mul), {0, kNegZero, 0}, "mul.ftz");
  Expect32(RunF32("mul.f32 %d, %a, %b;", mul), {0x00000200u, 0x80000200u, 0x00400000u}, "mul");
  // fma flushes a subnormal factor before multiplying: 2^-149 * 2^100 =
  // 2^-49 (0x27000000) unless flushed.
  const Rows32 fma = {{kMinSubnormal, 0x71800000u, 0}};
  Expect32(RunF32("fma.rn.ftz.f32 %d, %a, %b, %c;", fma), {0}, "fma.ftz");
  Expect32(RunF32("fma.rn.f32 %d, %a, %b, %c;", fma), {0x27000000u}, "fma");
}

TEST_F(PtxFloatTest, SaturateClampsToUnitInterval) {
  const Rows32 rows = {{0x3F400000u /*0.75*/, kHalf}, {0xBF000000u /*-0.5*/, 0x3E800000u /*0.25*/},
                       {kNaN, kOne}, {0x3E800000u, kHalf}};
  Expect32(RunF32("add.sat.f32 %d, %a, %b;", rows), {kOne, 0, 0, 0x3F400000u}, "add.sat");
  Expect32(RunF32("mul.sat.f32 %d, %a, %b;", {{kTwo, 0x40400000u}, {kMinusOne, kTwo}}), {kOne, 0}, "mul.sat");
  Expect32(RunF32("fma.rn.sat.f32 %d, %a, %b, %c;", {{kHalf, kHalf, 0x3E800000u}}), {kHalf}, "fma.sat");
}

// PTX min/max return the non-NaN operand, NaN only when both are NaN, and
// order -0.0 below +0.0.
TEST_F(PtxFloatTest, MinMaxWithNaNAndSignedZeros) {
  const uint32_t two = kTwo;
  const Rows32 rows = {{kNaN, kOne}, {kOne, kNaN}, {kNaN, kNaN}, {kNegZero, 0}, {0, kNegZero}, {kMinusOne, two}};
  Expect32(RunF32("min.f32 %d, %a, %b;", rows), {kOne, kOne, kNaN, kNegZero, kNegZero, kMinusOne}, "min");
  Expect32(RunF32("max.f32 %d, %a, %b;", rows), {kOne, kOne, kNaN, 0, 0, two}, "max");
  Expect32(RunF32("min.NaN.f32 %d, %a, %b;", {{kNaN, kOne}, {kOne, two}}), {kNaN, kOne}, "min.NaN");
  Expect64(RunF64("min.f64 %d, %a, %b;", {{kNaND, kOneD}, {0x8000000000000000ull, 0}}),
           {kOneD, 0x8000000000000000ull}, "min.f64");
  Expect64(RunF64("max.f64 %d, %a, %b;", {{kOneD, kNaND}}), {kOneD}, "max.f64");
}

TEST_F(PtxFloatTest, AbsNegCopysign) {
  // abs/neg of NaN give an unspecified NaN; of zeros they act on the sign.
  Expect32(RunF32("abs.f32 %d, %a;", {{kNegZero}, {0xBFC00000u /*-1.5*/}, {0xFFC00000u}, {kNegInf}}),
           {0, 0x3FC00000u, kNaN, kInf}, "abs");
  Expect32(RunF32("neg.f32 %d, %a;", {{0}, {kNegZero}, {kOne}, {kNaN}}), {kNegZero, 0, kMinusOne, kNaN}, "neg");
  Expect64(RunF64("abs.f64 %d, %a;", {{0x8000000000000000ull}}), {0}, "abs.f64");
  Expect64(RunF64("neg.f64 %d, %a;", {{kOneD}}), {0xBFF0000000000000ull}, "neg.f64");
  // copysign d, a, b: b's magnitude with a's sign.
  Expect32(RunF32("copysign.f32 %d, %a, %b;", {{kMinusOne, kTwo}, {kOne, 0xC0000000u}, {kNegZero, 0x40400000u}}),
           {0xC0000000u, kTwo, 0xC0400000u}, "copysign");
  Expect64(RunF64("copysign.f64 %d, %a, %b;", {{0x8000000000000000ull, kOneD}}), {0xBFF0000000000000ull},
           "copysign.f64");
}

TEST_F(PtxFloatTest, CompareOrderedAndUnordered) {
  // Rows: (NaN, 1), (1, NaN), (NaN, NaN), (1, 2), (2, 2), (-0, +0).
  const Rows32 rows = {{kNaN, kOne}, {kOne, kNaN}, {kNaN, kNaN}, {kOne, kTwo}, {kTwo, kTwo}, {kNegZero, 0}};
  struct Case {
    const char* op;
    U32 expected;
  } cases[] = {
      {"eq", {0, 0, 0, 0, 1, 1}},  {"ne", {0, 0, 0, 1, 0, 0}},  {"lt", {0, 0, 0, 1, 0, 0}},
      {"le", {0, 0, 0, 1, 1, 1}},  {"gt", {0, 0, 0, 0, 0, 0}},  {"ge", {0, 0, 0, 0, 1, 1}},
      {"equ", {1, 1, 1, 0, 1, 1}}, {"neu", {1, 1, 1, 1, 0, 0}}, {"ltu", {1, 1, 1, 1, 0, 0}},
      {"leu", {1, 1, 1, 1, 1, 1}}, {"gtu", {1, 1, 1, 0, 0, 0}}, {"geu", {1, 1, 1, 0, 1, 1}},
      {"num", {0, 0, 0, 1, 1, 1}}, {"nan", {1, 1, 1, 0, 0, 0}},
  };
  for (const Case& k : cases) {
    std::string body = std::string("setp.") + k.op + ".f32 %p1, %a, %b;\n selp.u32 %d, 1, 0, %p1;";
    EXPECT_EQ(Pred32(body, rows), k.expected) << k.op;
  }
  EXPECT_EQ((ApplyAs<uint32_t, uint64_t>("f64", "b32", "setp.ltu.f64 %p1, %a, %b;\n selp.u32 %d, 1, 0, %p1;",
                                         {{kNaND, kOneD}, {kOneD, kOneD}})),
            (U32{1, 0}));
}

TEST_F(PtxFloatTest, TestProperties) {
  // Rows: 1.0, +inf, -inf, NaN, 0, 2^-149 (subnormal), FLT_MAX.
  const Rows32 rows = {{kOne}, {kInf}, {kNegInf}, {kNaN}, {0}, {kMinSubnormal}, {0x7F7FFFFFu}};
  struct Case {
    const char* op;
    U32 expected;
  } cases[] = {
      {"finite", {1, 0, 0, 0, 1, 1, 1}},     {"infinite", {0, 1, 1, 0, 0, 0, 0}},
      {"number", {1, 1, 1, 0, 1, 1, 1}},     {"notanumber", {0, 0, 0, 1, 0, 0, 0}},
      {"normal", {1, 0, 0, 0, 0, 0, 1}},     {"subnormal", {0, 0, 0, 0, 0, 1, 0}},
  };
  for (const Case& k : cases) {
    std::string body = std::string("testp.") + k.op + ".f32 %p1, %a;\n selp.u32 %d, 1, 0, %p1;";
    EXPECT_EQ(Pred32(body, rows), k.expected) << k.op;
  }
}

// PTX ISA, div: div.approx.f32 has at most 2 ulp of error for |b| in
// [2^-126, 2^126]; div.full.f32 at most 2 ulp over the full range.
TEST_F(PtxFloatTest, ApproximateDivideWithinTwoUlp) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> exp_a(-20, 20), exp_b(-60, 60), sign(0, 1);
  Rows32 rows;
  std::vector<float> exact;
  for (int i = 0; i < 2000; ++i) {
    float a = std::ldexp(mant(rng), exp_a(rng)) * (sign(rng) ? -1.0f : 1.0f);
    float b = std::ldexp(mant(rng), exp_b(rng)) * (sign(rng) ? -1.0f : 1.0f);
    rows.push_back({Bits(a), Bits(b), 0});
    exact.push_back(a / b);  // correctly rounded on the host
  }
  for (const char* op : {"div.approx.f32", "div.full.f32", "div.approx.ftz.f32"}) {
    U32 got = RunF32(std::string(op) + " %d, %a, %b;", rows);
    ASSERT_EQ(got.size(), rows.size()) << op;
    int64_t worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, UlpDistance(F32(got[i]), exact[i]));
    EXPECT_LE(worst, 2) << op;
  }
}

TEST_F(PtxFloatTest, FloatImmediates) {
  // Hex float immediates (0f..., 0d...) and a decimal one.
  Expect32(RunF32("add.f32 %d, %a, 0f40490FDB;", {{0}}), {0x40490FDBu}, "0f immediate");
  Expect32(RunF32("mul.f32 %d, %a, 0.5;", {{kTwo}}), {kOne}, "decimal immediate");
  Expect64(RunF64("add.f64 %d, %a, 0d400921FB54442D18;", {{0}}), {0x400921FB54442D18ull}, "0d immediate");
  Expect32(RunF32("mov.f32 %d, 0fBF800000;", {{0}}), {kMinusOne}, "mov immediate");
}

}  // namespace
}  // namespace kiln::emu::testing
