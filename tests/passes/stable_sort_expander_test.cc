// StableSortExpander: a stable sort gets a position operand and a
// comparator that breaks ties by it. Checked with the reference evaluator
// on inputs with many ties (s32 keys in [-8, 8), bf16 keys):
//  * the module computes the same values before and after the pass;
//  * after the pass the comparator is a total order, so sorting the
//    reversed operands (the position operand reversed with them) gives the
//    same result: any sort algorithm, stable or not, agrees. The same
//    check on the module before the pass fails (ties come out reversed),
//    which shows the check can fail.
#include <gtest/gtest.h>

#include <random>

#include "compiler/evaluator/evaluator.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/passes.h"
#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// Payload f32 values sorted by s32 keys (ties everywhere), along dimension 1.
constexpr char kKeyValue[] = R"(HloModule m

lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT l = pred[] compare(a, b), direction=LT
}

ENTRY e {
  k = s32[3,200] parameter(0)
  v = f32[3,200] parameter(1)
  s = (s32[3,200], f32[3,200]) sort(k, v), dimensions={1}, is_stable=true, to_apply=lt
  ROOT r = f32[3,200] get-tuple-element(s), index=1
}
)";

// One bf16 operand sorted along dimension 0 (equal keys are
// indistinguishable, so only the values-before-and-after check applies).
constexpr char kSingle[] = R"(HloModule m

gt {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GT
}

ENTRY e {
  x = bf16[64,5] parameter(0)
  ROOT s = bf16[64,5] sort(x), dimensions={0}, is_stable=true, to_apply=gt
}
)";

// argsort: the iota operand is reused, no operand added.
constexpr char kArgsort[] = R"(HloModule m

lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT l = pred[] compare(a, b), direction=LT
}

ENTRY e {
  k = s32[300] parameter(0)
  i = s32[300] iota(), iota_dimension=0
  s = (s32[300], s32[300]) sort(k, i), dimensions={0}, is_stable=true, to_apply=lt
  ROOT r = s32[300] get-tuple-element(s), index=1
}
)";

HloInstruction* FindSort(const hlo::HloModule& module) {
  for (HloInstruction* inst : module.entry()->instructions())
    if (inst->opcode() == HloOpcode::kSort) return inst;
  return nullptr;
}

// Wraps every operand of the entry's sort in a reverse along its sort
// dimension.
void ReverseSortOperands(hlo::HloModule& module) {
  HloInstruction* sort = FindSort(module);
  ASSERT_NE(sort, nullptr);
  for (int64_t i = 0; i < sort->operand_count(); ++i) {
    HloInstruction* op = sort->operand(i);
    HloInstruction* rev = AddInstruction(*module.entry(), HloOpcode::kReverse, op->shape(), {op},
                                         op->name() + ".reversed");
    rev->SetAttribute("dimensions", sort->dimensions());
    sort->ReplaceOperand(i, rev);
  }
}

Literal Evaluate(const hlo::HloModule& module, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Literal> args = test_support::RandomArguments(module, rng);
  StatusOr<Literal> r = hlo::Evaluator().Evaluate(module, args);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : Literal();
}

// The module's values are the same after sorting reversed operands.
bool ReversalInvariant(const std::string& text, bool expand) {
  auto module = test_support::MustParse(text);
  auto reversed = test_support::MustParse(text);
  if (!module || !reversed) return false;
  if (expand) {
    StableSortExpander pass;
    test_support::MustRunPass(pass, *module);
    test_support::MustRunPass(pass, *reversed);
  }
  ReverseSortOperands(*reversed);
  EXPECT_TRUE(hlo::VerifyModule(*reversed).ok());
  return Evaluate(*module, 7) == Evaluate(*reversed, 7);
}

TEST(StableSortExpander, AddsPositionOperandAndKeepsValues) {
  auto before = test_support::MustParse(kKeyValue);
  auto after = test_support::MustParse(kKeyValue);
  ASSERT_TRUE(before && after);
  StableSortExpander pass;
  EXPECT_TRUE(test_support::MustRunPass(pass, *after));
  const HloInstruction* sort = FindSort(*after);
  ASSERT_NE(sort, nullptr);
  EXPECT_EQ(sort->operand_count(), 3);
  EXPECT_EQ(sort->operand(2)->opcode(), HloOpcode::kIota);
  EXPECT_EQ(sort->operand(2)->shape().element_type(), ElementType::kS32);
  EXPECT_EQ(sort->operand(2)->GetInt("iota_dimension", -1), 1);
  EXPECT_FALSE(sort->GetBool("is_stable", true));
  test_support::ExpectSameResults(*before, *after, 5);
}

TEST(StableSortExpander, ComparatorBecomesATotalOrder) {
  EXPECT_TRUE(ReversalInvariant(kKeyValue, /*expand=*/true));
  EXPECT_TRUE(ReversalInvariant(kArgsort, /*expand=*/true));
  // Without the pass, ties come out in the reversed order: the check fails.
  EXPECT_FALSE(ReversalInvariant(kKeyValue, /*expand=*/false));
  EXPECT_FALSE(ReversalInvariant(kArgsort, /*expand=*/false));
}

TEST(StableSortExpander, ReusesAnIotaOperand) {
  auto before = test_support::MustParse(kArgsort);
  auto after = test_support::MustParse(kArgsort);
  ASSERT_TRUE(before && after);
  StableSortExpander pass;
  EXPECT_TRUE(test_support::MustRunPass(pass, *after));
  EXPECT_EQ(FindSort(*after)->operand_count(), 2);
  test_support::ExpectSameResults(*before, *after, 5);
}

// JAX's argsort: the positions are a broadcast of a 1-D iota.
TEST(StableSortExpander, ReusesABroadcastIotaOperand) {
  std::string text = R"(HloModule m

lt {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT l = pred[] compare(a, b), direction=LT, type=TOTALORDER
}

ENTRY e {
  k = bf16[4,100] parameter(0)
  i = s32[100] iota(), iota_dimension=0
  b = s32[4,100] broadcast(i), dimensions={1}
  s = (bf16[4,100], s32[4,100]) sort(k, b), dimensions={1}, is_stable=true, to_apply=lt
  ROOT r = s32[4,100] get-tuple-element(s), index=1
}
)";
  auto before = test_support::MustParse(text);
  auto after = test_support::MustParse(text);
  ASSERT_TRUE(before && after);
  StableSortExpander pass;
  EXPECT_TRUE(test_support::MustRunPass(pass, *after));
  EXPECT_EQ(FindSort(*after)->operand_count(), 2);
  test_support::ExpectSameResults(*before, *after, 5);
  EXPECT_TRUE(ReversalInvariant(text, /*expand=*/true));
  EXPECT_FALSE(ReversalInvariant(text, /*expand=*/false));
  // A broadcast along the other dimension is not positions along the sort
  // dimension: a fresh iota is added.
  std::string other = text;
  other.replace(other.find("k = bf16[4,100]"), 15, "k = bf16[100,4]");
  other.replace(other.find("b = s32[4,100] broadcast(i), dimensions={1}"), 43,
                "b = s32[100,4] broadcast(i), dimensions={0}");
  for (const char* from : {"(bf16[4,100], s32[4,100])", "ROOT r = s32[4,100]"}) {
    std::string f = from, t = f;
    t.replace(t.find("[4,100]"), 7, "[100,4]");
    if (f[0] == '(') t.replace(t.find("[4,100]"), 7, "[100,4]");
    other.replace(other.find(f), f.size(), t);
  }
  auto added = test_support::MustParse(other);
  ASSERT_TRUE(added);
  EXPECT_TRUE(test_support::MustRunPass(pass, *added));
  EXPECT_EQ(FindSort(*added)->operand_count(), 3);
}

TEST(StableSortExpander, SingleOperandSortKeepsItsShape) {
  auto before = test_support::MustParse(kSingle);
  auto after = test_support::MustParse(kSingle);
  ASSERT_TRUE(before && after);
  StableSortExpander pass;
  EXPECT_TRUE(test_support::MustRunPass(pass, *after));
  EXPECT_TRUE(after->entry()->root()->shape().IsArray());
  test_support::ExpectSameResults(*before, *after, 5);
}

TEST(StableSortExpander, LeavesUnstableSortsAlone) {
  std::string text = kSingle;
  text.replace(text.find(", is_stable=true"), 16, "");
  auto module = test_support::MustParse(text);
  ASSERT_TRUE(module);
  StableSortExpander pass;
  EXPECT_FALSE(test_support::MustRunPass(pass, *module));
}

}  // namespace
}  // namespace kiln::passes
