// TopKCustomCallRewriter: XLA's "TopK" custom-call with a GT (LT)
// comparator becomes topk(largest=true (false)), k from the result shape;
// other comparators stay. Checked against hand-written expected modules.
#include "compiler/passes/topk_custom_call_rewriter.h"

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
            /*evaluate=*/false);
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
            /*evaluate=*/false);
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

}  // namespace
}  // namespace kiln::passes
