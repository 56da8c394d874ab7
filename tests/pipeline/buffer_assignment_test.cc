// Buffer assignment on small hand-written modules; every expected offset,
// size and arena size is worked out by hand in the comments.
#include "compiler/pipeline/buffer_assignment.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"
#include "tests/pipeline/buffer_assignment_checker.h"
#include "tests/support/must_parse.h"

namespace kiln::pipeline {
namespace {

using hlo::HloModule;
using test_support::MustParse;

thunks::BufferSlice Slice(const BufferAssignment& a, const HloModule& m, const char* name, ShapeIndex index = {}) {
  const hlo::HloInstruction* inst = m.entry()->FindInstruction(name);
  EXPECT_NE(inst, nullptr) << name;
  auto slice = a.SliceFor(inst, index);
  EXPECT_TRUE(slice.ok()) << name << ": " << slice.status().message();
  return slice.ok() ? *slice : thunks::BufferSlice{-1, -1, -1};
}

// p -> a -> b -> c -> d, each f32[256] = 1024 bytes. Positions: p 0, a 1,
// b 2, c 3, d 4. Temps a [1,2], b [2,3], c [3,4]; d is the output. a and c
// never coexist, so c reuses a's bytes: arena = 2 * 1024 = 2048, which is
// also the lower bound (two temps live at positions 2 and 3).
TEST(BufferAssignment, ChainReusesMemoryAfterLastUse) {
  auto m = MustParse(R"(
HloModule chain
ENTRY main {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  b = f32[256] negate(a)
  c = f32[256] exponential(b)
  ROOT d = f32[256] negate(c)
})");
  ASSERT_NE(m, nullptr);
  auto a = AssignBuffers(*m);
  ASSERT_TRUE(a.ok()) << a.status().message();
  // parameter 0, output d, temp arena.
  ASSERT_EQ(a->allocations().size(), 3u);
  EXPECT_TRUE(a->allocations()[0].is_parameter());
  EXPECT_EQ(a->allocations()[0].size, 1024);
  EXPECT_TRUE(a->allocations()[1].is_output());
  EXPECT_EQ(a->allocations()[1].size, 1024);
  EXPECT_EQ(a->temp_allocation(), 2);
  EXPECT_TRUE(a->allocations()[2].is_temp());
  EXPECT_EQ(a->allocations()[2].size, 2048);
  EXPECT_EQ(a->peak_temp_bytes(), 2048);
  EXPECT_EQ(a->temp_lower_bound(), 2048);

  auto sa = Slice(*a, *m, "a"), sb = Slice(*a, *m, "b"), sc = Slice(*a, *m, "c");
  EXPECT_EQ(sa.allocation, 2);
  EXPECT_EQ(sa.size, 1024);
  EXPECT_EQ(sc.offset, sa.offset);  // reuse after a's last use
  EXPECT_NE(sb.offset, sa.offset);
  EXPECT_EQ(Slice(*a, *m, "p"), (thunks::BufferSlice{0, 0, 1024}));
  EXPECT_EQ(Slice(*a, *m, "d"), (thunks::BufferSlice{1, 0, 1024}));
}

// a and b are both read by c, so at position 3 a, b, c (3 x 1024) are live:
// lower bound 3072. d [4,5] only overlaps c, so it reuses a's or b's bytes
// and the arena stays 3072.
TEST(BufferAssignment, DiamondArenaMatchesLowerBound) {
  auto m = MustParse(R"(
HloModule diamond
ENTRY main {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  b = f32[256] negate(p)
  c = f32[256] add(a, b)
  d = f32[256] exponential(c)
  ROOT e = f32[256] negate(d)
})");
  ASSERT_NE(m, nullptr);
  auto a = AssignBuffers(*m);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->temp_lower_bound(), 3072);
  EXPECT_EQ(a->peak_temp_bytes(), 3072);
  auto sa = Slice(*a, *m, "a"), sb = Slice(*a, *m, "b"), sc = Slice(*a, *m, "c"), sd = Slice(*a, *m, "d");
  EXPECT_NE(sa.offset, sb.offset);
  EXPECT_NE(sa.offset, sc.offset);
  EXPECT_NE(sb.offset, sc.offset);
  EXPECT_NE(sd.offset, sc.offset);
}

// f32[3] is 12 bytes, but every buffer starts on a 64-byte boundary: two
// overlapping temps need 64 + 64 = 128 arena bytes; slices keep size 12.
TEST(BufferAssignment, OffsetsAreAlignedTo64) {
  auto m = MustParse(R"(
HloModule small
ENTRY main {
  p = f32[3] parameter(0)
  a = f32[3] exponential(p)
  b = f32[3] negate(a)
  ROOT c = f32[3] negate(b)
})");
  ASSERT_NE(m, nullptr);
  auto a = AssignBuffers(*m);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->peak_temp_bytes(), 128);
  EXPECT_EQ(a->temp_lower_bound(), 128);
  auto sa = Slice(*a, *m, "a"), sb = Slice(*a, *m, "b");
  EXPECT_EQ(sa.size, 12);
  EXPECT_EQ(sa.offset % 64, 0);
  EXPECT_EQ(sb.offset % 64, 0);
  EXPECT_NE(sa.offset, sb.offset);
}

// tuple and get-tuple-element define no buffers. a (f32[16], 64 bytes) is
// the only temporary; b reaches the root through t and g1, so it is an
// output; c is output {0}.
TEST(BufferAssignment, TupleAndGetTupleElementAlias) {
  auto m = MustParse(R"(
HloModule tuples
ENTRY main {
  p0 = f32[16] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[16] exponential(p0)
  b = f32[8] exponential(p1)
  t = (f32[16], f32[8]) tuple(a, b)
  g0 = f32[16] get-tuple-element(t), index=0
  g1 = f32[8] get-tuple-element(t), index=1
  c = f32[16] negate(g0)
  ROOT r = (f32[16], f32[8]) tuple(c, g1)
})");
  ASSERT_NE(m, nullptr);
  auto a = AssignBuffers(*m);
  ASSERT_TRUE(a.ok()) << a.status().message();
  // p0, p1, output {0} (c), output {1} (b), temp arena.
  ASSERT_EQ(a->allocations().size(), 5u);
  EXPECT_EQ(a->allocations()[0].parameter, (thunks::ParameterRef{0, {}}));
  EXPECT_EQ(a->allocations()[1].parameter, (thunks::ParameterRef{1, {}}));
  EXPECT_EQ(a->allocations()[2].output, ShapeIndex{0});
  EXPECT_EQ(a->allocations()[2].size, 64);
  EXPECT_EQ(a->allocations()[3].output, ShapeIndex{1});
  EXPECT_EQ(a->allocations()[3].size, 32);
  EXPECT_EQ(a->temp_allocation(), 4);
  EXPECT_EQ(a->peak_temp_bytes(), 64);

  EXPECT_EQ(Slice(*a, *m, "t", {0}), Slice(*a, *m, "a"));
  EXPECT_EQ(Slice(*a, *m, "g0"), Slice(*a, *m, "a"));
  EXPECT_EQ(Slice(*a, *m, "t", {1}), Slice(*a, *m, "b"));
  EXPECT_EQ(Slice(*a, *m, "g1"), (thunks::BufferSlice{3, 0, 32}));
  EXPECT_EQ(Slice(*a, *m, "r", {0}), (thunks::BufferSlice{2, 0, 64}));
  // A tuple index has no slice of its own.
  EXPECT_FALSE(a->SliceFor(m->entry()->FindInstruction("t"), {}).ok());
  EXPECT_FALSE(a->SliceFor(m->entry()->FindInstruction("t"), {2}).ok());
}

// A collective -done defines no buffer: its result is the start's result
// leaf ({1} of all-gather-start's tuple, all-reduce-start's value), which
// the exchange fills in place, so nothing copies it. That buffer stays live
// through the done's readers (ard's through n; agd's is output {1}), and
// the independent checker finds no value overwritten while live.
TEST(BufferAssignment, CollectiveDoneIsItsStartsResult) {
  auto m = MustParse(R"(
HloModule dones, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p = f32[256] parameter(0)
  q = f32[256] parameter(1)
  ars = f32[256] all-reduce-start(p), replica_groups={}, to_apply=add
  ags = (f32[256], f32[512]) all-gather-start(q), replica_groups={}, dimensions={0}
  e = f32[256] exponential(q)
  ard = f32[256] all-reduce-done(ars)
  agd = f32[512] all-gather-done(ags)
  n = f32[256] negate(ard)
  x = f32[256] add(n, e)
  ROOT t = (f32[256], f32[512]) tuple(x, agd)
})");
  ASSERT_NE(m, nullptr);
  auto a = AssignBuffers(*m);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(Slice(*a, *m, "ard"), Slice(*a, *m, "ars"));
  EXPECT_EQ(Slice(*a, *m, "agd"), Slice(*a, *m, "ags", {1}));
  EXPECT_EQ(Slice(*a, *m, "t", {1}), Slice(*a, *m, "ags", {1}));
  EXPECT_EQ(Slice(*a, *m, "ard").size, 1024);
  EXPECT_EQ(Slice(*a, *m, "agd").size, 2048);
  const thunks::Allocation& out1 = a->allocations()[Slice(*a, *m, "agd").allocation];
  EXPECT_EQ(out1.output, ShapeIndex{1});
  checker::CheckResult check = checker::CheckAssignment(*a);
  EXPECT_TRUE(check.ok()) << (check.errors.empty() ? "" : check.errors[0]);
}

// Parameters and constants that are returned keep their own allocation,
// which also takes the output role; nothing goes into a temp arena.
TEST(BufferAssignment, ParametersAndConstantsStayOutOfArena) {
  auto m = MustParse(R"(
HloModule passthrough
ENTRY main {
  p = f32[4] parameter(0)
  k = f32[4] constant({1, 2, 3, 4})
  s = f32[4] add(p, k)
  ROOT r = (f32[4], f32[4], f32[4]) tuple(s, p, k)
})");
  ASSERT_NE(m, nullptr);
  auto a = AssignBuffers(*m);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->allocations().size(), 3u);
  const auto& allocs = a->allocations();
  EXPECT_TRUE(allocs[0].is_parameter());
  EXPECT_EQ(allocs[0].output, ShapeIndex{1});
  EXPECT_EQ(allocs[1].constant, 0);
  EXPECT_EQ(allocs[1].output, ShapeIndex{2});
  EXPECT_EQ(allocs[2].output, ShapeIndex{0});
  EXPECT_FALSE(allocs[2].is_parameter());
  EXPECT_EQ(a->temp_allocation(), -1);
  EXPECT_EQ(a->peak_temp_bytes(), 0);
  EXPECT_EQ(Slice(*a, *m, "r", {1}), (thunks::BufferSlice{0, 0, 16}));
  ASSERT_EQ(a->constants().size(), 1u);
  EXPECT_EQ(a->constants()[0]->name(), "k");
}

// Tuple parameters get one allocation per leaf.
TEST(BufferAssignment, TupleParameterLeaves) {
  auto m = MustParse(R"(
HloModule tparam
ENTRY main {
  p = (f32[2], s32[4]) parameter(0)
  x = s32[4] get-tuple-element(p), index=1
  ROOT y = s32[4] negate(x)
})");
  ASSERT_NE(m, nullptr);
  auto a = AssignBuffers(*m);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->allocations().size(), 3u);
  EXPECT_EQ(a->allocations()[0].parameter, (thunks::ParameterRef{0, {0}}));
  EXPECT_EQ(a->allocations()[0].size, 8);
  EXPECT_EQ(a->allocations()[1].parameter, (thunks::ParameterRef{0, {1}}));
  EXPECT_EQ(a->allocations()[1].size, 16);
  EXPECT_EQ(Slice(*a, *m, "x"), (thunks::BufferSlice{1, 0, 16}));
}

TEST(BufferAssignment, ReportListsAllocationsAndBounds) {
  auto m = MustParse(R"(
HloModule chain
ENTRY main {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  ROOT b = f32[256] negate(a)
})");
  ASSERT_NE(m, nullptr);
  auto a = AssignBuffers(*m);
  ASSERT_TRUE(a.ok()) << a.status().message();
  std::string report = a->ToString();
  EXPECT_NE(report.find("a{} f32[256] at a2[0:1024] live [1, 2]"), std::string::npos) << report;
  EXPECT_NE(report.find("peak 1024 bytes, lower bound 1024 bytes"), std::string::npos) << report;
}

TEST(Schedule, VerifyRejectsOperandAfterUser) {
  auto m = MustParse(R"(
HloModule chain
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  ROOT b = f32[4] negate(a)
})");
  ASSERT_NE(m, nullptr);
  SequentialSchedule s = PostOrderSchedule(*m->entry());
  ASSERT_EQ(s.size(), 3);
  EXPECT_TRUE(VerifySchedule(s).ok());
  std::swap(s.sequence[1], s.sequence[2]);
  s.Reindex();
  EXPECT_FALSE(VerifySchedule(s).ok());
  EXPECT_FALSE(AssignBuffers(*m->entry(), s).ok());
  s.sequence.pop_back();
  s.Reindex();
  EXPECT_FALSE(VerifySchedule(s).ok());
}

}  // namespace
}  // namespace kiln::pipeline
