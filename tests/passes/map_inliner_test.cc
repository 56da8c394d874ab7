// MapInliner: a map of an elementwise computation becomes those ops on whole
// arrays (constants broadcast); a map whose computation is not elementwise
// stays. Checked against hand-written expected modules and, before and
// after, the reference evaluator.
#include "compiler/passes/map_inliner.h"

#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::CheckPass;

TEST(MapInliner, MixedInputTypesWithConstant) {
  MapInliner pass;
  CheckPass(pass, R"(HloModule m

f {
  x = f32[] parameter(0)
  i = s32[] parameter(1)
  c = f32[] convert(i)
  two = f32[] constant(2)
  t = f32[] multiply(c, two)
  ROOT r = f32[] add(x, t)
}

ENTRY e {
  a = f32[10,3] parameter(0)
  b = s32[10,3] parameter(1)
  ROOT out = f32[10,3] map(a, b), to_apply=f
}
)",
            true, R"(HloModule m

f {
  x = f32[] parameter(0)
  i = s32[] parameter(1)
  c = f32[] convert(i)
  two = f32[] constant(2)
  t = f32[] multiply(c, two)
  ROOT r = f32[] add(x, t)
}

ENTRY e {
  a = f32[10,3] parameter(0)
  b = s32[10,3] parameter(1)
  c.1 = f32[10,3] convert(b)
  two.1 = f32[] constant(2)
  two.broadcast = f32[10,3] broadcast(two.1), dimensions={}
  t.1 = f32[10,3] multiply(c.1, two.broadcast)
  ROOT r.1 = f32[10,3] add(a, t.1)
}
)");
}

TEST(MapInliner, IdentityMapIsItsOperand) {
  MapInliner pass;
  CheckPass(pass, R"(HloModule m

id {
  ROOT x = f32[] parameter(0)
}

ENTRY e {
  a = f32[5] parameter(0)
  m = f32[5] map(a), to_apply=id
  ROOT n = f32[5] negate(m)
}
)",
            true, R"(HloModule m

id {
  ROOT x = f32[] parameter(0)
}

ENTRY e {
  a = f32[5] parameter(0)
  ROOT n = f32[5] negate(a)
}
)");
}

TEST(MapInliner, KeepsMapOfNonElementwiseComputation) {
  MapInliner pass;
  CheckPass(pass, R"(HloModule m

g {
  x = f32[] parameter(0)
  ROOT r = f32[1] reshape(x)
}

f {
  x = f32[] parameter(0)
  c = f32[1] call(x), to_apply=g
  ROOT s = f32[] reshape(c)
}

ENTRY e {
  a = f32[5] parameter(0)
  ROOT m = f32[5] map(a), to_apply=f
}
)",
            false);
}

}  // namespace
}  // namespace kiln::passes
