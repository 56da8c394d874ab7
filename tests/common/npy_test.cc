// Tests for common/npy: the .npy encoding kiln writes, byte for byte, and
// reading files as NumPy and ml_dtypes write them (versions, byte orders,
// Fortran order, void descriptors), plus corrupt and truncated inputs.
//
// Expected bytes are written out by hand from the format specification
// (numpy/lib/format.py docs: magic "\x93NUMPY", major, minor, little-endian
// header length, a dict literal padded with spaces and '\n' so that the data
// starts at a multiple of 64) and IEEE encodings (1.0f = 0x3F800000, bf16 1.0
// = 0x3F80, f16 1.0 = 0x3C00).
#include "common/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>

namespace kiln {
namespace {

using ET = ElementType;

std::string Bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s += static_cast<char>(v);
  return s;
}

// Little-endian bytes of 1.0f .. 6.0f: 0x3F800000, 0x40000000, 0x40400000,
// 0x40800000, 0x40A00000, 0x40C00000.
const std::string kF32OneToSix = Bytes({0, 0, 0x80, 0x3F, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40,
                                         0, 0, 0x80, 0x40, 0, 0, 0xA0, 0x40, 0, 0, 0xC0, 0x40});

// A .npy file with `dict` as header: prefix + dict + spaces + '\n' padded to
// a multiple of 64 (the test's own framing, independent of the writer).
std::string MakeNpy(const std::string& dict, const std::string& data, int major = 1) {
  size_t len_bytes = major == 1 ? 2 : 4;
  size_t prefix = 8 + len_bytes;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  size_t header_len = total - prefix;
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xFF);
  out += dict + std::string(total - prefix - dict.size() - 1, ' ') + "\n";
  return out + data;
}

std::string TempPath(const std::string& name) { return testing::TempDir() + "/npy_test_" + name; }

TEST(Npy, EncodesExactHeaderFor2x3F32) {
  Literal lit{Shape(ET::kF32, {2, 3})};
  for (int i = 0; i < 6; ++i) lit.SetF64(i, i + 1);
  StatusOr<std::string> bytes = EncodeNpy(lit);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  // Dict "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" is
  // 17 + 24 + 17 + 1 = 59 bytes; 10 prefix + 59 + '\n' = 70, padded to 128,
  // so the header length is 118 = 0x76 with 58 spaces of padding.
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                         std::string(58, ' ') + "\n" + kF32OneToSix;
  EXPECT_EQ(*bytes, expected);
  EXPECT_EQ(bytes->size(), 128u + 24u);
}

TEST(Npy, EncodesScalarAndVectorShapesAsPythonTuples) {
  // Python writes () for a scalar and (4,) for a 1-tuple.
  std::string scalar = *EncodeNpy(Literal::Scalar(ET::kS32, 7));
  EXPECT_NE(scalar.find("'shape': (), }"), std::string::npos);
  EXPECT_EQ(scalar.substr(scalar.size() - 4), Bytes({7, 0, 0, 0}));
  std::string vec = *EncodeNpy(Literal::Vector(ET::kU8, {1, 2, 3, 4}));
  EXPECT_NE(vec.find("'descr': '|u1'"), std::string::npos);
  EXPECT_NE(vec.find("'shape': (4,), }"), std::string::npos);
}

TEST(Npy, DescriptorsMatchNumpy) {
  EXPECT_EQ(NpyDescr(ET::kPred), "|b1");
  EXPECT_EQ(NpyDescr(ET::kS8), "|i1");
  EXPECT_EQ(NpyDescr(ET::kS16), "<i2");
  EXPECT_EQ(NpyDescr(ET::kS64), "<i8");
  EXPECT_EQ(NpyDescr(ET::kU32), "<u4");
  EXPECT_EQ(NpyDescr(ET::kF16), "<f2");
  EXPECT_EQ(NpyDescr(ET::kF64), "<f8");
  EXPECT_EQ(NpyDescr(ET::kC64), "<c8");
  EXPECT_EQ(NpyDescr(ET::kC128), "<c16");
  // ml_dtypes' custom types are void types of their storage size.
  EXPECT_EQ(NpyDescr(ET::kBF16), "<V2");
  EXPECT_EQ(NpyDescr(ET::kF8E4M3FN), "<V1");
  EXPECT_EQ(NpyDescr(ET::kS4), "<V1");
}

TEST(Npy, ReadsNumpyWrittenFileWithGrowthPadding) {
  // NumPy >= 1.24 adds 21 - len(repr(shape[0])) = 20 spaces after the dict.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(20, ' ');
  StatusOr<Literal> lit = ParseNpy(MakeNpy(dict, kF32OneToSix), std::nullopt);
  ASSERT_TRUE(lit.ok()) << lit.status().message();
  EXPECT_EQ(lit->shape().ToString(false), "f32[2,3]");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(lit->GetF64(i), i + 1);
}

TEST(Npy, ReadsVersion2And3Headers) {
  for (int major : {2, 3}) {
    std::string file = MakeNpy("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
                               Bytes({0x01, 0x00, 0xFF, 0xFF}), major);
    StatusOr<Literal> lit = ParseNpy(file, std::nullopt);
    ASSERT_TRUE(lit.ok()) << lit.status().message();
    EXPECT_EQ(lit->element_type(), ET::kS16);
    EXPECT_EQ(lit->GetS64(0), 1);
    EXPECT_EQ(lit->GetS64(1), -1);  // 0xFFFF
  }
}

TEST(Npy, KeysInAnyOrderAndDoubleQuotes) {
  std::string file = MakeNpy("{\"shape\": (1, 1), \"fortran_order\": False, \"descr\": \"<f8\"}",
                             Bytes({0, 0, 0, 0, 0, 0, 0xF0, 0x3F}));  // 1.0 = 0x3FF0000000000000
  StatusOr<Literal> lit = ParseNpy(file, std::nullopt);
  ASSERT_TRUE(lit.ok()) << lit.status().message();
  EXPECT_EQ(lit->shape().ToString(false), "f64[1,1]");
  EXPECT_EQ(lit->GetF64(0), 1.0);
}

TEST(Npy, FortranOrderIsTransposedToRowMajor) {
  // [[1, 2, 3], [4, 5, 6]] in column-major order is 1 4 2 5 3 6.
  std::string data = Bytes({1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 6, 0, 0, 0});
  StatusOr<Literal> lit =
      ParseNpy(MakeNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", data), std::nullopt);
  ASSERT_TRUE(lit.ok()) << lit.status().message();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(lit->GetS64(i), i + 1) << i;
}

TEST(Npy, BigEndianIsSwapped) {
  // '>i4' 0x00000102 = 258 and 0xFFFFFFFE = -2; '>c8' (1.0f, 2.0f).
  StatusOr<Literal> ints = ParseNpy(MakeNpy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                                            Bytes({0, 0, 1, 2, 0xFF, 0xFF, 0xFF, 0xFE})),
                                    std::nullopt);
  ASSERT_TRUE(ints.ok()) << ints.status().message();
  EXPECT_EQ(ints->GetS64(0), 258);
  EXPECT_EQ(ints->GetS64(1), -2);
  StatusOr<Literal> c = ParseNpy(MakeNpy("{'descr': '>c8', 'fortran_order': False, 'shape': (), }",
                                         Bytes({0x3F, 0x80, 0, 0, 0x40, 0, 0, 0})),
                                 std::nullopt);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->GetC128(0), std::complex<double>(1.0, 2.0));
}

TEST(Npy, BoolBytesAreCanonicalized) {
  StatusOr<Literal> lit = ParseNpy(
      MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", Bytes({0, 1, 7})), std::nullopt);
  ASSERT_TRUE(lit.ok()) << lit.status().message();
  EXPECT_EQ(lit->raw()[0], 0);
  EXPECT_EQ(lit->raw()[1], 1);
  EXPECT_EQ(lit->raw()[2], 1);
}

TEST(Npy, VoidDescriptorNeedsTheExpectedType) {
  // ml_dtypes saves bfloat16 [1.0, -1.5] as '<V2': 0x3F80, 0xBFC0.
  std::string file = MakeNpy("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }",
                             Bytes({0x80, 0x3F, 0xC0, 0xBF}));
  StatusOr<Literal> untyped = ParseNpy(file, std::nullopt);
  ASSERT_FALSE(untyped.ok());
  EXPECT_NE(untyped.status().message().find("does not say its element type"), std::string::npos);

  StatusOr<Literal> bf16 = ParseNpy(file, ET::kBF16);
  ASSERT_TRUE(bf16.ok()) << bf16.status().message();
  EXPECT_EQ(bf16->element_type(), ET::kBF16);
  EXPECT_EQ(bf16->GetF64(0), 1.0);
  EXPECT_EQ(bf16->GetF64(1), -1.5);

  // The same bits as f16: 0x3F80 = 2^0 * (1 + 0x380/1024) = 1.875.
  StatusOr<Literal> f16 = ParseNpy(file, ET::kF16);
  ASSERT_TRUE(f16.ok());
  EXPECT_EQ(f16->GetF64(0), 1.875);

  EXPECT_FALSE(ParseNpy(file, ET::kF32).ok());  // 4-byte type cannot be V2
}

TEST(Npy, MlDtypesNamesAndSubByteCanonicalization) {
  // A hand-written header naming 'int4'; 0xFF and 0x0F are -1 once the high
  // nibble is dropped and the low one sign-extended, 0x07 is 7.
  StatusOr<Literal> lit = ParseNpy(
      MakeNpy("{'descr': 'int4', 'fortran_order': False, 'shape': (3,), }", Bytes({0xFF, 0x0F, 0x07})),
      std::nullopt);
  ASSERT_TRUE(lit.ok()) << lit.status().message();
  EXPECT_EQ(lit->element_type(), ET::kS4);
  EXPECT_EQ(lit->GetS64(0), -1);
  EXPECT_EQ(lit->GetS64(1), -1);
  EXPECT_EQ(lit->GetS64(2), 7);
  // Old ml_dtypes wrote float8_e5m2 as '<f1'; 0x3C = 0 01111 00 = 1.0.
  StatusOr<Literal> f8 = ParseNpy(
      MakeNpy("{'descr': '<f1', 'fortran_order': False, 'shape': (), }", Bytes({0x3C})), std::nullopt);
  ASSERT_TRUE(f8.ok()) << f8.status().message();
  EXPECT_EQ(f8->element_type(), ET::kF8E5M2);
  EXPECT_EQ(f8->GetF64(0), 1.0);
}

TEST(Npy, RejectsCorruptAndTruncatedFiles) {
  std::string good = MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", kF32OneToSix);
  auto error_of = [](std::string_view bytes) {
    StatusOr<Literal> lit = ParseNpy(bytes, std::nullopt);
    return lit.ok() ? std::string("OK") : lit.status().message();
  };
  EXPECT_NE(error_of("").find("bad magic"), std::string::npos);
  EXPECT_NE(error_of("PK\x03\x04 zip").find("bad magic"), std::string::npos);
  // Every strict prefix of a good file fails cleanly.
  for (size_t n = 0; n < good.size(); ++n) EXPECT_NE(error_of(good.substr(0, n)), "OK") << n;
  EXPECT_NE(error_of(good.substr(0, good.size() - 1)).find("truncated"), std::string::npos);
  // Version 9.
  std::string v9 = good;
  v9[6] = 9;
  EXPECT_NE(error_of(v9).find("version"), std::string::npos);
  // A header length pointing past the end.
  std::string long_header = good;
  long_header[8] = '\xFF';
  long_header[9] = '\xFF';
  EXPECT_NE(error_of(long_header).find("truncated"), std::string::npos);
  // Malformed dicts, unsupported descriptors, structured arrays.
  EXPECT_NE(error_of(MakeNpy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (), }", "")), "OK");
  EXPECT_NE(error_of(MakeNpy("{'descr': '<f4', 'shape': (), }", "")).find("lacks"), std::string::npos);
  EXPECT_NE(error_of(MakeNpy("{'descr': '<U3', 'fortran_order': False, 'shape': (), }", "abc")).find("unsupported"),
            std::string::npos);
  EXPECT_NE(error_of(MakeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }", "")).find("structured"),
            std::string::npos);
  EXPECT_NE(error_of(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "")), "OK");
}

TEST(Npy, HugeShapesFailBeforeAllocating) {
  // 2^62 elements of 4 bytes overflows; 10^12 elements fits in 64 bits but
  // not in the 24 bytes the file has. Both must fail without allocating.
  EXPECT_FALSE(ParseNpy(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }",
                                kF32OneToSix),
                        std::nullopt)
                   .ok());
  StatusOr<Literal> lit = ParseNpy(
      MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }", kF32OneToSix),
      std::nullopt);
  ASSERT_FALSE(lit.ok());
  EXPECT_NE(lit.status().message().find("needs 4000000000000 data bytes, file has 24"), std::string::npos)
      << lit.status().message();
  // Zero-sized arrays need no data at all.
  StatusOr<Literal> empty =
      ParseNpy(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1000000000), }", ""), std::nullopt);
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_EQ(empty->element_count(), 0);
}

TEST(Npy, RandomCorruptionNeverCrashes) {
  // Overwrite 1-3 random bytes of the header region (and sometimes cut the
  // file); every result must be a clean Status. Run under ASan in CI.
  std::string good = MakeNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", kF32OneToSix);
  std::mt19937 rng(1234);
  const std::string alphabet = "0123456789(),: '\"<>|=VfiucbTrueFalse{}\x93\xff";
  int ok = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    std::string bytes = good;
    int edits = 1 + rng() % 3;
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % 128;
      bytes[pos] = rng() % 2 ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng());
    }
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    StatusOr<Literal> lit = ParseNpy(bytes, rng() % 2 ? std::optional<ET>(ET::kBF16) : std::nullopt);
    if (lit.ok()) {
      ++ok;
      EXPECT_LE(lit->raw_size(), bytes.size());  // never more data than the file holds
    } else {
      EXPECT_FALSE(lit.status().message().empty());
    }
  }
  EXPECT_GT(ok, 0);  // edits in the padding leave the file valid
}

TEST(Npy, WriteReadRoundTripEveryType) {
  for (ET t : kAllArrayTypes) {
    Literal lit{Shape(t, {3, 2})};
    // 0..5 and a negative where the type has one; all exact in every type
    // except the unsigned-only e8m0 (powers of two) and f4 (0..6 subset).
    for (int i = 0; i < 6; ++i) {
      if (IsPred(t)) lit.SetPred(i, i % 2);
      else lit.SetF64(i, t == ET::kF8E8M0FNU ? 1 << i : (i == 5 && !IsUnsignedInteger(t) ? -1 : i));
    }
    std::string path = TempPath(std::string(ElementTypeName(t)) + ".npy");
    ASSERT_TRUE(WriteNpy(lit, path).ok());
    StatusOr<Literal> back = ReadNpy(path, t);
    ASSERT_TRUE(back.ok()) << ElementTypeName(t) << ": " << back.status().message();
    EXPECT_EQ(*back, lit) << ElementTypeName(t);
    std::remove(path.c_str());
  }
}

TEST(Npy, AppendedArraysReadBackInOrder) {
  std::string path = TempPath("append.npy");
  ASSERT_TRUE(WriteNpy(Literal::Vector(ET::kS32, {1, 2}), path).ok());
  ASSERT_TRUE(WriteNpy(Literal::Scalar(ET::kF64, 2.5), path, /*append=*/true).ok());
  StatusOr<std::vector<Literal>> all = ReadNpyAll(path);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].GetS64(1), 2);
  EXPECT_EQ((*all)[1].GetF64(0), 2.5);
  // ReadNpy takes the first array.
  EXPECT_EQ(ReadNpy(path)->element_type(), ET::kS32);
  std::remove(path.c_str());
}

TEST(Npy, MissingFileAndTuplesAreErrors) {
  StatusOr<Literal> missing = ReadNpy(TempPath("does_not_exist.npy"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos);
  EXPECT_FALSE(ReadNpy(testing::TempDir()).ok());  // a directory
  EXPECT_FALSE(EncodeNpy(Literal::MakeTuple({})).ok());
}

}  // namespace
}  // namespace kiln
