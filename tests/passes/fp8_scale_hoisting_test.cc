// Fp8ScaleHoisting: XLA's scaled FP8 dot (convert(f8) * broadcast(scale)
// per operand) becomes a dot of the f8 values times the product of the
// scales. With power-of-two scales every step is exact, so the rewritten
// module gives the same bits as the original under the reference
// evaluator; forms outside the pattern are left alone.
#include "tests/passes/simplification_test_util.h"

#include "compiler/passes/fp8_scale_hoisting.h"

namespace kiln::passes {
namespace {

const hlo::HloInstruction* OnlyDot(const hlo::HloModule& module) {
  const hlo::HloInstruction* dot = nullptr;
  for (const hlo::HloInstruction* inst : module.entry()->instructions())
    if (inst->opcode() == hlo::HloOpcode::kDot) dot = inst;
  return dot;
}

// Runs the pass on `text`, expecting a change and the original module's
// results (bit for bit); returns the rewritten module (null on failure).
std::unique_ptr<hlo::HloModule> Hoisted(const std::string& text) {
  auto before = test_support::MustParse(text);
  auto after = test_support::MustParse(text);
  if (!before || !after) return nullptr;
  Fp8ScaleHoisting pass;
  EXPECT_TRUE(test_support::MustRunPass(pass, *after));
  test_support::ExpectSameResults(*before, *after);
  return after;
}

// f8 operands a[32,64] and b[48,64], widened to `wide`, scaled by
// constants 0.5 and 4 (`scale_b` false: b unscaled), dotted into `out`.
std::string ScaledDot(const std::string& lhs, const std::string& rhs, const std::string& wide, const std::string& out,
                      bool scale_b) {
  std::string b_value = scale_b ? "xb" : "cb";
  return "HloModule m\n\nENTRY e {\n  a = " + lhs + "[32,64] parameter(0)\n  b = " + rhs +
         "[48,64] parameter(1)\n  sa = " + wide + "[] constant(0.5)\n  sb = " + wide +
         "[] constant(4)\n  ca = " + wide + "[32,64] convert(a)\n  cb = " + wide + "[48,64] convert(b)\n  ba = " +
         wide + "[32,64] broadcast(sa), dimensions={}\n  bb = " + wide +
         "[48,64] broadcast(sb), dimensions={}\n  xa = " + wide + "[32,64] multiply(ca, ba)\n  xb = " + wide +
         "[48,64] multiply(bb, cb)\n  ROOT d = " + out + "[32,48] dot(xa, " + b_value +
         "), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}\n";
}

TEST(Fp8ScaleHoisting, ScaledOperandsBecomeAnF8DotTimesTheScales) {
  for (bool scale_b : {true, false}) {
    auto after = Hoisted(ScaledDot("f8e4m3fn", "f8e5m2", "f32", "f32", scale_b));
    ASSERT_NE(after, nullptr);
    const hlo::HloInstruction* dot = OnlyDot(*after);
    ASSERT_NE(dot, nullptr);
    EXPECT_EQ(dot->operand(0)->name(), "a") << hlo::PrintModule(*after);
    EXPECT_EQ(dot->operand(1)->name(), "b");
    EXPECT_EQ(dot->shape().ToString(false), "f32[32,48]");
  }
}

// Unscaled converts: the f8 dot gets the dot's own result type (bf16).
TEST(Fp8ScaleHoisting, ConvertsAloneKeepTheResultType) {
  const std::string text = R"(HloModule m

ENTRY e {
  a = f8e5m2[32,64] parameter(0)
  b = f8e4m3fn[48,64] parameter(1)
  ca = bf16[32,64] convert(a)
  cb = bf16[48,64] convert(b)
  ROOT d = bf16[32,48] dot(ca, cb), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})";
  auto after = Hoisted(text);
  ASSERT_NE(after, nullptr);
  const hlo::HloInstruction* dot = OnlyDot(*after);
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->operand(0)->shape().element_type(), ElementType::kF8E5M2);
  EXPECT_EQ(dot->shape().ToString(false), "bf16[32,48]");
  EXPECT_EQ(dot, after->entry()->root());
}

// No FP8 GEMM for the result: f8e5m2 on both sides, k not a multiple of 16,
// or an operand already wide. The module is left as it is.
TEST(Fp8ScaleHoisting, LeavesDotsWithoutAnFp8Gemm) {
  Fp8ScaleHoisting pass;
  test_support::CheckPass(pass, ScaledDot("f8e5m2", "f8e5m2", "f32", "f32", true), false);
  const std::string wide_rhs = R"(HloModule m

ENTRY e {
  a = f8e4m3fn[32,64] parameter(0)
  b = f32[48,64] parameter(1)
  ca = f32[32,64] convert(a)
  ROOT d = f32[32,48] dot(ca, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})";
  test_support::CheckPass(pass, wide_rhs, false);
  const std::string odd_k = R"(HloModule m

ENTRY e {
  a = f8e4m3fn[32,24] parameter(0)
  b = f8e4m3fn[48,24] parameter(1)
  ca = f32[32,24] convert(a)
  cb = f32[48,24] convert(b)
  ROOT d = f32[32,48] dot(ca, cb), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})";
  test_support::CheckPass(pass, odd_k, false);
}

}  // namespace
}  // namespace kiln::passes
