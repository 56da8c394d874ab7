// WhileLoopTripCount: counts worked out by hand for each comparison form,
// and loops it must leave alone.
#include "compiler/passes/while_loop_trip_count.h"

#include <gtest/gtest.h>

#include "compiler/hlo/parser.h"

namespace kiln::passes {
namespace {

// A loop over (s32 i, f32[2] v): i starts at `init`, the body adds `step`
// to i, the condition is `cond_expr` over i (written with i and n).
std::string Loop(const std::string& type, const std::string& init, const std::string& step,
                 const std::string& compare, const std::string& bound) {
  return "HloModule m\ncond {\n  p = (" + type + "[], f32[2]) parameter(0)\n  i = " + type +
         "[] get-tuple-element(p), index=0\n  n = " + type + "[] constant(" + bound + ")\n  ROOT c = pred[] " +
         compare + "\n}\nbody {\n  p = (" + type + "[], f32[2]) parameter(0)\n  i = " + type +
         "[] get-tuple-element(p), index=0\n  v = f32[2] get-tuple-element(p), index=1\n  s = " + type +
         "[] constant(" + step + ")\n  i2 = " + type + "[] add(i, s)\n  ROOT t = (" + type +
         "[], f32[2]) tuple(i2, v)\n}\nENTRY e {\n  x = f32[2] parameter(0)\n  z = " + type + "[] constant(" +
         init + ")\n  t = (" + type + "[], f32[2]) tuple(z, x)\n  ROOT w = (" + type +
         "[], f32[2]) while(t), condition=cond, body=body\n}\n";
}

std::optional<int64_t> Count(const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return std::nullopt;
  return ComputeWhileTripCount(*(*module)->entry()->root());
}

TEST(WhileLoopTripCount, CountsEachComparisonForm) {
  EXPECT_EQ(Count(Loop("s32", "0", "1", "compare(i, n), direction=LT", "7")), 7);
  EXPECT_EQ(Count(Loop("s32", "0", "3", "compare(i, n), direction=LT", "10")), 4);   // 0 3 6 9
  EXPECT_EQ(Count(Loop("s32", "0", "3", "compare(i, n), direction=LE", "9")), 4);    // 0 3 6 9
  EXPECT_EQ(Count(Loop("s32", "10", "-2", "compare(i, n), direction=GT", "0")), 5);  // 10 8 6 4 2
  EXPECT_EQ(Count(Loop("s32", "10", "-2", "compare(i, n), direction=GE", "0")), 6);  // ... 0
  EXPECT_EQ(Count(Loop("s32", "2", "2", "compare(i, n), direction=NE", "12")), 5);   // 2 4 6 8 10
  EXPECT_EQ(Count(Loop("s32", "0", "1", "compare(n, i), direction=GT", "5")), 5);    // n > i
  EXPECT_EQ(Count(Loop("s64", "5", "1", "compare(i, n), direction=LT", "5")), 0);
  EXPECT_EQ(Count(Loop("u8", "250", "1", "compare(i, n), direction=LT", "255")), 5);
}

TEST(WhileLoopTripCount, LeavesUnprovableLoopsAlone) {
  // Never terminates without wrap-around, steps past the bound, or overflows.
  EXPECT_EQ(Count(Loop("s32", "0", "-1", "compare(i, n), direction=LT", "7")), std::nullopt);
  EXPECT_EQ(Count(Loop("s32", "1", "2", "compare(i, n), direction=NE", "10")), std::nullopt);
  EXPECT_EQ(Count(Loop("s8", "0", "1", "compare(i, n), direction=LE", "127")), std::nullopt);
  // The bound is not a constant.
  std::string text = Loop("s32", "0", "1", "compare(i, n), direction=LT", "7");
  text.replace(text.find("n = s32[] constant(7)"), 21, "n = s32[] add(i, i)");
  EXPECT_EQ(Count(text), std::nullopt);
}

TEST(WhileLoopTripCount, RecordsTheCountAsBackendConfig) {
  auto module = hlo::ParseHloModule(Loop("s32", "0", "1", "compare(i, n), direction=LT", "7"));
  ASSERT_TRUE(module.ok());
  WhileLoopTripCount pass;
  auto changed = pass.Run(**module);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  const hlo::Attribute* config = (*module)->entry()->root()->FindAttribute("backend_config");
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(std::get<hlo::RawAttr>(config->value).text, "{\"known_trip_count\":{\"n\":\"7\"}}");
  // A second run finds nothing new.
  auto again = pass.Run(**module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

}  // namespace
}  // namespace kiln::passes
