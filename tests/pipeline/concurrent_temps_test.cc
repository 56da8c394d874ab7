// Buffer assignment for concurrent thunks (BufferAssignmentOptions::
// concurrent_temps) on a hand-analyzed module: two independent chains whose
// values could run side by side on two streams never share bytes, while
// the memory-minimizing assignment packs them into fewer bytes; the level
// order schedule puts independent instructions side by side, and the
// independent checker accepts the result.
#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "compiler/pipeline/list_scheduler.h"
#include "tests/pipeline/buffer_assignment_checker.h"

namespace kiln::pipeline {
namespace {

// Every f32[256,16] value is 16384 bytes. Levels: p 0; a1, b1 1; a2, b2 2;
// root 3. By level, a1 and b1 live over levels [1, 2] and a2 and b2 over
// [2, 3]: all four overlap, an arena of 4 x 16384 = 65536 bytes. The
// memory-minimizing post-order p a1 a2 b1 b2 root gives a1 [1,2], a2
// [2,5], b1 [3,4], b2 [4,5]: a1's bytes go to b1 or b2, and at most three
// are live at once: 49152 bytes.
constexpr const char* kTwoChains = R"(
HloModule two_chains
ENTRY main {
  p = f32[16] parameter(0)
  a1 = f32[256,16] broadcast(p), dimensions={1}
  a2 = f32[256,16] exponential(a1)
  b1 = f32[256,16] broadcast(p), dimensions={1}
  b2 = f32[256,16] negate(b1)
  ROOT root = f32[256,16] add(a2, b2)
})";

TEST(ConcurrentTemps, IndependentValuesNeverShareBytes) {
  auto m = hlo::ParseHloModule(kTwoChains);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const hlo::HloComputation& comp = *(*m)->entry();

  SequentialSchedule levels = LevelOrderSchedule(comp);
  ASSERT_TRUE(VerifySchedule(levels).ok());
  std::vector<std::string> names;
  for (const hlo::HloInstruction* inst : levels.sequence) names.push_back(inst->name());
  EXPECT_EQ(names, (std::vector<std::string>{"p", "a1", "b1", "a2", "b2", "root"}));
  EXPECT_EQ(DependencyLevels(levels), (std::vector<int64_t>{0, 1, 1, 2, 2, 3}));

  auto packed = AssignBuffersMinimizingMemory(comp);
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  EXPECT_EQ(packed->peak_temp_bytes(), 49152);

  BufferAssignmentOptions options;
  options.concurrent_temps = true;
  auto concurrent = AssignBuffersMinimizingMemory(comp, options);
  ASSERT_TRUE(concurrent.ok()) << concurrent.status().message();
  EXPECT_EQ(concurrent->peak_temp_bytes(), 65536);
  std::vector<thunks::BufferSlice> slices;
  for (const char* name : {"a1", "a2", "b1", "b2"}) {
    auto slice = concurrent->SliceFor(comp.FindInstruction(name), {});
    ASSERT_TRUE(slice.ok()) << slice.status().message();
    slices.push_back(*slice);
  }
  for (size_t i = 0; i < slices.size(); ++i)
    for (size_t j = i + 1; j < slices.size(); ++j)
      EXPECT_FALSE(slices[i].Overlaps(slices[j])) << slices[i].ToString() << " " << slices[j].ToString();
  // Valid for the sequential schedule too (the view checks; the reported
  // lower bound is over levels, not positions, so it is not compared).
  auto check = checker::CheckAssignment(checker::ViewOf(*concurrent, {}));
  EXPECT_TRUE(check.ok()) << check.errors.front();
}

}  // namespace
}  // namespace kiln::pipeline
