// DotCanonicalization: the GEMM types of a dot. By default narrow float
// operands are widened to f32; with bf16 operands kept (compiling for
// CUDA), a bf16 x bf16 dot stays bf16 on its operands and accumulates into
// an f32 result that is rounded afterwards. Both forms compute the dot's
// values (reference evaluator, before and after).
#include "tests/passes/simplification_test_util.h"

#include "compiler/passes/integer_dot_expander.h"
#include "compiler/passes/passes.h"

namespace kiln::passes {
namespace {

const hlo::HloInstruction* OnlyDot(const hlo::HloModule& module) {
  const hlo::HloInstruction* dot = nullptr;
  for (const hlo::HloComputation* c : module.computations())
    for (const hlo::HloInstruction* inst : c->instructions())
      if (inst->opcode() == hlo::HloOpcode::kDot) {
        EXPECT_EQ(dot, nullptr) << "more than one dot";
        dot = inst;
      }
  return dot;
}

// x[4,3] . y[3,5] contracting 3, in the given element types.
std::string DotModule(const std::string& x, const std::string& y, const std::string& out) {
  return "HloModule m\n\nENTRY e {\n  x = " + x + "[4,3] parameter(0)\n  y = " + y +
         "[3,5] parameter(1)\n  ROOT d = " + out +
         "[4,5] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
}

void ExpectGemmTypes(const std::string& text, bool bf16_operands, ElementType operands, ElementType output) {
  auto before = test_support::MustParse(text);
  auto after = test_support::MustParse(text);
  if (!before || !after) return;
  DotCanonicalization pass(bf16_operands);
  EXPECT_TRUE(test_support::MustRunPass(pass, *after));
  const hlo::HloInstruction* dot = OnlyDot(*after);
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->operand(0)->shape().element_type(), operands) << hlo::PrintModule(*after);
  EXPECT_EQ(dot->operand(1)->shape().element_type(), operands) << hlo::PrintModule(*after);
  EXPECT_EQ(dot->shape().element_type(), output) << hlo::PrintModule(*after);
  test_support::ExpectSameResults(*before, *after);
}

TEST(DotCanonicalization, WidensBf16ByDefault) {
  ExpectGemmTypes(DotModule("bf16", "bf16", "bf16"), false, ElementType::kF32, ElementType::kF32);
}

TEST(DotCanonicalization, KeepsBf16OperandsForCuda) {
  ExpectGemmTypes(DotModule("bf16", "bf16", "bf16"), true, ElementType::kBF16, ElementType::kF32);
  ExpectGemmTypes(DotModule("bf16", "bf16", "f32"), true, ElementType::kBF16, ElementType::kF32);
}

// Only two bf16 operands qualify: a bf16 x f32 dot is widened either way,
// and f16 (which the host library cannot take) too.
TEST(DotCanonicalization, MixedAndF16OperandsAreWidened) {
  ExpectGemmTypes(DotModule("bf16", "f32", "f32"), true, ElementType::kF32, ElementType::kF32);
  ExpectGemmTypes(DotModule("f16", "f16", "f16"), true, ElementType::kF32, ElementType::kF32);
}

// Complex dots are complex GEMMs (cgemm / zgemm); a real operand of a
// complex dot is converted to the result's type.
TEST(DotCanonicalization, ComplexDotsAreComplexGemms) {
  ExpectGemmTypes(DotModule("c64", "c64", "c64"), false, ElementType::kC64, ElementType::kC64);
  ExpectGemmTypes(DotModule("c128", "c128", "c128"), true, ElementType::kC128, ElementType::kC128);
  ExpectGemmTypes(DotModule("f32", "c64", "c64"), true, ElementType::kC64, ElementType::kC64);
}

// A canonical bf16 x bf16 -> f32 dot is left alone when kept, and widened
// when not.
TEST(DotCanonicalization, CanonicalBf16GemmIsAFixedPoint) {
  const char* text = R"(HloModule m

ENTRY e {
  x = bf16[1,4,3] parameter(0)
  y = bf16[1,3,5] parameter(1)
  ROOT d = f32[1,4,5] dot(x, y), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)";
  auto module = test_support::MustParse(text);
  if (!module) return;
  DotCanonicalization kept(true);
  StatusOr<bool> changed = kept.Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed);
  ExpectGemmTypes(text, false, ElementType::kF32, ElementType::kF32);
}

// x s8[4,k] . y s8[k,n] -> s32[4,n].
std::string Int8Dot(int k, int n) {
  std::string ks = std::to_string(k), ns = std::to_string(n);
  return "HloModule m\n\nENTRY e {\n  x = s8[4," + ks + "] parameter(0)\n  y = s8[" + ks + "," + ns +
         "] parameter(1)\n  ROOT d = s32[4," + ns + "] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
}

// Compiling for CUDA, an s8 x s8 -> s32 dot with k and n multiples of 4 is
// left by IntegerDotExpander and becomes cuBLAS' int8 form: s8[1,4,k] x
// s8[1,n,k] (rhs transposed) -> s32[1,4,n]; the values stay the dot's.
TEST(DotCanonicalization, Int8DotBecomesTnGemmForCuda) {
  auto before = test_support::MustParse(Int8Dot(8, 12));
  auto after = test_support::MustParse(Int8Dot(8, 12));
  if (!before || !after) return;
  IntegerDotExpander expander(/*keep_int8_gemms=*/true);
  StatusOr<bool> expanded = expander.Run(*after);
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  EXPECT_FALSE(*expanded);
  DotCanonicalization pass(true, /*int8_gemms=*/true);
  EXPECT_TRUE(test_support::MustRunPass(pass, *after));
  const hlo::HloInstruction* dot = OnlyDot(*after);
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->operand(0)->shape().ToString(false), "s8[1,4,8]") << hlo::PrintModule(*after);
  EXPECT_EQ(dot->operand(1)->shape().ToString(false), "s8[1,12,8]") << hlo::PrintModule(*after);
  EXPECT_EQ(dot->shape().ToString(false), "s32[1,4,12]");
  EXPECT_EQ(dot->dot_dimension_numbers().rhs_contracting, std::vector<int64_t>{2});
  test_support::ExpectSameResults(*before, *after);
  // A fixed point.
  StatusOr<bool> again = pass.Run(*after);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(*again);
}

// k or n not a multiple of 4, or compiling for the host alone: the
// expander's reduction, no dot left.
TEST(DotCanonicalization, OtherInt8DotsAreExpanded) {
  for (auto [k, n, cuda] : {std::tuple{6, 12, true}, std::tuple{8, 5, true}, std::tuple{8, 12, false}}) {
    SCOPED_TRACE(std::to_string(k) + "x" + std::to_string(n) + (cuda ? " cuda" : " host"));
    auto module = test_support::MustParse(Int8Dot(k, n));
    if (!module) return;
    IntegerDotExpander expander(cuda);
    EXPECT_TRUE(test_support::MustRunPass(expander, *module));
    EXPECT_EQ(OnlyDot(*module), nullptr) << hlo::PrintModule(*module);
  }
}

// Compiling for CUDA (fp8 GEMMs on), an f8e5m2 x f8e4m3fn dot contracting
// the major dimensions (k = 32, n = 16) keeps its f8 operands and becomes
// cuBLASLt's TN form: f8e5m2[1,8,32] (transposed) x f8e4m3fn[1,16,32]
// (transposed) -> bf16[1,8,16]; without fp8 GEMMs both operands are bf16.
TEST(DotCanonicalization, Fp8DotBecomesTnGemmWithItsOwnTypes) {
  const std::string text =
      "HloModule m\n\nENTRY e {\n  x = f8e5m2[32,8] parameter(0)\n  y = f8e4m3fn[32,16] parameter(1)\n"
      "  ROOT d = bf16[8,16] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
  auto before = test_support::MustParse(text);
  auto after = test_support::MustParse(text);
  if (!before || !after) return;
  DotCanonicalization pass(DotCanonicalization::Options{true, true, true});
  EXPECT_TRUE(test_support::MustRunPass(pass, *after));
  const hlo::HloInstruction* dot = OnlyDot(*after);
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->operand(0)->shape().ToString(false), "f8e5m2[1,8,32]") << hlo::PrintModule(*after);
  EXPECT_EQ(dot->operand(1)->shape().ToString(false), "f8e4m3fn[1,16,32]") << hlo::PrintModule(*after);
  EXPECT_EQ(dot->shape().ToString(false), "bf16[1,8,16]");
  EXPECT_EQ(dot->dot_dimension_numbers().lhs_contracting, std::vector<int64_t>{2});
  EXPECT_EQ(dot->dot_dimension_numbers().rhs_contracting, std::vector<int64_t>{2});
  test_support::ExpectSameResults(*before, *after);
  StatusOr<bool> again = pass.Run(*after);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(*again);
  ExpectGemmTypes(text, /*bf16_operands=*/true, ElementType::kBF16, ElementType::kF32);
}

}  // namespace
}  // namespace kiln::passes
