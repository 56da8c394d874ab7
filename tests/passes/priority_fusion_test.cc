// KernelFusion (priority fusion) and MultiOutputFusion on small modules:
// the fused HLO is compared with expected modules written down by hand
// (decisions stripped: they are checked apart), and the reference evaluator
// checks that the fused module computes the same values.
#include <gtest/gtest.h>

#include "compiler/passes/fusible_ops.h"
#include "compiler/passes/fusion_decisions.h"
#include "compiler/passes/optimization_pipeline.h"
#include "compiler/passes/passes.h"
#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::ExpectModuleEquals;
using test_support::ExpectSameResults;
using test_support::MustParse;
using test_support::MustRunPass;

// Drops the decisions recorded on fusions (compared separately).
void StripDecisions(hlo::HloModule& module) {
  for (hlo::HloComputation* c : module.computations())
    for (hlo::HloInstruction* inst : c->instructions())
      if (inst->opcode() == hlo::HloOpcode::kFusion) inst->RemoveAttribute("backend_config");
}

// Runs KernelFusion (then MultiOutputFusion and DCE when `multi_output`),
// compares with `expected` and evaluates; returns the fused module with its
// decisions.
std::unique_ptr<hlo::HloModule> CheckFusion(const std::string& text, const std::string& expected,
                                            bool multi_output = false) {
  auto before = MustParse(text);
  auto after = MustParse(text);
  if (!before || !after) return nullptr;
  KernelFusion fusion;
  MustRunPass(fusion, *after);
  if (multi_output) {
    MultiOutputFusion mof;
    MustRunPass(mof, *after);
    DeadCodeElimination dce;
    dce.Run(*after);
  }
  auto fused = after->Clone();
  StripDecisions(*after);
  ExpectModuleEquals(*after, expected);
  ExpectSameResults(*before, *after);
  return fused;
}

int CountFusions(const hlo::HloModule& module) {
  int n = 0;
  for (const hlo::HloInstruction* inst : module.entry()->instructions())
    n += inst->opcode() == hlo::HloOpcode::kFusion;
  return n;
}

TEST(PriorityFusion, ElementwiseChainIsOneKernel) {
  auto fused = CheckFusion(R"(HloModule m

ENTRY e {
  p0 = f32[256] parameter(0)
  p1 = f32[256] parameter(1)
  a = f32[256] add(p0, p1)
  n = f32[256] negate(a)
  x = f32[256] exponential(n)
  ROOT m = f32[256] multiply(x, p1)
}
)",
                           R"(HloModule m

ENTRY %e (p0: f32[256], p1: f32[256]) -> f32[256] {
  %p0 = f32[256] parameter(0)
  %p1 = f32[256] parameter(1)
  ROOT %m.fusion = f32[256] fusion(%p0, %p1), kind=kLoop, calls=%fused_m
}

%fused_m (param_0: f32[256], param_1: f32[256]) -> f32[256] {
  %param_0 = f32[256] parameter(0)
  %param_1 = f32[256] parameter(1)
  %a = f32[256] add(%param_0, %param_1)
  %n = f32[256] negate(%a)
  %x = f32[256] exponential(%n)
  ROOT %m = f32[256] multiply(%x, %param_1)
}
)");
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 1);
}


// add(p0, p1) feeds two kernels that must stay apart (both are outputs):
// cheap, so it is recomputed in each instead of being materialized.
TEST(PriorityFusion, CheapProducerIsDuplicated) {
  auto fused = CheckFusion(R"(HloModule m

ENTRY e {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024] parameter(1)
  a = f32[1024] add(p0, p1)
  c1 = f32[1024] negate(a)
  c2 = f32[1024] multiply(a, p1)
  ROOT t = (f32[1024], f32[1024]) tuple(c1, c2)
}
)",
                           R"(HloModule m

ENTRY %e (p0: f32[1024], p1: f32[1024]) -> (f32[1024], f32[1024]) {
  %p0 = f32[1024] parameter(0)
  %p1 = f32[1024] parameter(1)
  ROOT %t = (f32[1024], f32[1024]) tuple(%c1.fusion, %c2.fusion)
  %c1.fusion = f32[1024] fusion(%p0, %p1), kind=kLoop, calls=%fused_c1
  %c2.fusion = f32[1024] fusion(%p0, %p1), kind=kLoop, calls=%fused_c2
}

%fused_c1 (param_0: f32[1024], param_1: f32[1024]) -> f32[1024] {
  %param_0 = f32[1024] parameter(0)
  %param_1 = f32[1024] parameter(1)
  %a = f32[1024] add(%param_0, %param_1)
  ROOT %c1 = f32[1024] negate(%a)
}

%fused_c2 (param_0.1: f32[1024], param_1.1: f32[1024]) -> f32[1024] {
  %param_0.1 = f32[1024] parameter(0)
  %param_1.1 = f32[1024] parameter(1)
  %a.1 = f32[1024] add(%param_0.1, %param_1.1)
  ROOT %c2 = f32[1024] multiply(%a.1, %param_1.1)
}
)");
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 2);
}

// exp of a big tensor feeding two kernels: a transcendental is never
// duplicated, so it stays a kernel of its own.
TEST(PriorityFusion, ExpensiveProducerIsNotDuplicated) {
  auto fused = CheckFusion(R"(HloModule m

ENTRY e {
  p0 = f32[512,512] parameter(0)
  p1 = f32[512,512] parameter(1)
  x = f32[512,512] exponential(p0)
  c1 = f32[512,512] negate(x)
  c2 = f32[512,512] multiply(x, p1)
  ROOT t = (f32[512,512], f32[512,512]) tuple(c1, c2)
}
)",
                           R"(HloModule m

ENTRY %e (p0: f32[512,512], p1: f32[512,512]) -> (f32[512,512], f32[512,512]) {
  %p0 = f32[512,512] parameter(0)
  %p1 = f32[512,512] parameter(1)
  ROOT %t = (f32[512,512], f32[512,512]) tuple(%c1.fusion, %c2.fusion)
  %x.fusion = f32[512,512] fusion(%p0), kind=kLoop, calls=%fused_x
  %c1.fusion = f32[512,512] fusion(%x.fusion), kind=kLoop, calls=%fused_c1
  %c2.fusion = f32[512,512] fusion(%x.fusion, %p1), kind=kLoop, calls=%fused_c2
}

%fused_x (param_0: f32[512,512]) -> f32[512,512] {
  %param_0 = f32[512,512] parameter(0)
  ROOT %x = f32[512,512] exponential(%param_0)
}

%fused_c1 (param_0.1: f32[512,512]) -> f32[512,512] {
  %param_0.1 = f32[512,512] parameter(0)
  ROOT %c1 = f32[512,512] negate(%param_0.1)
}

%fused_c2 (param_0.2: f32[512,512], param_1: f32[512,512]) -> f32[512,512] {
  %param_0.2 = f32[512,512] parameter(0)
  %param_1 = f32[512,512] parameter(1)
  ROOT %c2 = f32[512,512] multiply(%param_0.2, %param_1)
}
)");
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 3);
}

// A reduction with its producer and an elementwise epilogue of its own
// dimensions: one kInput kernel.
TEST(PriorityFusion, ReduceWithEpilogueIsOneInputFusion) {
  auto fused = CheckFusion(std::string(test_support::kModuleWithSum) + R"(
ENTRY e {
  p0 = f32[8,128] parameter(0)
  p1 = f32[8] parameter(1)
  x = f32[8,128] exponential(p0)
  z = f32[] constant(0)
  r = f32[8] reduce(x, z), dimensions={1}, to_apply=sum
  ROOT o = f32[8] multiply(r, p1)
}
)",
                           R"(HloModule m

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %e (p0: f32[8,128], p1: f32[8]) -> f32[8] {
  %p0 = f32[8,128] parameter(0)
  %p1 = f32[8] parameter(1)
  %z = f32[] constant(0)
  ROOT %o.fusion = f32[8] fusion(%p0, %p1), kind=kInput, calls=%fused_o
}

%fused_o (param_0: f32[8,128], param_1: f32[8]) -> f32[8] {
  %param_0 = f32[8,128] parameter(0)
  %x = f32[8,128] exponential(%param_0)
  %z.1 = f32[] constant(0)
  %r = f32[8] reduce(%x, %z.1), dimensions={1}, to_apply=%sum
  %param_1 = f32[8] parameter(1)
  ROOT %o = f32[8] multiply(%r, %param_1)
}
)");
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 1);
}

// A reduction read through a broadcast would be recomputed per element:
// it stays its kernel's root (softmax's max and its normalization).
TEST(PriorityFusion, ReduceIsNotFusedThroughBroadcast) {
  auto fused = CheckFusion(std::string(test_support::kModuleWithSum) + R"(
ENTRY e {
  p0 = f32[8,128] parameter(0)
  z = f32[] constant(0)
  r = f32[8] reduce(p0, z), dimensions={1}, to_apply=sum
  b = f32[8,128] broadcast(r), dimensions={0}
  ROOT s = f32[8,128] subtract(p0, b)
}
)",
                           R"(HloModule m

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %e (p0: f32[8,128]) -> f32[8,128] {
  %p0 = f32[8,128] parameter(0)
  %z = f32[] constant(0)
  %r.fusion = f32[8] fusion(%p0), kind=kInput, calls=%fused_r
  ROOT %s.fusion = f32[8,128] fusion(%r.fusion, %p0), kind=kLoop, calls=%fused_s
}

%fused_r (param_0: f32[8,128]) -> f32[8] {
  %param_0 = f32[8,128] parameter(0)
  %z.1 = f32[] constant(0)
  ROOT %r = f32[8] reduce(%param_0, %z.1), dimensions={1}, to_apply=%sum
}

%fused_s (param_0.1: f32[8], param_1: f32[8,128]) -> f32[8,128] {
  %param_0.1 = f32[8] parameter(0)
  %b = f32[8,128] broadcast(%param_0.1), dimensions={0}
  %param_1 = f32[8,128] parameter(1)
  ROOT %s = f32[8,128] subtract(%param_1, %b)
}
)");
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 2);
}

// A diamond of kernels becomes one kernel; a diamond through a library
// call (dot) keeps the producer apart, and multi-output fusion does not
// merge it into the consumer either (the dot would close a cycle).
TEST(PriorityFusion, KernelDiamondIsOneKernel) {
  auto fused = CheckFusion(R"(HloModule m

ENTRY e {
  p0 = f32[64] parameter(0)
  p1 = f32[64] parameter(1)
  a = f32[64] add(p0, p1)
  b = f32[64] negate(a)
  c = f32[64] exponential(a)
  ROOT d = f32[64] multiply(b, c)
}
)",
                           R"(HloModule m

ENTRY %e (p0: f32[64], p1: f32[64]) -> f32[64] {
  %p0 = f32[64] parameter(0)
  %p1 = f32[64] parameter(1)
  ROOT %d.fusion = f32[64] fusion(%p0, %p1), kind=kLoop, calls=%fused_d
}

%fused_d (param_0: f32[64], param_1: f32[64]) -> f32[64] {
  %param_0 = f32[64] parameter(0)
  %param_1 = f32[64] parameter(1)
  %a = f32[64] add(%param_0, %param_1)
  %b = f32[64] negate(%a)
  %c = f32[64] exponential(%a)
  ROOT %d = f32[64] multiply(%b, %c)
}
)");
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 1);
}

TEST(PriorityFusion, NoCycleThroughDot) {
  auto fused = CheckFusion(R"(HloModule m

ENTRY e {
  p0 = f32[64,64] parameter(0)
  p1 = f32[64,64] parameter(1)
  x = f32[64,64] exponential(p0)
  d = f32[64,64] dot(x, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT o = f32[64,64] add(x, d)
}
)",
                           R"(HloModule m

ENTRY %e (p0: f32[64,64], p1: f32[64,64]) -> f32[64,64] {
  %p0 = f32[64,64] parameter(0)
  %p1 = f32[64,64] parameter(1)
  %d = f32[64,64] dot(%x.fusion, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %x.fusion = f32[64,64] fusion(%p0), kind=kLoop, calls=%fused_x
  ROOT %o.fusion = f32[64,64] fusion(%x.fusion, %d), kind=kLoop, calls=%fused_o
}

%fused_x (param_0: f32[64,64]) -> f32[64,64] {
  %param_0 = f32[64,64] parameter(0)
  ROOT %x = f32[64,64] exponential(%param_0)
}

%fused_o (param_0.1: f32[64,64], param_1: f32[64,64]) -> f32[64,64] {
  %param_0.1 = f32[64,64] parameter(0)
  %param_1 = f32[64,64] parameter(1)
  ROOT %o = f32[64,64] add(%param_0.1, %param_1)
}
)", /*multi_output=*/true);
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 2);
}

// A tiled transpose takes its producers, and its elementwise consumers
// (convert, multiply by another operand of the output's shape and by a
// broadcast scalar) fuse into it as an epilogue: one kernel. (The scalar
// constant and its broadcast are cloned into the kernel; the originals are
// left for DCE.)
TEST(PriorityFusion, TransposeHeroTakesElementwiseEpilogue) {
  auto fused = CheckFusion(R"(HloModule m

ENTRY e {
  p0 = f32[64,32] parameter(0)
  p1 = f32[64,32] parameter(1)
  p2 = bf16[32,64] parameter(2)
  a = f32[64,32] add(p0, p1)
  t = f32[32,64] transpose(a), dimensions={1,0}
  c = bf16[32,64] convert(t)
  m = bf16[32,64] multiply(c, p2)
  k = bf16[] constant(2)
  kb = bf16[32,64] broadcast(k), dimensions={}
  ROOT s = bf16[32,64] multiply(m, kb)
}
)",
                           R"(HloModule m

ENTRY %e (p0: f32[64,32], p1: f32[64,32], p2: bf16[32,64]) -> bf16[32,64] {
  %p0 = f32[64,32] parameter(0)
  %p1 = f32[64,32] parameter(1)
  %p2 = bf16[32,64] parameter(2)
  %k = bf16[] constant(2)
  %kb = bf16[32,64] broadcast(%k), dimensions={}
  ROOT %s.fusion = bf16[32,64] fusion(%p0, %p1, %p2), kind=kLoop, calls=%fused_s
}

%fused_s (param_0: f32[64,32], param_1: f32[64,32], param_2: bf16[32,64]) -> bf16[32,64] {
  %param_0 = f32[64,32] parameter(0)
  %param_1 = f32[64,32] parameter(1)
  %a = f32[64,32] add(%param_0, %param_1)
  %t = f32[32,64] transpose(%a), dimensions={1,0}
  %c = bf16[32,64] convert(%t)
  %param_2 = bf16[32,64] parameter(2)
  %m = bf16[32,64] multiply(%c, %param_2)
  %k.1 = bf16[] constant(2)
  %kb.1 = bf16[32,64] broadcast(%k.1), dimensions={}
  ROOT %s = bf16[32,64] multiply(%m, %kb.1)
}
)");
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 1);
  const hlo::HloComputation* body = nullptr;
  for (const hlo::HloInstruction* inst : fused->entry()->instructions())
    if (inst->opcode() == hlo::HloOpcode::kFusion) body = inst->called_computation("calls");
  ASSERT_NE(body, nullptr);
  const hlo::HloInstruction* hero = FindTiledTransposeHero(*body);
  ASSERT_NE(hero, nullptr);
  EXPECT_EQ(hero->name(), "t");
}

// A transpose feeding a GEMM through a reshape and a convert (dot
// canonicalization's pattern): the reshape keeps the transpose's groups
// ([64,1,16,2] -> [64,32]), so the epilogue fuses and the kernel stays tiled.
TEST(PriorityFusion, GroupPreservingReshapeJoinsTheEpilogue) {
  auto before = MustParse(R"(HloModule m

ENTRY e {
  p0 = bf16[1,16,2,64] parameter(0)
  t = bf16[64,1,16,2] transpose(p0), dimensions={3,0,1,2}
  r = bf16[64,32] reshape(t)
  ROOT c = f32[64,32] convert(r)
}
)");
  ASSERT_TRUE(before);
  auto after = before->Clone();
  KernelFusion fusion;
  MustRunPass(fusion, *after);
  ASSERT_EQ(CountFusions(*after), 1);
  const hlo::HloInstruction* root = after->entry()->root();
  ASSERT_EQ(root->opcode(), hlo::HloOpcode::kFusion);
  const hlo::HloInstruction* hero = FindTiledTransposeHero(*root->called_computation("calls"));
  ASSERT_NE(hero, nullptr);
  EXPECT_EQ(hero->name(), "t");
  ExpectSameResults(*before, *after);
}

// A reduce of the transpose is not an epilogue (it leaves the output index
// space): the transpose stays its own kernel's root, and so does the
// reduce; the elementwise consumer still fuses into the transpose.
TEST(PriorityFusion, ReduceDoesNotFuseIntoTransposeHero) {
  auto fused = CheckFusion(R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p0 = f32[64,32] parameter(0)
  t = f32[32,64] transpose(p0), dimensions={1,0}
  z = f32[] constant(0)
  ROOT r = f32[32] reduce(t, z), dimensions={1}, to_apply=add
}
)",
                           R"(HloModule m

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %e (p0: f32[64,32]) -> f32[32] {
  %p0 = f32[64,32] parameter(0)
  %z = f32[] constant(0)
  %t.fusion = f32[32,64] fusion(%p0), kind=kLoop, calls=%fused_t
  ROOT %r.fusion = f32[32] fusion(%t.fusion), kind=kInput, calls=%fused_r
}

%fused_t (param_0: f32[64,32]) -> f32[32,64] {
  %param_0 = f32[64,32] parameter(0)
  ROOT %t = f32[32,64] transpose(%param_0), dimensions={1,0}
}

%fused_r (param_0.1: f32[32,64]) -> f32[32] {
  %param_0.1 = f32[32,64] parameter(0)
  %z.1 = f32[] constant(0)
  ROOT %r = f32[32] reduce(%param_0.1, %z.1), dimensions={1}, to_apply=%add
}
)");
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 2);
}

// Two heroes cannot share one kernel's tile: add(transpose(a),
// transpose(b)) takes one of them as its hero; the other stays a kernel.
TEST(PriorityFusion, EpilogueTakesOneHero) {
  auto before = MustParse(R"(HloModule m

ENTRY e {
  p0 = f32[64,32] parameter(0)
  p1 = f32[64,32] parameter(1)
  t0 = f32[32,64] transpose(p0), dimensions={1,0}
  t1 = f32[32,64] transpose(p1), dimensions={1,0}
  ROOT s = f32[32,64] add(t0, t1)
}
)");
  ASSERT_TRUE(before);
  auto after = before->Clone();
  KernelFusion fusion;
  MustRunPass(fusion, *after);
  EXPECT_EQ(CountFusions(*after), 2);
  int with_hero = 0;
  for (const hlo::HloInstruction* inst : after->entry()->instructions())
    if (inst->opcode() == hlo::HloOpcode::kFusion)
      with_hero += FindTiledTransposeHero(*inst->called_computation("calls")) != nullptr;
  EXPECT_EQ(with_hero, 2);
  ExpectSameResults(*before, *after);
}

// exp(p0) is an output and the input of a consumer kernel: the consumer
// computes it too and returns both (tuple root, same dimensions).
TEST(MultiOutputFusion, ProducerAlsoAnOutputJoinsItsConsumer) {
  auto fused = CheckFusion(R"(HloModule m

ENTRY e {
  p0 = f32[256] parameter(0)
  p1 = f32[256] parameter(1)
  x = f32[256] exponential(p0)
  c = f32[256] add(x, p1)
  ROOT t = (f32[256], f32[256]) tuple(x, c)
}
)",
                           R"(HloModule m

ENTRY %e (p0: f32[256], p1: f32[256]) -> (f32[256], f32[256]) {
  %p0 = f32[256] parameter(0)
  %p1 = f32[256] parameter(1)
  ROOT %t = (f32[256], f32[256]) tuple(%x.fusion.multi.out, %x.fusion.multi.out.1)
  %x.fusion.multi = (f32[256], f32[256]) fusion(%p0, %p1), kind=kLoop, calls=%fused_x.multi
  %x.fusion.multi.out = f32[256] get-tuple-element(%x.fusion.multi), index=0
  %x.fusion.multi.out.1 = f32[256] get-tuple-element(%x.fusion.multi), index=1
}

%fused_x.multi (param_0.2: f32[256], param_1.1: f32[256]) -> (f32[256], f32[256]) {
  %param_0.2 = f32[256] parameter(0)
  %x.1 = f32[256] exponential(%param_0.2)
  %param_1.1 = f32[256] parameter(1)
  %c.1 = f32[256] add(%x.1, %param_1.1)
  ROOT %x.fusion.outputs = (f32[256], f32[256]) tuple(%x.1, %c.1)
}
)", /*multi_output=*/true);
  ASSERT_TRUE(fused);
  EXPECT_EQ(CountFusions(*fused), 1);
  // x and c were kernels formed without decisions: the merge is the one.
  const hlo::HloInstruction* multi = fused->entry()->root()->operand(0)->operand(0);
  std::vector<FusionDecision> decisions = FusionDecisionsOf(*multi);
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].producer, "x.fusion");
  EXPECT_EQ(decisions[0].consumer, "c.fusion");
  EXPECT_GT(decisions[0].saved_us, 1.0);  // one launch and 1 KiB not read back
}

// negate -> exp: one fusion decision.
constexpr char kNegateExp[] = R"(HloModule m

ENTRY e {
  p0 = f32[256] parameter(0)
  a = f32[256] negate(p0)
  ROOT x = f32[256] exponential(a)
}
)";

// Every fusion decision is recorded on the fusion with a positive saving.
TEST(PriorityFusion, DecisionsAreRecorded) {
  auto module = MustParse(kNegateExp);
  ASSERT_TRUE(module);
  KernelFusion fusion;
  ASSERT_TRUE(MustRunPass(fusion, *module));
  const hlo::HloInstruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode(), hlo::HloOpcode::kFusion);
  std::vector<FusionDecision> decisions = FusionDecisionsOf(*root);
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].producer, "a");
  EXPECT_EQ(decisions[0].consumer, "x");
  // One kernel launch (1 µs) saved, plus 2 KiB not written and read back.
  EXPECT_GT(decisions[0].saved_us, 1.0);
  EXPECT_LT(decisions[0].saved_us, 1.01);
  // The text form reads back.
  EXPECT_EQ(FusionDecisionsOf(*root), decisions);
}

// The roofline target is an option: priorities follow it.
TEST(PriorityFusion, TargetIsAnOption) {
  FusionOptions options;
  options.target = thunks::HostRooflineTarget();
  options.kernel_launch_seconds = 0;
  auto module = MustParse(kNegateExp);
  ASSERT_TRUE(module);
  KernelFusion fusion(options);
  ASSERT_TRUE(MustRunPass(fusion, *module));
  std::vector<FusionDecision> decisions = FusionDecisionsOf(*module->entry()->root());
  ASSERT_EQ(decisions.size(), 1u);
  // 1 KiB written and 1 KiB read back at 2e10 B/s: 0.1024 µs.
  EXPECT_NEAR(decisions[0].saved_us, 0.1024, 1e-4);
}

}  // namespace
}  // namespace kiln::passes

namespace kiln::passes {
namespace {

// The whole middle-end, verified after every pass, on the corpus: fusion
// never creates a cycle or an invalid module.
TEST(PriorityFusion, CorpusVerifiesAfterEveryPass) {
  std::vector<std::string> files = test_support::CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "corpus not found";
  for (const std::string& path : files) {
    auto parsed = hlo::ParseHloModuleFile(path);
    if (!parsed.ok()) continue;
    PipelineOptions options;
    options.verify_each_pass = true;
    Status status = RunOptimizationPipeline(**parsed, options);
    EXPECT_TRUE(status.ok()) << path << ": " << status.message();
  }
}

}  // namespace
}  // namespace kiln::passes
