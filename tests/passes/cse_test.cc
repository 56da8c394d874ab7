// Cse: duplicated expressions merge (whole chains in one run), distinct or
// side-effecting ones do not; results checked against hand-written expected
// modules and the reference evaluator.
#include "compiler/passes/cse.h"

#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::CheckPass;

TEST(Cse, MergesDuplicatedChainInOneRun) {
  Cse cse;
  CheckPass(cse, R"(HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a1 = f32[4] add(p0, p1)
  a2 = f32[4] add(p0, p1)
  n1 = f32[4] negate(a1)
  n2 = f32[4] negate(a2)
  e1 = f32[4] exponential(n1)
  e2 = f32[4] exponential(n2)
  ROOT m = f32[4] multiply(e1, e2)
}
)",
            true, R"(HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a1 = f32[4] add(p0, p1)
  n1 = f32[4] negate(a1)
  e1 = f32[4] exponential(n1)
  ROOT m = f32[4] multiply(e1, e1)
}
)");
}

TEST(Cse, MergesEqualConstantsOnly) {
  Cse cse;
  CheckPass(cse, R"(HloModule m

ENTRY e {
  p = f32[3] parameter(0)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  c3 = f32[] constant(3)
  z1 = f32[] constant(0)
  z2 = f32[] constant(-0)
  b1 = f32[3] broadcast(c1), dimensions={}
  b2 = f32[3] broadcast(c2), dimensions={}
  b3 = f32[3] broadcast(c3), dimensions={}
  b4 = f32[3] broadcast(z1), dimensions={}
  b5 = f32[3] broadcast(z2), dimensions={}
  s1 = f32[3] add(b1, b2)
  s2 = f32[3] add(s1, b3)
  s3 = f32[3] add(s2, b4)
  s4 = f32[3] subtract(s3, b5)
  ROOT r = f32[3] multiply(s4, p)
}
)",
            true, R"(HloModule m

ENTRY e {
  p = f32[3] parameter(0)
  c1 = f32[] constant(2)
  c3 = f32[] constant(3)
  z1 = f32[] constant(0)
  z2 = f32[] constant(-0)
  b1 = f32[3] broadcast(c1), dimensions={}
  b3 = f32[3] broadcast(c3), dimensions={}
  b4 = f32[3] broadcast(z1), dimensions={}
  b5 = f32[3] broadcast(z2), dimensions={}
  s1 = f32[3] add(b1, b1)
  s2 = f32[3] add(s1, b3)
  s3 = f32[3] add(s2, b4)
  s4 = f32[3] subtract(s3, b5)
  ROOT r = f32[3] multiply(s4, p)
}
)");
}

TEST(Cse, AttributesDistinguishButMetadataDoesNot) {
  Cse cse;
  CheckPass(cse, R"(HloModule m

ENTRY e {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  lt = pred[2,3] compare(p0, p1), direction=LT
  gt = pred[2,3] compare(p0, p1), direction=GT
  lt2 = pred[2,3] compare(p0, p1), direction=LT, metadata={op_name="other"}
  t1 = f32[3,2] transpose(p0), dimensions={1,0}
  r1 = f32[3,2] reshape(p0)
  s1 = f32[2,3] select(lt, p0, p1)
  s2 = f32[2,3] select(gt, p0, p1)
  s3 = f32[2,3] select(lt2, p0, p1)
  ROOT t = (f32[2,3], f32[2,3], f32[2,3], f32[3,2], f32[3,2]) tuple(s1, s2, s3, t1, r1)
}
)",
            true, R"(HloModule m

ENTRY e {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  lt = pred[2,3] compare(p0, p1), direction=LT
  gt = pred[2,3] compare(p0, p1), direction=GT
  t1 = f32[3,2] transpose(p0), dimensions={1,0}
  r1 = f32[3,2] reshape(p0)
  s1 = f32[2,3] select(lt, p0, p1)
  s2 = f32[2,3] select(gt, p0, p1)
  ROOT t = (f32[2,3], f32[2,3], f32[2,3], f32[3,2], f32[3,2]) tuple(s1, s2, s1, t1, r1)
}
)");
}

TEST(Cse, MergesReducesAndWorksInsideCalledComputations) {
  Cse cse;
  // The reducer and the while condition, which stay unchanged.
  const std::string sum_and_cond = std::string(test_support::kModuleWithSum) + R"(
cond {
  c = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
)";
  CheckPass(cse, sum_and_cond + R"(
body {
  q = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(q), index=0
  i2 = s32[] get-tuple-element(q), index=0
  one = s32[] constant(1)
  one2 = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[4] get-tuple-element(q), index=1
  x2 = f32[4] get-tuple-element(q), index=1
  y = f32[4] add(x, x2)
  ROOT t = (s32[], f32[4]) tuple(next, y)
}

ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  z2 = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=sum
  r2 = f32[] reduce(p, z2), dimensions={0}, to_apply=sum
  m = f32[] multiply(r1, r2)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  wx = f32[4] get-tuple-element(w), index=1
  ROOT out = (f32[], f32[4]) tuple(m, wx)
}
)",
            true, sum_and_cond + R"(
body {
  q = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(q), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[4] get-tuple-element(q), index=1
  y = f32[4] add(x, x)
  ROOT t = (s32[], f32[4]) tuple(next, y)
}

ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=sum
  m = f32[] multiply(r1, r1)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  wx = f32[4] get-tuple-element(w), index=1
  ROOT out = (f32[], f32[4]) tuple(m, wx)
}
)");
}

TEST(Cse, NothingToMergeIsUnchanged) {
  Cse cse;
  CheckPass(cse, R"(HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a = f32[4] add(p0, p1)
  b = f32[4] add(p1, p0)
  ROOT m = f32[4] multiply(a, b)
}
)",
            false);
}

TEST(Cse, SideEffectsAndParametersAreNotMerged) {
  Cse cse;
  CheckPass(cse, R"(HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[4] rng(lo, hi), distribution=rng_uniform
  r2 = f32[4] rng(lo, hi), distribution=rng_uniform
  c1 = f32[4] custom-call(p0), custom_call_target="foo"
  c2 = f32[4] custom-call(p0), custom_call_target="foo"
  a1 = f32[4] add(r1, r2)
  a2 = f32[4] add(c1, c2)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(a1, a2, p0, p1)
}
)",
            false, "", /*evaluate=*/false);
}

TEST(Cse, ElidedConstantsAreNotMerged) {
  Cse cse;
  CheckPass(cse, R"(HloModule m

ENTRY e {
  c1 = f32[100] constant({...})
  c2 = f32[100] constant({...})
  ROOT a = f32[100] add(c1, c2)
}
)",
            false, "", /*evaluate=*/false);
}

TEST(Cse, Corpus) {
  test_support::CheckPassOnCorpus([] { return std::make_unique<Cse>(); });
}

}  // namespace
}  // namespace kiln::passes
