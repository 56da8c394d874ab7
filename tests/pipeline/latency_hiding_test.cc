// Latency hiding: where async collectives' starts and dones land, on
// hand-ordered schedules, and the memory bound that keeps or rejects them.
#include "compiler/pipeline/latency_hiding.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/hlo/parser.h"
#include "compiler/pipeline/overlap_cost_model.h"

namespace kiln::pipeline {
namespace {

// The reducer of the modules' all-reduces.
constexpr const char* kAdd = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}
)";

// x needs the all-reduce; the dot chain d -> t does not.
const std::string kModule = std::string("HloModule overlap, replica_count=2\n") + kAdd + R"(
ENTRY main {
  p = f32[64] parameter(0)
  a = f32[32,32] parameter(1)
  b = f32[32,32] parameter(2)
  ars = f32[64] all-reduce-start(p), replica_groups={}, to_apply=add
  ard = f32[64] all-reduce-done(ars)
  x = f32[64] negate(ard)
  d = f32[32,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[32,32] tanh(d)
  ROOT r = (f32[64], f32[32,32]) tuple(x, t)
})";

SequentialSchedule ScheduleOf(const hlo::HloComputation& comp, const std::vector<std::string>& names) {
  SequentialSchedule s;
  s.computation = &comp;
  for (const std::string& name : names)
    for (const hlo::HloInstruction* inst : comp.instructions())
      if (inst->name() == name) s.sequence.push_back(inst);
  s.Reindex();
  return s;
}

std::vector<std::string> Names(const SequentialSchedule& s) {
  std::vector<std::string> names;
  for (const hlo::HloInstruction* inst : s.sequence) names.push_back(inst->name());
  return names;
}

const std::vector<std::string> kDoneRightAfterStart = {"p", "ars", "ard", "x", "a", "b", "d", "t", "r"};

TEST(LatencyHiding, ReorderMovesIndependentComputeBetweenStartAndDone) {
  auto m = hlo::ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const hlo::HloComputation& comp = *(*m)->entry();
  SequentialSchedule base = ScheduleOf(comp, kDoneRightAfterStart);
  ASSERT_TRUE(VerifySchedule(base).ok());
  SequentialSchedule out = HideCollectiveLatency(base, OverlapMode::kReorder);
  ASSERT_TRUE(VerifySchedule(out).ok());
  // The start as soon as p is there, the done when only x (its user) is left.
  EXPECT_EQ(Names(out), (std::vector<std::string>{"p", "ars", "a", "b", "d", "t", "ard", "x", "r"}));
}

// A 256-byte all-reduce on 2 devices and a chain of four 4 MiB
// elementwise ops that do not need it. By hand, with the cost model's
// nominal figures: the exchange is 4 us + 2 ring steps of 1 us + 256 bytes
// at 450 GB/s = 6.0 us; each op is a 2 us launch + 8 MiB read and written
// at 3 TB/s = 4.8 us. Two ops (9.6 us) cover the exchange, so the done and
// its user come right after n2 instead of after the whole chain.
TEST(LatencyHiding, ReorderEndsTheOverlapOnceTheExchangeIsCovered) {
  auto m = hlo::ParseHloModule(std::string("HloModule covered, replica_count=2\n") + kAdd + R"(
ENTRY main {
  p = f32[64] parameter(0)
  q = f32[1048576] parameter(1)
  ars = f32[64] all-reduce-start(p), replica_groups={}, to_apply=add
  ard = f32[64] all-reduce-done(ars)
  x = f32[64] negate(ard)
  n1 = f32[1048576] negate(q)
  n2 = f32[1048576] exponential(n1)
  n3 = f32[1048576] negate(n2)
  n4 = f32[1048576] exponential(n3)
  ROOT r = (f32[64], f32[1048576]) tuple(x, n4)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const hlo::HloComputation& comp = *(*m)->entry();
  const hlo::HloInstruction* ars = nullptr;
  const hlo::HloInstruction* n1 = nullptr;
  for (const hlo::HloInstruction* inst : comp.instructions()) {
    if (inst->name() == "ars") ars = inst;
    if (inst->name() == "n1") n1 = inst;
  }
  ASSERT_NE(ars, nullptr);
  ASSERT_NE(n1, nullptr);
  EXPECT_NEAR(EstimatedExchangeSeconds(*ars), 6e-6 + 256.0 / 450e9, 1e-12);
  EXPECT_NEAR(EstimatedComputeSeconds(*n1), 2e-6 + 2 * 4194304.0 / 3e12, 1e-12);
  SequentialSchedule base = ScheduleOf(comp, {"p", "q", "ars", "ard", "x", "n1", "n2", "n3", "n4", "r"});
  ASSERT_TRUE(VerifySchedule(base).ok());
  SequentialSchedule out = HideCollectiveLatency(base, OverlapMode::kReorder);
  ASSERT_TRUE(VerifySchedule(out).ok());
  EXPECT_EQ(Names(out), (std::vector<std::string>{"p", "ars", "q", "n1", "n2", "ard", "x", "n3", "n4", "r"}));
}

TEST(LatencyHiding, MoveOnlyKeepsTheOrderOfOtherInstructions) {
  auto m = hlo::ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const hlo::HloComputation& comp = *(*m)->entry();
  // x comes right after the done in the given order: nothing to move.
  EXPECT_EQ(Names(HideCollectiveLatency(ScheduleOf(comp, kDoneRightAfterStart), OverlapMode::kMoveOnly)),
            kDoneRightAfterStart);
  // With x after the dot chain, the chain runs while the all-reduce does;
  // the start moves up to right after p.
  SequentialSchedule late_user = ScheduleOf(comp, {"a", "b", "p", "d", "ars", "ard", "t", "x", "r"});
  ASSERT_TRUE(VerifySchedule(late_user).ok());
  SequentialSchedule out = HideCollectiveLatency(late_user, OverlapMode::kMoveOnly);
  ASSERT_TRUE(VerifySchedule(out).ok());
  EXPECT_EQ(Names(out), (std::vector<std::string>{"a", "b", "p", "ars", "d", "t", "ard", "x", "r"}));
}

TEST(LatencyHiding, AssignmentKeepsTheOverlapWithinTheMemoryLimit) {
  auto m = hlo::ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const hlo::HloComputation& comp = *(*m)->entry();
  auto base = AssignBuffers(comp, ScheduleOf(comp, kDoneRightAfterStart));
  ASSERT_TRUE(base.ok()) << base.status().message();
  // The limit: the given arena plus the larger of a quarter of it and the
  // bytes in flight (one f32[64] done and its start's f32[64] operand: 512).
  EXPECT_EQ(OverlapMemoryLimit(comp, 4096), 4096 + 1024);
  EXPECT_EQ(OverlapMemoryLimit(comp, 0), 512);
  auto overlapped = AssignBuffersHidingLatency(comp, *base, {});
  ASSERT_TRUE(overlapped.ok()) << overlapped.status().message();
  ASSERT_TRUE(overlapped->has_value());
  EXPECT_EQ(Names((*overlapped)->schedule()),
            (std::vector<std::string>{"p", "ars", "a", "b", "d", "t", "ard", "x", "r"}));
  EXPECT_LE((*overlapped)->peak_temp_bytes(), OverlapMemoryLimit(comp, base->peak_temp_bytes()));
}

// The compute the schedule puts between a start and its done must not
// take the bytes of the start's operand, which the exchange reads until
// the done: s (computed, f32[64]) stays live to ard, so n and e, the same
// size and live only between them, get other bytes; after the done, y may
// reuse them. The done's result is the start's buffer.
TEST(LatencyHiding, TheStartsOperandsLiveUntilTheDone) {
  auto m = hlo::ParseHloModule(std::string("HloModule operands, replica_count=2\n") + kAdd + R"(
ENTRY main {
  p = f32[64] parameter(0)
  s = f32[64] exponential(p)
  ars = f32[64] all-reduce-start(s), replica_groups={}, to_apply=add
  n = f32[64] negate(p)
  e = f32[64] exponential(n)
  ard = f32[64] all-reduce-done(ars)
  x = f32[64] add(ard, e)
  y = f32[64] negate(x)
  ROOT r = (f32[64], f32[64]) tuple(x, y)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const hlo::HloComputation& comp = *(*m)->entry();
  auto a = AssignBuffers(comp, ScheduleOf(comp, {"p", "s", "ars", "n", "e", "ard", "x", "y", "r"}));
  ASSERT_TRUE(a.ok()) << a.status().message();
  auto slice = [&](const char* name) {
    StatusOr<thunks::BufferSlice> s = a->SliceFor(comp.FindInstruction(name), {});
    EXPECT_TRUE(s.ok()) << name;
    return s.ok() ? *s : thunks::BufferSlice{};
  };
  auto overlap = [](const thunks::BufferSlice& u, const thunks::BufferSlice& v) {
    return u.allocation == v.allocation && u.offset < v.offset + v.size && v.offset < u.offset + u.size;
  };
  EXPECT_EQ(slice("ard"), slice("ars"));
  EXPECT_FALSE(overlap(slice("s"), slice("n")));
  EXPECT_FALSE(overlap(slice("s"), slice("e")));
  EXPECT_FALSE(overlap(slice("s"), slice("ars")));
}

TEST(LatencyHiding, NoAsyncCollectiveLeavesTheScheduleAlone) {
  auto m = hlo::ParseHloModule(R"(
HloModule plain
ENTRY main {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const hlo::HloComputation& comp = *(*m)->entry();
  auto base = AssignBuffers(comp, PostOrderSchedule(comp));
  ASSERT_TRUE(base.ok());
  auto overlapped = AssignBuffersHidingLatency(comp, *base, {});
  ASSERT_TRUE(overlapped.ok());
  EXPECT_FALSE(overlapped->has_value());
}

}  // namespace
}  // namespace kiln::pipeline
