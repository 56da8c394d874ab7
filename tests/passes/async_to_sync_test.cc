// AsyncToSync: copy-start/copy-done become a copy, async-start/update/done
// a call of the wrapped computation; async collectives, and async-start/
// async-done around a single collective, stay. Checked against
// hand-written expected modules and, before and after, the reference
// evaluator.
#include "compiler/passes/async_to_sync.h"

#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::CheckPass;

TEST(AsyncToSync, CopyStartDoneBecomesCopy) {
  AsyncToSync pass;
  CheckPass(pass, R"(HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  copy_start = (f32[4], f32[4], u32[]) copy-start(p)
  copy_done = f32[4] copy-done(copy_start)
  ROOT n = f32[4] negate(copy_done)
}
)",
            true, R"(HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(copy_done.1)
  copy_done.1 = f32[4] copy(p)
}
)");
}

TEST(AsyncToSync, AsyncStartUpdateDoneBecomesCall) {
  AsyncToSync pass;
  CheckPass(pass, R"(HloModule m

wrapped {
  x = f32[4,2] parameter(0)
  y = f32[4,2] parameter(1)
  ROOT s = f32[4,2] subtract(x, y)
}

ENTRY e {
  a = f32[4,2] parameter(0)
  b = f32[4,2] parameter(1)
  start = ((f32[4,2], f32[4,2]), f32[4,2], s32[]) async-start(a, b), calls=wrapped
  update = ((f32[4,2], f32[4,2]), f32[4,2], s32[]) async-update(start)
  ROOT done = f32[4,2] async-done(update)
}
)",
            true, R"(HloModule m

wrapped {
  x = f32[4,2] parameter(0)
  y = f32[4,2] parameter(1)
  ROOT s = f32[4,2] subtract(x, y)
}

ENTRY e {
  a = f32[4,2] parameter(0)
  b = f32[4,2] parameter(1)
  ROOT done.1 = f32[4,2] call(a, b), to_apply=wrapped
}
)");
}

TEST(AsyncToSync, LeavesAWrappedCollectiveAsync) {
  AsyncToSync pass;
  CheckPass(pass, R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

wrapped {
  x = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(x), replica_groups={}, to_apply=add
}

ENTRY e {
  p = f32[4] parameter(0)
  start = ((f32[4]), f32[4]) async-start(p), calls=wrapped
  ROOT done = f32[4] async-done(start)
}
)",
            false);
}

TEST(AsyncToSync, LeavesOtherOpsAlone) {
  AsyncToSync pass;
  CheckPass(pass, R"(HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] copy(p)
}
)",
            false);
}

}  // namespace
}  // namespace kiln::passes
