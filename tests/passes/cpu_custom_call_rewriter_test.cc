// CpuCustomCallRewriter and the evaluator's own GetRngSeed and
// __onednn$layernorm: hand-computed values, the same from the custom-call
// (evaluator) and from the HLO the pass writes for it (evaluator on the
// rewritten module), and one-line errors for malformed calls.
#include "compiler/passes/cpu_custom_call_rewriter.h"

#include "compiler/evaluator/cpu_custom_calls.h"
#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

// Evaluates `text` as written and after the pass; both must give `check`'s
// expectations.
template <typename Check>
void ExpectBothForms(const std::string& text, const std::vector<Literal>& args, Check check) {
  auto before = test_support::MustParse(text);
  auto after = test_support::MustParse(text);
  if (!before || !after) return;
  CpuCustomCallRewriter pass;
  EXPECT_TRUE(test_support::MustRunPass(pass, *after));
  for (const hlo::HloModule* m : {before.get(), after.get()}) {
    SCOPED_TRACE(m == before.get() ? "custom-call" : "rewritten");
    StatusOr<Literal> r = hlo::Evaluator().Evaluate(*m, args);
    ASSERT_TRUE(r.ok()) << r.status().message();
    check(*r);
  }
  for (const hlo::HloComputation* c : after->computations())
    for (const hlo::HloInstruction* inst : c->instructions())
      EXPECT_NE(inst->opcode(), hlo::HloOpcode::kCustomCall) << inst->DebugName();
}

// The splitmix64 finalizer of kiln's rng state 0x7012395 + n (n = 0, 1, 2),
// computed by hand (Python): 0x25cf6e70a6e92f84, 0x23838b40b963e1c0,
// 0xdbf2feddc51bf60a. A loop runs its GetRngSeed three times and xors the
// seeds; the one outside the loop runs once.
TEST(CpuCustomCallRewriter, GetRngSeedIsNonZeroAndAdvancesPerExecution) {
  const char* text = R"(HloModule m

cond {
  p = (s32[], u64[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}

body {
  p = (s32[], u64[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = u64[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  seed = u64[] custom-call(), custom_call_target="GetRngSeed"
  x = u64[] xor(acc, seed)
  ROOT t = (s32[], u64[]) tuple(next, x)
}

ENTRY e {
  once = u64[] custom-call(), custom_call_target="GetRngSeed"
  zero = s32[] constant(0)
  z = u64[] constant(0)
  init = (s32[], u64[]) tuple(zero, z)
  loop = (s32[], u64[]) while(init), condition=cond, body=body
  xored = u64[] get-tuple-element(loop), index=1
  ROOT r = (u64[], u64[]) tuple(once, xored)
}
)";
  ExpectBothForms(text, {}, [](const Literal& r) {
    EXPECT_EQ(r.element(0).GetU64(0), 0x25cf6e70a6e92f84ULL);
    EXPECT_EQ(r.element(1).GetU64(0), 0x25cf6e70a6e92f84ULL ^ 0x23838b40b963e1c0ULL ^ 0xdbf2feddc51bf60aULL);
  });
  static_assert(hlo::RngSeedFromState(0, 0) == 1, "the finalizer maps 0 to 0, which GetRngSeed never returns");
}

// x rows {0, 2, 4, 6} (mean 3, variance (9+1+1+9)/4 = 5) and {1, 1, 1, 1}
// (variance 0), epsilon 4.0 (bits 0x40800000 = 1082130432): row 0
// normalizes to {-3, -1, 1, 3} / 3, row 1 to 0. With scale {1, 2, 3, 4}
// and shift 0.5: {-0.5, -1/6, 1.5, 4.5} and {0.5, 0.5, 0.5, 0.5}.
constexpr char kLayerNorm[] = R"(HloModule m

ENTRY e {
  x = TYPE[2,4] parameter(0)
  scale = TYPE[4] parameter(1)
  shift = TYPE[4] parameter(2)
  ROOT y = TYPE[2,4] custom-call(x, scale, shift), custom_call_target="__onednn$layernorm",
      backend_config="{\"onednn_layer_norm_config\":{\"rescale\":\"SCALE_AND_SHIFT\",\"epsilon_typecast\":1082130432}}"
}
)";

std::string WithType(std::string text, const std::string& type) {
  for (size_t at = text.find("TYPE"); at != std::string::npos; at = text.find("TYPE")) text.replace(at, 4, type);
  return text;
}

std::vector<Literal> LayerNormArgs(ElementType type) {
  Literal x(Shape(type, {2, 4})), scale(Shape(type, {4})), shift(Shape(type, {4}));
  const double xs[8] = {0, 2, 4, 6, 1, 1, 1, 1};
  for (int i = 0; i < 8; ++i) x.SetF64(i, xs[i]);
  for (int i = 0; i < 4; ++i) scale.SetF64(i, i + 1), shift.SetF64(i, 0.5);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  args.push_back(std::move(scale));
  args.push_back(std::move(shift));
  return args;
}

TEST(CpuCustomCallRewriter, LayerNormF32) {
  ExpectBothForms(WithType(kLayerNorm, "f32"), LayerNormArgs(ElementType::kF32), [](const Literal& y) {
    const double want[8] = {-0.5, -1.0 / 6, 1.5, 4.5, 0.5, 0.5, 0.5, 0.5};
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(y.GetF64(i), want[i], 1e-6) << i;
  });
}

// bf16 in and out (statistics in f32): -1/6 rounds to bf16's -0.1667.
TEST(CpuCustomCallRewriter, LayerNormBf16) {
  ExpectBothForms(WithType(kLayerNorm, "bf16"), LayerNormArgs(ElementType::kBF16), [](const Literal& y) {
    const double want[8] = {-0.5, -0.1669921875, 1.5, 4.5, 0.5, 0.5, 0.5, 0.5};
    for (int i = 0; i < 8; ++i) EXPECT_EQ(y.GetF64(i), want[i]) << i;
  });
}

// Without epsilon_typecast (cpu.hlo's config) epsilon is 0: a rank-3 input
// whose rows {-1, 1} normalize to {-1, 1}, {5, 9} too; scale 2, shift -1.
TEST(CpuCustomCallRewriter, LayerNormDefaultEpsilonRank3) {
  const char* text = R"(HloModule m

ENTRY e {
  x = f32[2,1,2] parameter(0)
  scale = f32[2] parameter(1)
  shift = f32[2] parameter(2)
  ROOT y = f32[2,1,2] custom-call(x, scale, shift), custom_call_target="__onednn$layernorm",
      backend_config="{\"onednn_layer_norm_config\":{\"rescale\":\"SCALE_AND_SHIFT\"}}"
}
)";
  Literal x(Shape(ElementType::kF32, {2, 1, 2})), scale(Shape(ElementType::kF32, {2})),
      shift(Shape(ElementType::kF32, {2}));
  const double xs[4] = {-1, 1, 5, 9};
  for (int i = 0; i < 4; ++i) x.SetF64(i, xs[i]);
  for (int i = 0; i < 2; ++i) scale.SetF64(i, 2), shift.SetF64(i, -1);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  args.push_back(std::move(scale));
  args.push_back(std::move(shift));
  ExpectBothForms(text, args, [](const Literal& y) {
    const double want[4] = {-3, 1, -3, 1};
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(y.GetF64(i), want[i], 1e-6) << i;
  });
}

// Fused ops, a wrong scale shape, an integer input, operands for
// GetRngSeed: one-line errors from the pass and the evaluator alike.
TEST(CpuCustomCallRewriter, MalformedCallsAreErrors) {
  struct Case {
    std::string text, message;
  };
  const std::string ln_head = "HloModule m\n\nENTRY e {\n  x = f32[2,4] parameter(0)\n  s = f32[4] parameter(1)\n";
  const std::vector<Case> cases = {
      {ln_head + "  ROOT y = f32[2,4] custom-call(x, s, s), custom_call_target=\"__onednn$layernorm\", "
                 "backend_config=\"{\\\"onednn_layer_norm_config\\\":{\\\"fusions\\\":{\\\"ops\\\":[\\\"RELU\\\"]}}}\"\n}\n",
       "fused ops"},
      {ln_head + "  t = f32[2] parameter(2)\n  ROOT y = f32[2,4] custom-call(x, t, s), "
                 "custom_call_target=\"__onednn$layernorm\"\n}\n",
       "scale must be f32[4]"},
      {"HloModule m\n\nENTRY e {\n  x = s32[4] parameter(0)\n  ROOT y = s32[4] custom-call(x, x, x), "
       "custom_call_target=\"__onednn$layernorm\"\n}\n",
       "f32, bf16 or f16"},
      {"HloModule m\n\nENTRY e {\n  x = u64[] parameter(0)\n  ROOT y = u64[] custom-call(x), "
       "custom_call_target=\"GetRngSeed\"\n}\n",
       "takes no operands"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    auto module = test_support::MustParse(c.text);
    if (!module) continue;
    std::mt19937_64 rng(1);
    StatusOr<Literal> evaluated = hlo::Evaluator().Evaluate(*module, test_support::RandomArguments(*module, rng));
    ASSERT_FALSE(evaluated.ok());
    EXPECT_NE(evaluated.status().message().find(c.message), std::string::npos) << evaluated.status().message();
    CpuCustomCallRewriter pass;
    StatusOr<bool> changed = pass.Run(*module);
    ASSERT_FALSE(changed.ok());
    EXPECT_NE(changed.status().message().find(c.message), std::string::npos) << changed.status().message();
    EXPECT_EQ(changed.status().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace kiln::passes
