// Memory-minimizing schedules on a hand-analyzed module.
#include "compiler/pipeline/list_scheduler.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "tests/pipeline/buffer_assignment_checker.h"

namespace kiln::pipeline {
namespace {

// Every f32[256,16] value is 16384 bytes. root = add(a, r), r at the end of
// a three-instruction chain b -> c -> r.
// Post-order p a b c r root: a is live [1, 5] across the chain, so at
// position 3 a, b, c are live: arena 3 x 16384 = 49152.
// Heavier subtree first (DFS): p b c r a root: b [1,2], c [2,3], r [3,5],
// a [4,5]: at most two live at once: arena 32768.
constexpr const char* kModule = R"(
HloModule late_big
ENTRY main {
  p = f32[16] parameter(0)
  a = f32[256,16] broadcast(p), dimensions={1}
  b = f32[256,16] broadcast(p), dimensions={1}
  c = f32[256,16] exponential(b)
  r = f32[256,16] negate(c)
  ROOT root = f32[256,16] add(a, r)
})";

TEST(ListScheduler, MinimizingScheduleBeatsPostOrder) {
  auto m = hlo::ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const hlo::HloComputation& comp = *(*m)->entry();
  auto po = AssignBuffers(comp, PostOrderSchedule(comp));
  ASSERT_TRUE(po.ok()) << po.status().message();
  EXPECT_EQ(po->peak_temp_bytes(), 49152);

  SequentialSchedule dfs = DfsMemorySchedule(comp);
  ASSERT_TRUE(VerifySchedule(dfs).ok());
  std::vector<std::string> names;
  for (const hlo::HloInstruction* inst : dfs.sequence) names.push_back(inst->name());
  EXPECT_EQ(names, (std::vector<std::string>{"p", "b", "c", "r", "a", "root"}));

  auto mm = AssignBuffersMinimizingMemory(comp);
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  EXPECT_EQ(mm->peak_temp_bytes(), 32768);
  EXPECT_EQ(mm->temp_lower_bound(), 32768);
  auto check = checker::CheckAssignment(*mm);
  EXPECT_TRUE(check.ok()) << check.errors.front();

  SequentialSchedule again = MemoryMinimizingSchedule(comp);
  EXPECT_EQ(again.sequence, mm->schedule().sequence);  // deterministic
  SequentialSchedule list = ListMemorySchedule(comp);
  EXPECT_TRUE(VerifySchedule(list).ok());
}

}  // namespace
}  // namespace kiln::pipeline
