// Tests of the evaluator's rng-bit-generator against values XLA's CPU backend
// produced for the same modules (tools/xla-run/xla_run.py on jaxlib 0.10.2):
// ThreeFry and Philox, 8/16/32/64-bit elements, the shape split of 32-bit
// ThreeFry, Philox's 128-bit counter carry, and rng_default = Philox.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/evaluator_test_util.h"

namespace kiln::hlo {
namespace {

using test_support::EvaluateHlo;
using test_support::MustEvaluateHlo;

std::vector<uint64_t> U64s(const Literal& lit) {
  std::vector<uint64_t> v;
  for (int64_t i = 0; i < lit.element_count(); ++i) v.push_back(lit.GetU64(i));
  return v;
}

// (new state, bits) of rng-bit-generator on the constant `state`.
Literal Generate(const std::string& state_type, const std::string& state, const std::string& bits_type,
                 const std::string& algorithm) {
  return MustEvaluateHlo("HloModule m\nENTRY e {\n  s = " + state_type + " constant(" + state +
                         ")\n  ROOT r = (" + state_type + ", " + bits_type + ") rng-bit-generator(s), algorithm=" +
                         algorithm + "\n}\n");
}

TEST(RngBitGeneratorTest, ThreeFryU32OddVectorSplitsInHalves) {
  // u32[5]: no even dimension, so the largest (5) is halved to 3 counters.
  Literal r = Generate("u64[2]", "{12345, 678}", "u32[5]", "rng_three_fry");
  EXPECT_EQ(U64s(r.element(0)), (std::vector<uint64_t>{12345, 681}));
  EXPECT_EQ(U64s(r.element(1)),
            (std::vector<uint64_t>{1194812792, 1232543658, 22297115, 1863636269, 3380711233}));
}

TEST(RngBitGeneratorTest, ThreeFryU32EvenDimensionAndScalar) {
  // u32[2,3]: dimension 0 is even; the halved [1,3] shape uses 3 counters.
  Literal r = Generate("u64[2]", "{1, 2}", "u32[2,3]", "rng_three_fry");
  EXPECT_EQ(U64s(r.element(0)), (std::vector<uint64_t>{1, 5}));
  EXPECT_EQ(U64s(r.element(1)),
            (std::vector<uint64_t>{43444564, 3979645651, 1672743891, 2150618427, 3745730563, 4240503393}));
  Literal s = Generate("u64[2]", "{12345, 678}", "u32[]", "rng_three_fry");
  EXPECT_EQ(U64s(s.element(0)), (std::vector<uint64_t>{12345, 679}));
  EXPECT_EQ(U64s(s.element(1)), (std::vector<uint64_t>{1194812792}));
}

TEST(RngBitGeneratorTest, ThreeFryU64OneCounterPerElement) {
  Literal r = Generate("u64[2]", "{12345, 678}", "u64[3]", "rng_three_fry");
  EXPECT_EQ(U64s(r.element(0)), (std::vector<uint64_t>{12345, 681}));
  EXPECT_EQ(U64s(r.element(1)),
            (std::vector<uint64_t>{5293734703197021560u, 8004256827016755739u, 13861876100747071297u}));
}

TEST(RngBitGeneratorTest, PhiloxU32FourPerCounter) {
  Literal r = Generate("u64[2]", "{12345, 678}", "u32[6]", "rng_philox");
  EXPECT_EQ(U64s(r.element(0)), (std::vector<uint64_t>{12345, 680}));
  EXPECT_EQ(U64s(r.element(1)),
            (std::vector<uint64_t>{994788301, 2613011098, 2990333819, 3655994170, 3631367120, 3716484149}));
}

TEST(RngBitGeneratorTest, PhiloxU64ThreeWordStateCarries) {
  // Counter low word all ones: the second counter carries into the high word.
  Literal r = Generate("u64[3]", "{7, 18446744073709551615, 5}", "u64[3]", "rng_philox");
  EXPECT_EQ(U64s(r.element(0)), (std::vector<uint64_t>{7, 1, 6}));
  EXPECT_EQ(U64s(r.element(1)),
            (std::vector<uint64_t>{18390195005874446273u, 13394466077198894183u, 12555307977505995268u}));
}

TEST(RngBitGeneratorTest, PhiloxU16TwoWordStateKeepsLowBits) {
  Literal r = Generate("u64[2]", "{7, 18446744073709551614}", "u16[5]", "rng_philox");
  EXPECT_EQ(U64s(r.element(0)), (std::vector<uint64_t>{7, 0}));
  EXPECT_EQ(U64s(r.element(1)), (std::vector<uint64_t>{5273, 11814, 2063, 64729, 59953}));
}

TEST(RngBitGeneratorTest, DefaultIsPhilox) {
  Literal r = Generate("u64[2]", "{0, 0}", "u32[2]", "rng_default");
  EXPECT_EQ(U64s(r.element(0)), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(U64s(r.element(1)), (std::vector<uint64_t>{1713891541, 3781805453}));
}

TEST(RngBitGeneratorTest, SignedTypeGetsTheSameBits) {
  Literal u = Generate("u64[2]", "{12345, 678}", "u32[5]", "rng_three_fry");
  Literal s = Generate("u64[2]", "{12345, 678}", "s32[5]", "rng_three_fry");
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(s.element(1).GetU64(i) & 0xFFFFFFFFu, u.element(1).GetU64(i)) << i;
}

TEST(RngBitGeneratorTest, BadStateIsAnError) {
  StatusOr<Literal> r = EvaluateHlo(R"(HloModule m
ENTRY e {
  s = u64[3] constant({1, 2, 3})
  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry
})");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace kiln::hlo
