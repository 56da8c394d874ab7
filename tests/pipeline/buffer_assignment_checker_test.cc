// The independent buffer-assignment checker (buffer_assignment_checker.h):
// hand-built assignments it must reject or accept, then every sequential
// computation of every corpus module, after kiln's optimization pipeline,
// under both the post-order and the memory-minimizing schedule.
#include "tests/pipeline/buffer_assignment_checker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "compiler/hlo/parser.h"
#include "compiler/passes/optimization_pipeline.h"
#include "compiler/pipeline/list_scheduler.h"
#include "compiler/passes/sequential_computations.h"
#include "tests/support/corpus_files.h"
#include "tests/support/must_parse.h"

namespace kiln::pipeline {
namespace {

using checker::AssignmentView;
using passes::SequentialComputations;
using checker::CheckAssignment;
using test_support::MustParse;
using thunks::Allocation;
using thunks::BufferSlice;

// p -> a -> b -> c, f32[256] (1024 bytes) each; schedule p 0, a 1, b 2, c 3.
// a is live [1, 2] (b reads it), b [2, 3], c is the root.
constexpr const char* kChain = R"(
HloModule chain
ENTRY main {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  b = f32[256] negate(a)
  ROOT c = f32[256] exponential(b)
})";

// A hand-built assignment of kChain: allocation 0 parameter, 1 output,
// 2 a 2048-byte arena with a at `a_offset` and b at `b_offset`.
struct HandAssignment {
  SequentialSchedule schedule;
  std::vector<Allocation> allocations;
  std::map<std::string, BufferSlice> slices;

  AssignmentView View() {
    return {&schedule, &allocations,
            [this](const hlo::HloInstruction* inst, const ShapeIndex&) -> StatusOr<BufferSlice> {
              auto it = slices.find(inst->name());
              if (it == slices.end()) return Error("no slice");
              return it->second;
            },
            2};
  }
};

// Allocation 0 parameter 0 and 1 the output, `buffer_size` bytes each;
// 2 an `arena_size`-byte arena.
std::vector<Allocation> ParamOutputArena(int64_t buffer_size, int64_t arena_size) {
  Allocation param;
  param.size = buffer_size;
  param.parameter = thunks::ParameterRef{0, {}};
  Allocation output;
  output.size = buffer_size;
  output.output = ShapeIndex{};
  Allocation arena;
  arena.size = arena_size;
  return {param, output, arena};
}

HandAssignment Chain(const hlo::HloModule& m, int64_t a_offset, int64_t b_offset) {
  HandAssignment h;
  h.schedule = PostOrderSchedule(*m.entry());
  h.allocations = ParamOutputArena(1024, 2048);
  h.slices = {{"p", {0, 0, 1024}}, {"a", {2, a_offset, 1024}}, {"b", {2, b_offset, 1024}}, {"c", {1, 0, 1024}}};
  return h;
}

TEST(BufferAssignmentChecker, AcceptsHandBuiltValidAssignment) {
  auto m = MustParse(kChain);
  ASSERT_NE(m, nullptr);
  HandAssignment h = Chain(*m, 0, 1024);
  auto result = CheckAssignment(h.View());
  EXPECT_TRUE(result.ok()) << result.errors.front();
  EXPECT_EQ(result.values, 4);
  EXPECT_EQ(result.temp_live_peak, 2048);  // a and b both live at position 2
}

// a [1, 2] and b [2, 3] overlap at position 2 (b reads a while writing
// itself), so they may not share bytes.
TEST(BufferAssignmentChecker, RejectsOverlappingLiveBuffersAtTheSameOffset) {
  auto m = MustParse(kChain);
  ASSERT_NE(m, nullptr);
  HandAssignment h = Chain(*m, 0, 0);
  auto result = CheckAssignment(h.View());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.errors.front().find("share bytes"), std::string::npos) << result.errors.front();
  // Partial overlap (one 64-byte granule) is caught as well.
  h = Chain(*m, 0, 960);
  result = CheckAssignment(h.View());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.errors.front().find("share bytes"), std::string::npos) << result.errors.front();
}

TEST(BufferAssignmentChecker, RejectsOutOfBoundsAndWrongRoles) {
  auto m = MustParse(kChain);
  ASSERT_NE(m, nullptr);
  HandAssignment h = Chain(*m, 0, 1088);  // b ends at 2112 > 2048
  auto result = CheckAssignment(h.View());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.errors.front().find("out of bounds"), std::string::npos) << result.errors.front();

  h = Chain(*m, 0, 1024);
  h.slices["c"] = {2, 0, 1024};  // the root in the arena, not an output
  result = CheckAssignment(h.View());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.errors.front().find("output"), std::string::npos) << result.errors.front();

  h = Chain(*m, 0, 1024);
  h.slices["a"] = {0, 0, 1024};  // a temporary overwriting the parameter
  result = CheckAssignment(h.View());
  ASSERT_FALSE(result.ok());
}

// Forwarding: g = get-tuple-element(t) must use x's slice, and z reading g
// at position 5 keeps x live until then, so y (defined at 3) may not reuse
// x's bytes.
TEST(BufferAssignmentChecker, ForwardedReadsExtendLiveness) {
  auto m = MustParse(R"(
HloModule fwd
ENTRY main {
  p = f32[16] parameter(0)
  x = f32[16] negate(p)
  t = (f32[16]) tuple(x)
  y = f32[16] exponential(p)
  g = f32[16] get-tuple-element(t), index=0
  ROOT z = f32[16] add(g, y)
})");
  ASSERT_NE(m, nullptr);
  HandAssignment h;
  h.schedule.computation = m->entry();
  for (const char* name : {"p", "x", "t", "y", "g", "z"}) h.schedule.sequence.push_back(m->entry()->FindInstruction(name));
  h.schedule.Reindex();
  h.allocations = ParamOutputArena(64, 128);
  h.slices = {{"p", {0, 0, 64}}, {"x", {2, 0, 64}}, {"t", {2, 0, 64}},
              {"y", {2, 64, 64}}, {"g", {2, 0, 64}}, {"z", {1, 0, 64}}};
  auto ok = CheckAssignment(h.View());
  EXPECT_TRUE(ok.ok()) << ok.errors.front();
  h.slices["y"] = {2, 0, 64};  // x is still live (z reads it through g at 5)
  auto bad = CheckAssignment(h.View());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.errors.front().find("share bytes"), std::string::npos) << bad.errors.front();
  h.slices["y"] = {2, 64, 64};
  h.slices["g"] = {2, 64, 64};  // a forwarder with its own slice
  bad = CheckAssignment(h.View());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.errors.front().find("forwards"), std::string::npos) << bad.errors.front();
}

// A real assignment, corrupted: move one temporary onto another that is
// live at the same time.
TEST(BufferAssignmentChecker, CatchesCorruptedRealAssignment) {
  auto m = MustParse(R"(
HloModule diamond
ENTRY main {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  b = f32[256] negate(p)
  c = f32[256] add(a, b)
  ROOT d = f32[256] exponential(c)
})");
  ASSERT_NE(m, nullptr);
  auto a = AssignBuffers(*m->entry(), PostOrderSchedule(*m->entry()));
  ASSERT_TRUE(a.ok()) << a.status().message();
  auto result = CheckAssignment(*a);
  ASSERT_TRUE(result.ok()) << result.errors.front();
  AssignmentView view = checker::ViewOf(*a);
  const hlo::HloInstruction* ia = m->entry()->FindInstruction("a");
  const hlo::HloInstruction* ib = m->entry()->FindInstruction("b");
  view.slice_for = [&](const hlo::HloInstruction* inst, const ShapeIndex& index) {
    return a->SliceFor(inst == ib ? ia : inst, index);
  };
  result = CheckAssignment(view);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.errors.front().find("share bytes"), std::string::npos) << result.errors.front();
}

// ---- the corpus ------------------------------------------------------------

struct Ratio {
  double ratio;
  std::string where;
};

TEST(BufferAssignmentChecker, EveryCorpusComputationUnderBothSchedules) {
  auto files = test_support::CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "corpus not found";
  int parsed = 0, unoptimized = 0, computations = 0;
  std::vector<Ratio> ratios[2];
  for (const std::string& file : files) {
    auto module = hlo::ParseHloModuleFile(file);
    if (!module.ok()) continue;  // the parser's tests own parse failures
    ++parsed;
    if (!passes::RunOptimizationPipeline(**module).ok()) {
      // The pipeline may leave the module half-rewritten: start again.
      ++unoptimized;
      module = hlo::ParseHloModuleFile(file);
      ASSERT_TRUE(module.ok());
    }
    for (const hlo::HloComputation* comp : SequentialComputations(**module)) {
      ++computations;
      for (int which = 0; which < 2; ++which) {
        SequentialSchedule schedule = which == 0 ? PostOrderSchedule(*comp) : MemoryMinimizingSchedule(*comp);
        BufferAssignmentOptions options;
        if (comp == (*module)->entry()) options.aliases = (*module)->config().input_output_alias;
        auto a = AssignBuffers(*comp, std::move(schedule), options);
        if (!a.ok()) {
          ADD_FAILURE() << file << " " << comp->name() << ": " << a.status().message();
          continue;
        }
        auto result = CheckAssignment(*a, options.aliases);
        if (!result.ok()) {
          ADD_FAILURE() << file << " " << comp->name() << (which ? " (memory-minimizing)" : " (post-order)")
                        << ": " << result.errors.front();
          continue;
        }
        if (a->temp_lower_bound() > 0)
          ratios[which].push_back({static_cast<double>(a->peak_temp_bytes()) / a->temp_lower_bound(),
                                   file + " " + comp->name()});
      }
    }
  }
  EXPECT_GT(parsed, static_cast<int>(files.size()) / 2);
  std::printf("checked %d computations of %d modules (%d left unoptimized)\n", computations, parsed, unoptimized);
  for (int which = 0; which < 2; ++which) {
    auto& r = ratios[which];
    std::sort(r.begin(), r.end(), [](const Ratio& x, const Ratio& y) { return x.ratio < y.ratio; });
    if (r.empty()) continue;
    std::printf("%s: %zu with temporaries, arena/lower-bound median %.4f, p90 %.4f, max %.4f (%s)\n",
                which ? "memory-minimizing" : "post-order", r.size(), r[r.size() / 2].ratio,
                r[r.size() * 9 / 10].ratio, r.back().ratio, r.back().where.c_str());
    for (const Ratio& x : r) EXPECT_LE(x.ratio, 1.10) << x.where;
  }
}

}  // namespace
}  // namespace kiln::pipeline
