// TopKCustomCallRewriter: XLA's "TopK" custom-call with a GT (LT)
// comparator becomes topk(largest=true (false)), k from the result shape;
// other comparators stay. Checked against hand-written expected modules.
#include "compiler/passes/topk_custom_call_rewriter.h"

#include <cmath>

#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::CheckPass;

constexpr char kComparators[] = R"(HloModule m

gt {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  ROOT c = pred[] compare(p0, p1), direction=GT, type=TOTALORDER
}

lt {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  ROOT c = pred[] compare(p0, p1), direction=LT
}

odd {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  ROOT c = pred[] compare(p2, p3), direction=LT
}
)";

TEST(TopKCustomCallRewriter, GreaterThanIsLargest) {
  TopKCustomCallRewriter pass;
  CheckPass(pass, std::string(kComparators) + R"(
ENTRY e {
  x = f32[4,128] parameter(0)
  ROOT t = (f32[4,10], s32[4,10]) custom-call(x), custom_call_target="TopK", called_computations={gt}
}
)",
            true, std::string(kComparators) + R"(
ENTRY e {
  x = f32[4,128] parameter(0)
  ROOT t.topk = (f32[4,10], s32[4,10]) topk(x), k=10, largest=true
}
)",
            /*evaluate=*/true);  // the evaluator runs the custom-call by its comparator
}

TEST(TopKCustomCallRewriter, LessThanIsSmallest) {
  TopKCustomCallRewriter pass;
  CheckPass(pass, std::string(kComparators) + R"(
ENTRY e {
  x = f32[64] parameter(0)
  ROOT t = (f32[3], s32[3]) custom-call(x), custom_call_target="TopK", called_computations={lt}
}
)",
            true, std::string(kComparators) + R"(
ENTRY e {
  x = f32[64] parameter(0)
  ROOT t.topk = (f32[3], s32[3]) topk(x), k=3, largest=false
}
)",
            /*evaluate=*/true);
}

TEST(TopKCustomCallRewriter, OtherComparatorsStay) {
  TopKCustomCallRewriter pass;
  CheckPass(pass, std::string(kComparators) + R"(
ENTRY e {
  x = f32[64] parameter(0)
  ROOT t = (f32[3], s32[3]) custom-call(x), custom_call_target="TopK", called_computations={odd}
}
)",
            false, "", /*evaluate=*/false);
}

// The evaluator's TopK custom-call, by hand: GT in total order puts NaN
// first and keeps equal values in index order; the odd comparator (index
// order, ascending) keeps the first k positions whatever the values.
TEST(TopKCustomCallRewriter, EvaluatorRunsTheComparator) {
  auto module = test_support::MustParse(std::string(kComparators) + R"(
ENTRY e {
  x = f32[5] parameter(0)
  g = (f32[3], s32[3]) custom-call(x), custom_call_target="TopK", called_computations={gt}
  o = (f32[2], s32[2]) custom-call(x), custom_call_target="TopK", called_computations={odd}
  ROOT t = ((f32[3], s32[3]), (f32[2], s32[2])) tuple(g, o)
}
)");
  if (!module) return;
  Literal x(Shape(ElementType::kF32, {5}));
  const double xs[5] = {3, NAN, 1, 3, -INFINITY};
  for (int i = 0; i < 5; ++i) x.SetF64(i, xs[i]);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  StatusOr<Literal> r = hlo::Evaluator().Evaluate(*module, args);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Literal& g = r->element(0);
  EXPECT_TRUE(std::isnan(g.element(0).GetF64(0)));
  EXPECT_EQ(g.element(0).GetF64(1), 3);
  EXPECT_EQ(g.element(0).GetF64(2), 3);
  EXPECT_EQ(g.element(1).GetS64(0), 1);
  EXPECT_EQ(g.element(1).GetS64(1), 0);
  EXPECT_EQ(g.element(1).GetS64(2), 3);
  const Literal& o = r->element(1);
  EXPECT_EQ(o.element(1).GetS64(0), 0);
  EXPECT_EQ(o.element(1).GetS64(1), 1);
  EXPECT_EQ(o.element(0).GetF64(0), 3);
}

}  // namespace
}  // namespace kiln::passes
