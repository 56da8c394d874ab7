// Tests for common/value_syntax: parsing IREE-style value specs, printing
// them back, files (.npy and raw) and output specs.
//
// Expected values come from the syntax definition and from exact IEEE
// reasoning noted beside each case (e.g. bf16 keeps 8 significant bits, so
// 1 + 2^-8 is a tie between 1 and 1 + 2^-7 and rounds to even, 1.0).
#include "common/value_syntax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "common/npy.h"
#include "common/random_literal.h"

namespace kiln {
namespace {

using ET = ElementType;

Literal Parse(std::string_view spec, const Shape* expected = nullptr) {
  StatusOr<Literal> lit = ParseValue(spec, expected);
  EXPECT_TRUE(lit.ok()) << spec << ": " << lit.status().message();
  return lit.ok() ? std::move(lit).value() : Literal();
}

std::string ErrorOf(std::string_view spec, const Shape* expected = nullptr) {
  StatusOr<Literal> lit = ParseValue(spec, expected);
  return lit.ok() ? "OK" : lit.status().message();
}

bool Contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

std::string TempPath(const std::string& name) { return testing::TempDir() + "/value_syntax_test_" + name; }

TEST(ValueSyntax, ArrayWithDimsAndType) {
  Literal lit = Parse("2x3xf32=1 2 3 4 5 6");
  EXPECT_EQ(lit.shape().ToString(false), "f32[2,3]");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(lit.GetF64(i), i + 1);
}

TEST(ValueSyntax, ScalarSplatAndEmpty) {
  Literal scalar = Parse("f32=1.5");
  EXPECT_EQ(scalar.shape().ToString(false), "f32[]");
  EXPECT_EQ(scalar.GetF64(0), 1.5);
  Literal splat = Parse("4xs32=7");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(splat.GetS64(i), 7);
  Literal empty = Parse("0x4xf32=");
  EXPECT_EQ(empty.shape().ToString(false), "f32[0,4]");
}

TEST(ValueSyntax, SeparatorsAndBracketsAreIgnored) {
  Literal lit = Parse("2x2xs32=[1, 2][3,4]");
  EXPECT_EQ(lit.GetS64(0), 1);
  EXPECT_EQ(lit.GetS64(3), 4);
  Literal hlo_style = Parse("2x2xs32={ {5, 6}, {7, 8} }");
  EXPECT_EQ(hlo_style.GetS64(2), 7);
}

TEST(ValueSyntax, IreeAndHloTypeNames) {
  EXPECT_EQ(ParseValueElementType("i32"), ET::kS32);
  EXPECT_EQ(ParseValueElementType("si32"), ET::kS32);
  EXPECT_EQ(ParseValueElementType("ui8"), ET::kU8);
  EXPECT_EQ(ParseValueElementType("i1"), ET::kPred);
  EXPECT_EQ(ParseValueElementType("i4"), ET::kS4);
  EXPECT_EQ(ParseValueElementType("pred"), ET::kPred);
  EXPECT_EQ(ParseValueElementType("s64"), ET::kS64);
  EXPECT_EQ(ParseValueElementType("BF16"), ET::kBF16);
  EXPECT_EQ(ParseValueElementType("f8E4M3FN"), ET::kF8E4M3FN);
  EXPECT_EQ(ParseValueElementType("complex<f32>"), ET::kC64);
  EXPECT_EQ(ParseValueElementType("c128"), ET::kC128);
  EXPECT_EQ(ParseValueElementType("i3"), std::nullopt);
  EXPECT_EQ(ParseValueElementType("token"), std::nullopt);
  EXPECT_EQ(ParseValueElementType("f33"), std::nullopt);
  EXPECT_EQ(Parse("2xui16=65535 0").GetU64(0), 65535u);
}

TEST(ValueSyntax, PredValues) {
  Literal lit = Parse("4xpred=1 0 true false");
  EXPECT_TRUE(lit.GetPred(0));
  EXPECT_FALSE(lit.GetPred(1));
  EXPECT_TRUE(lit.GetPred(2));
  EXPECT_FALSE(lit.GetPred(3));
  EXPECT_TRUE(Contains(ErrorOf("pred=2"), "is not a valid pred"));
}

TEST(ValueSyntax, IntegerRangesAreChecked) {
  Literal s8 = Parse("3xs8=-128 127 0x7f");
  EXPECT_EQ(s8.GetS64(0), -128);
  EXPECT_EQ(s8.GetS64(2), 127);
  EXPECT_TRUE(Contains(ErrorOf("s8=128"), "out of range for s8"));
  EXPECT_TRUE(Contains(ErrorOf("s8=-129"), "out of range"));
  EXPECT_TRUE(Contains(ErrorOf("u8=256"), "out of range"));
  EXPECT_TRUE(Contains(ErrorOf("u8=-1"), "out of range"));
  EXPECT_TRUE(Contains(ErrorOf("s4=8"), "out of range for s4"));
  EXPECT_EQ(Parse("s4=-8").GetS64(0), -8);
  EXPECT_EQ(Parse("u64=18446744073709551615").GetU64(0), UINT64_MAX);
  EXPECT_EQ(Parse("s64=-9223372036854775808").GetS64(0), INT64_MIN);
  EXPECT_TRUE(Contains(ErrorOf("s32=1.5"), "is not a valid s32"));
}

TEST(ValueSyntax, FloatSpecialsHexAndRounding) {
  Literal lit = Parse("5xf32=inf -inf nan +inf 0x1.8p1");
  EXPECT_EQ(lit.GetF64(0), INFINITY);
  EXPECT_EQ(lit.GetF64(1), -INFINITY);
  EXPECT_TRUE(std::isnan(lit.GetF64(2)));
  EXPECT_EQ(lit.GetF64(3), INFINITY);
  EXPECT_EQ(lit.GetF64(4), 3.0);  // 1.5 * 2^1
  // bf16: 1 + 2^-8 ties between 1 and 1 + 2^-7; ties-to-even gives 1.0.
  EXPECT_EQ(Parse("bf16=1.00390625").GetF64(0), 1.0);
  // f32: 0.1 is the nearest float, 13421773 * 2^-27.
  EXPECT_EQ(Parse("f32=0.1").GetF64(0), 13421773.0 / (1 << 27));
  // Beyond double range overflows to inf like strtod.
  EXPECT_EQ(Parse("f64=1e999").GetF64(0), INFINITY);
  EXPECT_TRUE(Contains(ErrorOf("2xf32=1 x"), "element 1 ('x') is not a valid f32"));
  EXPECT_TRUE(Contains(ErrorOf("f32=--1"), "not a valid"));
}

TEST(ValueSyntax, ComplexValues) {
  Literal lit = Parse("4xc64=1+2i -0.5-1e-3i 2i 3");
  EXPECT_EQ(lit.GetC128(0), std::complex<double>(1, 2));
  EXPECT_EQ(lit.GetC128(1), std::complex<double>(-0.5, static_cast<float>(-1e-3)));
  EXPECT_EQ(lit.GetC128(2), std::complex<double>(0, 2));
  EXPECT_EQ(lit.GetC128(3), std::complex<double>(3, 0));
  Literal exp = Parse("c128=1e+10-2.5e-3j");
  EXPECT_EQ(exp.GetC128(0), std::complex<double>(1e10, -2.5e-3));
  Literal special = Parse("c64=inf-nani");
  EXPECT_EQ(special.GetC128(0).real(), INFINITY);
  EXPECT_TRUE(std::isnan(special.GetC128(0).imag()));
  EXPECT_TRUE(Contains(ErrorOf("c64=1+i"), "not a valid c64"));
}

TEST(ValueSyntax, ElementCountMismatch) {
  EXPECT_TRUE(Contains(ErrorOf("2x3xf32=1 2 3 4"), "2x3xf32 needs 6 elements, got 4"));
  EXPECT_TRUE(Contains(ErrorOf("f32=1 2"), "needs 1 elements, got 2"));
  EXPECT_TRUE(Contains(ErrorOf("2xq32=1 2"), "unknown element type 'q32'"));
  EXPECT_TRUE(Contains(ErrorOf("-2xf32=1"), "bad dimension"));
  EXPECT_TRUE(Contains(ErrorOf("100000x100000x100000xf32=0"), "too large"));
}

TEST(ValueSyntax, MalformedSpecsAreErrors) {
  for (std::string_view spec : {"=", "=1", "x=1", "2x=1", "xf32=1", "2xxf32=1", "@", "2xf32=@",
                                "99999999999999999999xf32=1", "2x3=1", "f32", "f32=", "pred=yes",
                                "c64=1+2", "c64=i", "f32=1e", "f32=0x", "s32=0x", "s32=--1", "u8=+-1"}) {
    EXPECT_NE(ErrorOf(spec), "OK") << spec;
  }
  // Scalars need exactly one element; "f32=" has none.
  EXPECT_TRUE(Contains(ErrorOf("f32="), "needs 1 elements, got 0"));
}

TEST(ValueSyntax, ExpectedShape) {
  Shape f32x3(ET::kF32, {3});
  EXPECT_TRUE(Contains(ErrorOf("2xf32=1 2", &f32x3), "value 2xf32 does not match the expected 3xf32"));
  EXPECT_TRUE(Contains(ErrorOf("3xs32=1 2 3", &f32x3), "does not match the expected 3xf32"));
  // Without a type the expected shape supplies it.
  Literal lit = Parse("1 2 3", &f32x3);
  EXPECT_EQ(lit.shape().ToString(false), "f32[3]");
  EXPECT_EQ(lit.GetF64(2), 3.0);
  EXPECT_TRUE(Contains(ErrorOf("1 2 3"), "has no type"));
}

TEST(ValueSyntax, RawFile) {
  // bf16 1.0 = 0x3F80 and 2.0 = 0x4000, little-endian.
  std::string path = TempPath("raw.bin");
  std::ofstream(path, std::ios::binary) << std::string("\x80\x3F\x00\x40", 4);
  Literal lit = Parse("2xbf16=@" + path);
  EXPECT_EQ(lit.GetF64(0), 1.0);
  EXPECT_EQ(lit.GetF64(1), 2.0);
  EXPECT_TRUE(Contains(ErrorOf("3xbf16=@" + path), "has 4 bytes, 3xbf16 needs 6"));
  EXPECT_TRUE(Contains(ErrorOf("@" + path), "needs a shape"));
  EXPECT_TRUE(Contains(ErrorOf("2xbf16=@" + TempPath("missing.bin")), "cannot open"));
  std::remove(path.c_str());
}

TEST(ValueSyntax, NpyFile) {
  std::string path = TempPath("in.npy");
  ASSERT_TRUE(WriteNpy(Literal::Vector(ET::kS32, {4, 5, 6}), path).ok());
  Literal lit = Parse("@" + path);
  EXPECT_EQ(lit.shape().ToString(false), "s32[3]");
  EXPECT_EQ(lit.GetS64(2), 6);
  Literal typed = Parse("3xs32=@" + path);
  EXPECT_EQ(typed, lit);
  Shape f32x3(ET::kF32, {3});
  EXPECT_TRUE(Contains(ErrorOf("@" + path, &f32x3), "value 3xs32 (from " + path + ") does not match"));
  // bf16 written as '<V2' needs the expected type to read back.
  ASSERT_TRUE(WriteNpy(Literal::Vector(ET::kBF16, {1.5, -2}), path).ok());
  EXPECT_TRUE(Contains(ErrorOf("@" + path), "does not say its element type"));
  Shape bf16x2(ET::kBF16, {2});
  EXPECT_EQ(Parse("@" + path, &bf16x2).GetF64(1), -2.0);
  EXPECT_EQ(Parse("2xbf16=@" + path).GetF64(0), 1.5);
  std::remove(path.c_str());
}

TEST(ValueSyntax, FormatIreeStyle) {
  EXPECT_EQ(FormatValue(Parse("2x3xf32=1 2 3 4 5 6")), "2x3xf32=[1 2 3][4 5 6]");
  EXPECT_EQ(FormatValue(Parse("f32=1.5")), "f32=1.5");
  EXPECT_EQ(FormatValue(Parse("3xpred=true false 1")), "3xpred=1 0 1");
  EXPECT_EQ(FormatValue(Parse("2x2x1xs32=1 2 3 4")), "2x2x1xs32=[[1][2]][[3][4]]");
  EXPECT_EQ(FormatValue(Parse("2xc64=1+2i -0.5-0i")), "2xc64=1+2i -0.5-0i");
  EXPECT_EQ(FormatValue(Parse("f32=0.1")), "f32=0.1");
  EXPECT_EQ(FormatValue(Parse("3xf64=-inf nan 1e300")), "3xf64=-inf nan 1e+300");
  EXPECT_EQ(FormatValue(Parse("0x2xu8=")), "0x2xu8=");
  EXPECT_EQ(FormatValueShape(Shape(ET::kF32, {})), "f32");
}

TEST(ValueSyntax, FormatParsesBackToIdenticalBits) {
  std::mt19937_64 rng(42);
  for (ET t : kAllArrayTypes) {
    Literal lit = RandomLiteral(Shape(t, {2, 3, 2}), rng);
    std::string text = FormatValue(lit);
    StatusOr<Literal> back = ParseValue(text, nullptr);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status().message();
    EXPECT_EQ(*back, lit) << text;
  }
}

TEST(ValueSyntax, WriteValueSpecs) {
  Literal lit = Parse("2xf32=1 2");
  std::ostringstream out;
  ASSERT_TRUE(WriteValue(lit, "-", out).ok());
  EXPECT_EQ(out.str(), "2xf32=1 2\n");
  ASSERT_TRUE(WriteValue(lit, "", out).ok());
  EXPECT_EQ(out.str(), "2xf32=1 2\n");  // "" discards

  std::string npy = TempPath("out.npy");
  ASSERT_TRUE(WriteValue(lit, "@" + npy, out).ok());
  EXPECT_EQ(*ReadNpy(npy), lit);
  ASSERT_TRUE(WriteValue(Parse("s32=3"), "+" + npy, out).ok());
  EXPECT_EQ(ReadNpyAll(npy)->size(), 2u);

  std::string raw = TempPath("out.bin");
  ASSERT_TRUE(WriteValue(lit, "@" + raw, out).ok());
  std::ifstream in(raw, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes, std::string("\x00\x00\x80\x3F\x00\x00\x00\x40", 8));  // 1.0f, 2.0f

  EXPECT_TRUE(Contains(WriteValue(lit, "out.npy", out).message(), "must be '-', '@file' or '+file'"));
  EXPECT_FALSE(WriteValue(Literal::MakeTuple({lit}), "@" + npy, out).ok());
  std::remove(npy.c_str());
  std::remove(raw.c_str());
}

TEST(ValueSyntax, FlattenTuples) {
  Literal a = Parse("f32=1"), b = Parse("2xs32=2 3"), c = Parse("pred=1");
  Literal nested = Literal::MakeTuple({a, Literal::MakeTuple({b, Literal(Shape::Token())}), c});
  std::vector<Literal> leaves = FlattenTuple(nested);
  ASSERT_EQ(leaves.size(), 3u);  // the token is not a leaf
  EXPECT_EQ(leaves[0], a);
  EXPECT_EQ(leaves[1], b);
  EXPECT_EQ(leaves[2], c);
  std::vector<Shape> shapes = FlattenShape(nested.shape());
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[1].ToString(false), "s32[2]");
  EXPECT_EQ(FormatValue(Literal::MakeTuple({a, b})), "f32=1\n2xs32=2 3");
}

}  // namespace
}  // namespace kiln
