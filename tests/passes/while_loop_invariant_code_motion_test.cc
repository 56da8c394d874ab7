// WhileLoopInvariantCodeMotion: invariant work leaves the body, the loop
// computes the same values (checked with the reference evaluator), and
// variant or cheap values stay.
#include "compiler/passes/while_loop_invariant_code_motion.h"

#include <gtest/gtest.h>

#include <random>

#include "common/random_literal.h"
#include "common/value_compare.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"

namespace kiln::passes {
namespace {

constexpr char kLoop[] = R"(HloModule m
cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  w = f32[4] get-tuple-element(p), index=2
  e = f32[4] exponential(w)
  l = f32[4] log(e)
  b = f32[4] broadcast(f32[] constant(2)), dimensions={}
  s = f32[4] multiply(l, b)
  v2 = f32[4] add(v, s)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i2, v2, w)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[4], f32[4]) tuple(z, x, y)
  ROOT w = (s32[], f32[4], f32[4]) while(t), condition=cond, body=body
}
)";

int CountOpcode(const hlo::HloComputation& c, hlo::HloOpcode op) {
  int n = 0;
  for (const hlo::HloInstruction* inst : c.instructions()) n += inst->opcode() == op;
  return n;
}

TEST(WhileLoopInvariantCodeMotion, HoistsInvariantWorkOutOfTheBody) {
  auto module = hlo::ParseHloModule(kLoop);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::mt19937_64 rng(3);
  std::vector<Literal> args;
  for (const Shape& s : (*module)->entry()->ParameterShapes()) args.push_back(RandomLiteral(s, rng));
  auto before = hlo::Evaluator().Evaluate(**module, args);
  ASSERT_TRUE(before.ok());

  WhileLoopInvariantCodeMotion pass;
  auto changed = pass.Run(**module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(hlo::VerifyModule(**module).ok()) << hlo::VerifyModule(**module).message();
  const hlo::HloComputation* body = (*module)->FindComputation("body");
  // s = log(exp(w)) * 2 is computed once before the loop (exp, log and the
  // multiply move; the add reading the loop-carried v stays).
  EXPECT_EQ(CountOpcode(*body, hlo::HloOpcode::kExp), 0);
  EXPECT_EQ(CountOpcode(*body, hlo::HloOpcode::kLog), 0);
  EXPECT_EQ(CountOpcode(*body, hlo::HloOpcode::kAdd), 2);
  EXPECT_EQ(CountOpcode(*(*module)->entry(), hlo::HloOpcode::kMultiply), 1);
  EXPECT_EQ(body->root()->shape().tuple_size(), 4);  // one new state element
  auto after = hlo::Evaluator().Evaluate(**module, args);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(CompareValues(*after, *before, "result").ok());
  // Nothing invariant is left: a second run changes nothing.
  auto again = pass.Run(**module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST(WhileLoopInvariantCodeMotion, LeavesVariantAndCheapValues) {
  std::string text = kLoop;
  // w is now updated by the body, so nothing that reads it is invariant.
  text.replace(text.find("tuple(i2, v2, w)"), 16, "tuple(i2, v2, e)");
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  WhileLoopInvariantCodeMotion pass;
  auto changed = pass.Run(**module);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace kiln::passes
