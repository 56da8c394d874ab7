// RngBitGeneratorExpander: after the pass no rng-bit-generator is left and
// the module computes, on several states, exactly what the reference
// evaluator's rng-bit-generator (compiler/evaluator/rng_ops.cc, written
// separately from the algorithm) computes before it: the same bits and the
// same new state, for ThreeFry and Philox, u64[2] and u64[3] states, 8- to
// 64-bit elements, scalars, odd and even shapes (which place ThreeFry's
// outputs differently) and counters about to wrap. The evaluator itself is
// checked against XLA's values in tests/evaluator/rng_bit_generator_test.cc
// and tests/jax_cases.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "compiler/passes/rng_bit_generator_expander.h"
#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using test_support::MustParse;
using test_support::MustRunPass;

constexpr uint64_t kMax = ~uint64_t{0};

std::string Module(int64_t state_size, const std::string& bits_type, const std::string& algorithm) {
  const std::string s = "u64[" + std::to_string(state_size) + "]";
  return "HloModule m\nENTRY e {\n  p = " + s + " parameter(0)\n  ROOT r = (" + s + ", " + bits_type +
         ") rng-bit-generator(p), algorithm=" + algorithm + "\n}\n";
}

Literal State(const std::vector<uint64_t>& words) {
  Literal lit(Shape(ElementType::kU64, {static_cast<int64_t>(words.size())}));
  for (size_t i = 0; i < words.size(); ++i) lit.SetU64(static_cast<int64_t>(i), words[i]);
  return lit;
}

int CountRng(const hlo::HloModule& module) {
  int n = 0;
  for (hlo::HloComputation* comp : module.computations())
    for (HloInstruction* inst : comp->instructions()) n += inst->opcode() == HloOpcode::kRngBitGenerator;
  return n;
}

// Evaluates the module before and after the pass on each state.
void ExpectSameAsEvaluator(int64_t state_size, const std::string& bits_type, const std::string& algorithm,
                           const std::vector<std::vector<uint64_t>>& states) {
  SCOPED_TRACE(algorithm + " u64[" + std::to_string(state_size) + "] -> " + bits_type);
  const std::string text = Module(state_size, bits_type, algorithm);
  auto before = MustParse(text);
  auto after = MustParse(text);
  ASSERT_TRUE(before && after);
  RngBitGeneratorExpander pass;
  EXPECT_TRUE(MustRunPass(pass, *after));
  EXPECT_EQ(CountRng(*after), 0);
  hlo::Evaluator evaluator;
  for (const auto& words : states) {
    StatusOr<Literal> want = evaluator.Evaluate(*before, {State(words)});
    StatusOr<Literal> got = evaluator.Evaluate(*after, {State(words)});
    ASSERT_TRUE(want.ok()) << want.status().message();
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE(want->element(0) == got->element(0))
        << "state: want " << want->element(0).ToString() << " got " << got->element(0).ToString();
    EXPECT_TRUE(want->element(1) == got->element(1))
        << "bits: want " << want->element(1).ToStringTruncated(16) << "\ngot " << got->element(1).ToStringTruncated(16);
  }
}

const std::vector<std::vector<uint64_t>> kTwoWordStates = {
    {12345, 678}, {0, 0}, {0x0123456789ABCDEF, kMax - 2}, {kMax, kMax}};
const std::vector<std::vector<uint64_t>> kThreeWordStates = {
    {12345, 678, 9}, {7, kMax, 5}, {0xFEDCBA9876543210, kMax - 1, kMax}};

TEST(RngBitGeneratorExpanderTest, ThreeFryMatchesEvaluator) {
  for (const char* type : {"u32[7,13]", "u32[]", "u32[4]", "u32[3,5]", "u32[1,1,7]", "u32[3,4,5]", "u64[7,13]",
                           "u64[]", "u8[5,3]", "u16[2,3]", "s32[3,1,5]", "f32[6]", "s64[3]", "f16[5]"})
    ExpectSameAsEvaluator(2, type, "rng_three_fry", kTwoWordStates);
}

TEST(RngBitGeneratorExpanderTest, PhiloxMatchesEvaluator) {
  for (const char* type : {"u32[7,13]", "u32[]", "u32[4]", "u32[3,5]", "u64[7,13]", "u64[]", "u64[5]",
                           "u8[5,3]", "u16[2,3]", "s32[3,1,5]", "f64[3]"}) {
    ExpectSameAsEvaluator(2, type, "rng_philox", kTwoWordStates);
    ExpectSameAsEvaluator(3, type, "rng_philox", kThreeWordStates);
  }
}

TEST(RngBitGeneratorExpanderTest, DefaultIsPhilox) {
  ExpectSameAsEvaluator(2, "u32[7,13]", "rng_default", kTwoWordStates);
  // And the check can fail: ThreeFry's bits differ from Philox's.
  auto philox = MustParse(Module(2, "u32[6]", "rng_default"));
  auto three_fry = MustParse(Module(2, "u32[6]", "rng_three_fry"));
  ASSERT_TRUE(philox && three_fry);
  RngBitGeneratorExpander pass;
  EXPECT_TRUE(MustRunPass(pass, *philox));
  StatusOr<Literal> a = hlo::Evaluator().Evaluate(*philox, {State({12345, 678})});
  StatusOr<Literal> b = hlo::Evaluator().Evaluate(*three_fry, {State({12345, 678})});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(a->element(1) == b->element(1));
}

TEST(RngBitGeneratorExpanderTest, ExpandsInsideOtherComputationsAndKeepsUsers) {
  auto module = MustParse(R"(HloModule m
ENTRY e {
  p = u64[2] parameter(0)
  r = (u64[2], u32[3]) rng-bit-generator(p), algorithm=rng_three_fry
  s = u64[2] get-tuple-element(r), index=0
  r2 = (u64[2], u32[3]) rng-bit-generator(s), algorithm=rng_three_fry
  b1 = u32[3] get-tuple-element(r), index=1
  b2 = u32[3] get-tuple-element(r2), index=1
  ROOT x = u32[3] xor(b1, b2)
})");
  ASSERT_TRUE(module);
  auto reference = MustParse(hlo::PrintModule(*module));
  RngBitGeneratorExpander pass;
  EXPECT_TRUE(MustRunPass(pass, *module));
  EXPECT_EQ(CountRng(*module), 0);
  StatusOr<Literal> want = hlo::Evaluator().Evaluate(*reference, {State({5, 6})});
  StatusOr<Literal> got = hlo::Evaluator().Evaluate(*module, {State({5, 6})});
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_TRUE(*want == *got);
}

TEST(RngBitGeneratorExpanderTest, BadStateIsAnError) {
  auto module = MustParse(Module(3, "u32[4]", "rng_three_fry"));
  ASSERT_TRUE(module);
  RngBitGeneratorExpander pass;
  StatusOr<bool> changed = pass.Run(*module);
  EXPECT_FALSE(changed.ok());
}

}  // namespace
}  // namespace kiln::passes
