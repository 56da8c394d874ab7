// Tests for common/float_formats: encode/decode of every narrow float type,
// rounding, overflow/NaN rules, and XLA reduce-precision.
//
// Every expected value here was worked out by hand from the format
// definitions (ml_dtypes float8.h / mxfloat.h, XLA elemental_ir_emitter), not
// produced by the code under test; the derivation is in the comments.
#include "common/float_formats.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

namespace kiln {
namespace {

using ET = ElementType;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
double P2(int e) { return std::ldexp(1.0, e); }

constexpr ET kEightBit[] = {ET::kF8E5M2,      ET::kF8E4M3,      ET::kF8E4M3FN,
                            ET::kF8E4M3B11FNUZ, ET::kF8E5M2FNUZ, ET::kF8E4M3FNUZ,
                            ET::kF8E3M4,      ET::kF8E8M0FNU};

TEST(FloatFormats, IsNarrowFloat) {
  for (ET t : kEightBit) EXPECT_TRUE(IsNarrowFloat(t)) << ElementTypeName(t);
  EXPECT_TRUE(IsNarrowFloat(ET::kF16));
  EXPECT_TRUE(IsNarrowFloat(ET::kBF16));
  EXPECT_TRUE(IsNarrowFloat(ET::kF4E2M1FN));
  EXPECT_FALSE(IsNarrowFloat(ET::kF32));
  EXPECT_FALSE(IsNarrowFloat(ET::kF64));
  EXPECT_FALSE(IsNarrowFloat(ET::kS8));
  EXPECT_FALSE(IsNarrowFloat(ET::kC64));
}

TEST(FloatFormats, BFloat16) {
  EXPECT_EQ(DecodeNarrowFloat(ET::kBF16, 0x3F80), 1.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kBF16, 0xC000), -2.0);
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, 1.0), 0x3F80u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, 3.0), 0x4040u);
  // ulp(1) = 2^-7. 1 + 2^-8 is a tie between 0x3F80 (even) and 0x3F81.
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, 1 + P2(-8)), 0x3F80u);
  // 1 + 3*2^-9 = 1 + 0.75 ulp -> 0x3F81.
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, 1 + 3 * P2(-9)), 0x3F81u);
  // 1 + 3*2^-8 = 1 + 1.5 ulp: tie between 0x3F81 (odd) and 0x3F82 (even).
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, 1 + 3 * P2(-8)), 0x3F82u);
  // One rounding from double: via f32 this would become the tie 1 + 2^-8 and
  // then 1.0; directly it is above the tie.
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, 1 + P2(-8) + P2(-30)), 0x3F81u);
  // 0.1 = 1.6 * 2^-4 = 1.1001100|11.. -> 1.1001101 = 0x3DCD = 0.10009765625.
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, 0.1), 0x3DCDu);
  EXPECT_EQ(RoundToFloatType(ET::kBF16, -0.1), -0.10009765625);
  // Max (2 - 2^-7) * 2^127; (2 - 2^-8) * 2^127 ties to the even neighbour 2^128.
  EXPECT_EQ(DecodeNarrowFloat(ET::kBF16, 0x7F7F), (2 - P2(-7)) * P2(127));
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, (2 - P2(-8)) * P2(127)), 0x7F80u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, -(2 - P2(-8)) * P2(127)), 0xFF80u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, (2 - P2(-7) - P2(-9)) * P2(127)), 0x7F7Fu);
  EXPECT_EQ(DecodeNarrowFloat(ET::kBF16, 0x0001), P2(-133));
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, kNan), 0x7FC0u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, -kNan), 0xFFC0u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kBF16, -0.0), 0x8000u);
}

TEST(FloatFormats, Half) {
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, 1.0), 0x3C00u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, -2.5), 0xC100u);
  // 0x3555: exponent 13 -> 2^-2, mantissa 0x155 = 341.
  EXPECT_EQ(DecodeNarrowFloat(ET::kF16, 0x3555), (1 + 341.0 / 1024) / 4);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF16, 0x7BFF), 65504.0);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, 65504.0), 0x7BFFu);
  // ulp at the top is 32: 65519 rounds down, 65520 ties to even 65536 = inf.
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, 65519.0), 0x7BFFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, 65520.0), 0x7C00u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, -1e6), 0xFC00u);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF16, 0x7C00), kInf);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF16, 0xFC00), -kInf);
  EXPECT_TRUE(std::isnan(DecodeNarrowFloat(ET::kF16, 0x7C01)));
  EXPECT_TRUE(std::signbit(DecodeNarrowFloat(ET::kF16, 0xFE00)));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, kNan), 0x7E00u);
  // Subnormals: quantum 2^-24.
  EXPECT_EQ(DecodeNarrowFloat(ET::kF16, 0x0001), P2(-24));
  EXPECT_EQ(DecodeNarrowFloat(ET::kF16, 0x0400), P2(-14));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, P2(-24)), 0x0001u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, P2(-25)), 0x0000u);        // tie -> 0
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, 1.5 * P2(-25)), 0x0001u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, 3 * P2(-25)), 0x0002u);    // tie -> even
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, -P2(-26)), 0x8000u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, P2(-14) - P2(-26)), 0x0400u);  // carry
  // 0.1 -> 1.1001100110|011.. rounds down: 0x2E66 = 0.0999755859375.
  EXPECT_EQ(EncodeNarrowFloat(ET::kF16, 0.1), 0x2E66u);
}

TEST(FloatFormats, F8E4M3FN) {
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3FN, 0x7E), 448.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3FN, 0xFE), -448.0);
  EXPECT_TRUE(std::isnan(DecodeNarrowFloat(ET::kF8E4M3FN, 0x7F)));
  EXPECT_TRUE(std::isnan(DecodeNarrowFloat(ET::kF8E4M3FN, 0xFF)));
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3FN, 0x78), 256.0);  // not inf
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3FN, 0x01), P2(-9));
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3FN, 0x08), P2(-6));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FN, 1.0), 0x38u);
  // 464 = 14.5 quanta of 32: tie to even 14 -> 448. Above it -> NaN.
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FN, 464.0), 0x7Eu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FN, 465.0), 0x7Fu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FN, -500.0), 0xFFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FN, kInf), 0x7Fu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FN, -kInf), 0xFFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FN, kNan), 0x7Fu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FN, -0.0), 0x80u);
}

TEST(FloatFormats, IeeeLikeF8) {
  // f8e5m2: bias 15, max 1.75 * 2^15.
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E5M2, 0x7B), 57344.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E5M2, 0x7C), kInf);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E5M2, 0x01), P2(-16));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E5M2, 61439.0), 0x7Bu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E5M2, 61440.0), 0x7Cu);  // tie -> 2^16 = inf
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E5M2, kNan), 0x7Eu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E5M2, -kInf), 0xFCu);
  // f8e4m3: bias 7, IEEE: max 0x77 = 1.875 * 2^7, inf 0x78.
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3, 0x77), 240.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3, 0x78), kInf);
  EXPECT_TRUE(std::isnan(DecodeNarrowFloat(ET::kF8E4M3, 0x79)));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3, 247.0), 0x77u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3, 248.0), 0x78u);  // tie -> 256 = inf
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3, kNan), 0x7Cu);
  // f8e3m4: bias 3, max 0x6F = (1 + 15/16) * 8, inf 0x70.
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E3M4, 0x6F), 15.5);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E3M4, 0x70), kInf);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E3M4, 0x30), 1.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E3M4, 0x01), P2(-6));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E3M4, 15.75), 0x70u);  // tie -> 16 = inf
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E3M4, kNan), 0x78u);
}

TEST(FloatFormats, Fnuz) {
  // f8e4m3fnuz: bias 8.
  EXPECT_TRUE(std::isnan(DecodeNarrowFloat(ET::kF8E4M3FNUZ, 0x80)));
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3FNUZ, 0x40), 1.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3FNUZ, 0x7F), 240.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3FNUZ, 0xFF), -240.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3FNUZ, 0x01), P2(-10));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FNUZ, -0.0), 0x00u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FNUZ, -P2(-12)), 0x00u);  // underflow
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FNUZ, -1.0), 0xC0u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FNUZ, 250.0), 0x80u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FNUZ, -250.0), 0x80u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FNUZ, kInf), 0x80u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3FNUZ, -kNan), 0x80u);
  // f8e5m2fnuz: bias 16.
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E5M2FNUZ, 0x40), 1.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E5M2FNUZ, 0x7F), 57344.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E5M2FNUZ, 0x01), P2(-17));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E5M2FNUZ, -0.0), 0x00u);
  // f8e4m3b11fnuz: bias 11, 1.0 = 11 << 3, max 1.875 * 2^4.
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3B11FNUZ, 1.0), 0x58u);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3B11FNUZ, 0x7F), 30.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3B11FNUZ, 0x08), P2(-10));
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E4M3B11FNUZ, 0x01), P2(-13));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E4M3B11FNUZ, 31.0), 0x80u);  // tie -> 32
  EXPECT_TRUE(std::isnan(DecodeNarrowFloat(ET::kF8E4M3B11FNUZ, 0x80)));
}

TEST(FloatFormats, F4E2M1FN) {
  const double kValues[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t b = 0; b < 8; ++b) {
    EXPECT_EQ(DecodeNarrowFloat(ET::kF4E2M1FN, b), kValues[b]) << b;
    EXPECT_EQ(DecodeNarrowFloat(ET::kF4E2M1FN, b | 8), -kValues[b]) << b;
    EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, kValues[b]), b);
    EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, -kValues[b]), b | 8);
  }
  EXPECT_TRUE(std::signbit(DecodeNarrowFloat(ET::kF4E2M1FN, 0x8)));
  EXPECT_EQ(DecodeNarrowFloat(ET::kF4E2M1FN, 0x17), 6.0);  // low 4 bits only
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, 0.25), 0x0u);  // tie -> 0
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, 0.75), 0x2u);  // tie -> 1.0
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, 1.25), 0x2u);  // tie -> 1.0
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, 2.5), 0x4u);   // tie -> 2
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, 5.0), 0x6u);   // tie -> 4
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, 7.0), 0x7u);   // saturates
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, 100.0), 0x7u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, -100.0), 0xFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, kInf), 0x7u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, -kInf), 0xFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, kNan), 0x8u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF4E2M1FN, -kNan), 0x8u);
}

TEST(FloatFormats, F8E8M0FNU) {
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E8M0FNU, 0x7F), 1.0);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E8M0FNU, 0x00), P2(-127));
  EXPECT_EQ(DecodeNarrowFloat(ET::kF8E8M0FNU, 0xFE), P2(127));
  EXPECT_TRUE(std::isnan(DecodeNarrowFloat(ET::kF8E8M0FNU, 0xFF)));
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, 1.0), 0x7Fu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, 1.49), 0x7Fu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, 1.5), 0x80u);   // ties go up
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, 3.0), 0x81u);   // 1.5*2 -> 4
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, 0.75), 0x7Fu);  // 1.5/2 -> 1
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, 1.25 * P2(127)), 0xFEu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, 1.5 * P2(127)), 0xFFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, P2(-127)), 0x00u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, P2(-140)), 0x00u);
  // ml_dtypes and XLA's f32->e8m0 emitter both send (2^-127, 1.5*2^-127)
  // to 2^-126 (they round the "subnormal" quantum 2^-126 from 0).
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, 1.25 * P2(-127)), 0x01u);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, 0.0), 0xFFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, -0.0), 0xFFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, -1.0), 0xFFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, kInf), 0xFFu);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF8E8M0FNU, kNan), 0xFFu);
}

// Decode then encode gives back the same bits, except NaN encodings, which
// come back as the type's canonical NaN (still a NaN).
TEST(FloatFormats, RoundTripEveryBitPattern) {
  auto check = [](ET type, uint32_t count) {
    for (uint32_t bits = 0; bits < count; ++bits) {
      double v = DecodeNarrowFloat(type, bits);
      uint32_t again = EncodeNarrowFloat(type, v);
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(DecodeNarrowFloat(type, again)))
            << ElementTypeName(type) << " " << bits;
      } else {
        EXPECT_EQ(again, bits) << ElementTypeName(type) << " " << bits;
        EXPECT_EQ(RoundToFloatType(type, v), v);
      }
    }
  };
  for (ET t : kEightBit) check(t, 256);
  check(ET::kF4E2M1FN, 16);
  check(ET::kF16, 65536);
  check(ET::kBF16, 65536);
}

TEST(FloatFormats, MaxFiniteAndMinNormal) {
  EXPECT_EQ(MaxFinite(ET::kF16), 65504.0);
  EXPECT_EQ(MaxFinite(ET::kBF16), (2 - P2(-7)) * P2(127));
  EXPECT_EQ(MaxFinite(ET::kF32), static_cast<double>(FLT_MAX));
  EXPECT_EQ(MaxFinite(ET::kF64), DBL_MAX);
  EXPECT_EQ(MaxFinite(ET::kF8E5M2), 57344.0);
  EXPECT_EQ(MaxFinite(ET::kF8E4M3), 240.0);
  EXPECT_EQ(MaxFinite(ET::kF8E4M3FN), 448.0);
  EXPECT_EQ(MaxFinite(ET::kF8E4M3B11FNUZ), 30.0);
  EXPECT_EQ(MaxFinite(ET::kF8E5M2FNUZ), 57344.0);
  EXPECT_EQ(MaxFinite(ET::kF8E4M3FNUZ), 240.0);
  EXPECT_EQ(MaxFinite(ET::kF8E3M4), 15.5);
  EXPECT_EQ(MaxFinite(ET::kF8E8M0FNU), P2(127));
  EXPECT_EQ(MaxFinite(ET::kF4E2M1FN), 6.0);
  EXPECT_EQ(MinNormal(ET::kF16), P2(-14));
  EXPECT_EQ(MinNormal(ET::kBF16), P2(-126));
  EXPECT_EQ(MinNormal(ET::kF32), static_cast<double>(FLT_MIN));
  EXPECT_EQ(MinNormal(ET::kF64), DBL_MIN);
  EXPECT_EQ(MinNormal(ET::kF8E4M3FN), P2(-6));
  EXPECT_EQ(MinNormal(ET::kF8E4M3FNUZ), P2(-7));
  EXPECT_EQ(MinNormal(ET::kF8E5M2FNUZ), P2(-15));
  EXPECT_EQ(MinNormal(ET::kF8E4M3B11FNUZ), P2(-10));
  EXPECT_EQ(MinNormal(ET::kF8E3M4), P2(-2));
  EXPECT_EQ(MinNormal(ET::kF4E2M1FN), 1.0);
  EXPECT_EQ(MinNormal(ET::kF8E8M0FNU), P2(-127));
  EXPECT_EQ(MinPositive(ET::kF16), P2(-24));
  EXPECT_EQ(MinPositive(ET::kF4E2M1FN), 0.5);
  EXPECT_EQ(MaxFinite(ET::kS32), 0.0);
}

TEST(FloatFormats, RoundToWideTypes) {
  EXPECT_EQ(RoundToFloatType(ET::kF64, 0.1), 0.1);
  EXPECT_EQ(RoundToFloatType(ET::kF32, 1 + P2(-24)), 1.0);  // tie -> even
  EXPECT_EQ(RoundToFloatType(ET::kF32, 1 + 3 * P2(-24)), 1 + P2(-22));
  EXPECT_EQ(RoundToFloatType(ET::kF32, 1e39), kInf);
  EXPECT_EQ(EncodeNarrowFloat(ET::kF32, 1.0), 0x3F800000u);
  EXPECT_EQ(DecodeNarrowFloat(ET::kF32, 0x00000001), P2(-149));
}

TEST(ReducePrecision, MatchesBf16RoundingInNormalRange) {
  EXPECT_EQ(ReducePrecision(1 + P2(-8), 8, 7), 1.0);
  EXPECT_EQ(ReducePrecision(1 + 3 * P2(-9), 8, 7), 1 + P2(-7));
  EXPECT_EQ(ReducePrecision(1 + 3 * P2(-8), 8, 7), 1 + P2(-6));
  EXPECT_EQ(ReducePrecision(1 + P2(-8) + P2(-30), 8, 7), 1 + P2(-7));
  EXPECT_EQ(ReducePrecision(-0.1, 8, 7), -0.10009765625);
  EXPECT_EQ(ReducePrecision((2 - P2(-7)) * P2(127), 8, 7), (2 - P2(-7)) * P2(127));
  EXPECT_EQ(ReducePrecision((2 - P2(-8)) * P2(127), 8, 7), kInf);
  EXPECT_EQ(ReducePrecision(-1e300, 8, 7), -kInf);
}

TEST(ReducePrecision, MatchesF16RoundingInNormalRange) {
  EXPECT_EQ(ReducePrecision(1 + P2(-11), 5, 10), 1.0);
  EXPECT_EQ(ReducePrecision(1 + 3 * P2(-11), 5, 10), 1 + P2(-9));
  EXPECT_EQ(ReducePrecision(0.1, 5, 10), 0.0999755859375);
  EXPECT_EQ(ReducePrecision(65504.0, 5, 10), 65504.0);
  EXPECT_EQ(ReducePrecision(65519.0, 5, 10), 65504.0);
  EXPECT_EQ(ReducePrecision(65520.0, 5, 10), kInf);
  EXPECT_EQ(ReducePrecision(-1e6, 5, 10), -kInf);
  EXPECT_EQ(ReducePrecision(P2(-14), 5, 10), P2(-14));
}

TEST(ReducePrecision, FlushesReducedSubnormalsAndKeepsNan) {
  // Below the reduced smallest normal -> signed zero (XLA does not round).
  EXPECT_EQ(ReducePrecision(P2(-130), 8, 7), 0.0);
  EXPECT_TRUE(std::signbit(ReducePrecision(-P2(-130), 8, 7)));
  EXPECT_EQ(ReducePrecision(P2(-20), 5, 10), 0.0);
  // Mantissa rounding happens first: (1 - 2^-10) * 2^-126 rounds up to 2^-126.
  EXPECT_EQ(ReducePrecision((1 - P2(-10)) * P2(-126), 8, 7), P2(-126));
  EXPECT_TRUE(std::isnan(ReducePrecision(kNan, 5, 10)));
  EXPECT_EQ(ReducePrecision(kNan, 5, 0), kInf);  // no mantissa: NaN -> +inf
  EXPECT_EQ(ReducePrecision(-kInf, 5, 10), -kInf);
  // No narrowing at all is the identity, subnormals included.
  EXPECT_EQ(ReducePrecision(P2(-1074), 11, 52), P2(-1074));
  EXPECT_EQ(ReducePrecision(0.1, 11, 52), 0.1);
  // mantissa_bits = 0: the exponent's low bit decides ties.
  EXPECT_EQ(ReducePrecision(1.5, 8, 0), 2.0);  // biased exponent 1023 is odd
  EXPECT_EQ(ReducePrecision(3.0, 8, 0), 2.0);  // 1024 is even
  EXPECT_EQ(ReducePrecision(6.0, 8, 0), 8.0);
}

TEST(ReducePrecision, TypedUsesTheComputeTypeBits) {
  // f32 with 8 exponent bits: no exponent processing, so f32 subnormals stay.
  EXPECT_EQ(ReducePrecision(ET::kF32, P2(-130), 8, 7), P2(-130));
  EXPECT_EQ(ReducePrecision(ET::kF32, 1 + P2(-8), 8, 7), 1.0);
  // f16 1.5 * 2^-15 (bits 0x0300) to (5, 1): rounding the f16 bits carries
  // into the exponent -> 2^-14; the f64 form flushes it to zero.
  EXPECT_EQ(ReducePrecision(ET::kF16, 1.5 * P2(-15), 5, 1), P2(-14));
  EXPECT_EQ(ReducePrecision(1.5 * P2(-15), 5, 1), 0.0);
  // f8e4m3fn computes in f16: 448 has exponent 8 > 7, the IEEE e4 maximum,
  // so it becomes inf, which converts back to f8e4m3fn as NaN.
  EXPECT_TRUE(std::isnan(ReducePrecision(ET::kF8E4M3FN, 448.0, 4, 3)));
  EXPECT_EQ(ReducePrecision(ET::kF8E4M3FN, 240.0, 4, 3), 240.0);
  EXPECT_EQ(ReducePrecision(ET::kBF16, 1 + P2(-7), 8, 6), 1.0);  // tie -> even
  EXPECT_EQ(ReducePrecision(ET::kF64, 1 + P2(-8), 8, 7), 1.0);
}

}  // namespace
}  // namespace kiln
