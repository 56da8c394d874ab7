// RadixSortRewriter: sorts whose comparator is one LT/GT compare of the
// key's parameters (or of JAX's canonicalized floats) become the
// __kiln$radix_sort call with the direction and key order written out by
// hand here; a sort along an outer dimension is transposed there and back;
// every other comparator, operand count or key type stays a sort.
#include "compiler/passes/radix_sort_rewriter.h"

#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::CheckPass;

// A module of `comparator` and an entry `body`.
std::string Module(const std::string& comparator, const std::string& body) {
  return "HloModule m\n\n" + comparator + "\nENTRY e {\n" + body + "}\n";
}

TEST(RadixSortRewriter, KeysOnlyAscendingTotalOrder) {
  RadixSortRewriter pass;
  const std::string lt =
      "lt {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n"
      "  ROOT c = pred[] compare(p0, p1), direction=LT, type=TOTALORDER\n}\n";
  CheckPass(pass, Module(lt, "  x = f32[4,9] parameter(0)\n  ROOT s = f32[4,9] sort(x), dimensions={1}, to_apply=lt\n"),
            true,
            Module(lt, "  x = f32[4,9] parameter(0)\n"
                       "  s.radix_sort = (f32[4,9]) custom-call(x), custom_call_target=\"__kiln$radix_sort\", "
                       "descending=false, radix_order=\"float-total\"\n"
                       "  ROOT s.sorted = f32[4,9] get-tuple-element(s.radix_sort), index=0\n"),
            /*evaluate=*/false);
}

// The key is operand 1 and its parameters are swapped: LT on (p3, p2) is
// descending. Results come back in the sort's operand order.
TEST(RadixSortRewriter, KeySecondSwappedParametersIsDescending) {
  RadixSortRewriter pass;
  const std::string cmp =
      "cmp {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n  p2 = s32[] parameter(2)\n"
      "  p3 = s32[] parameter(3)\n  ROOT c = pred[] compare(p3, p2), direction=LT\n}\n";
  CheckPass(pass,
            Module(cmp, "  v = f32[8] parameter(0)\n  k = s32[8] parameter(1)\n"
                        "  ROOT s = (f32[8], s32[8]) sort(v, k), dimensions={0}, is_stable=true, to_apply=cmp\n"),
            true,
            Module(cmp, "  v = f32[8] parameter(0)\n  k = s32[8] parameter(1)\n"
                        "  s.radix_sort = (s32[8], f32[8]) custom-call(k, v), custom_call_target=\"__kiln$radix_sort\", "
                        "descending=true, radix_order=\"signed\"\n"
                        "  s.sorted = s32[8] get-tuple-element(s.radix_sort), index=0\n"
                        "  s.sorted.1 = f32[8] get-tuple-element(s.radix_sort), index=1\n"
                        "  ROOT s.result = (f32[8], s32[8]) tuple(s.sorted.1, s.sorted)\n"),
            /*evaluate=*/false);
}

// Sorting dimension 0 of [3,5]: transposed to [5,3], sorted, transposed back.
TEST(RadixSortRewriter, OuterDimensionIsTransposedToMinor) {
  RadixSortRewriter pass;
  const std::string gt =
      "gt {\n  p0 = u16[] parameter(0)\n  p1 = u16[] parameter(1)\n  ROOT c = pred[] compare(p0, p1), direction=GT\n}\n";
  CheckPass(pass, Module(gt, "  x = u16[3,5] parameter(0)\n  ROOT s = u16[3,5] sort(x), dimensions={0}, to_apply=gt\n"),
            true,
            Module(gt, "  x = u16[3,5] parameter(0)\n"
                       "  s.to_minor = u16[5,3] transpose(x), dimensions={1,0}\n"
                       "  s.radix_sort = (u16[5,3]) custom-call(s.to_minor), custom_call_target=\"__kiln$radix_sort\", "
                       "descending=true, radix_order=\"unsigned\"\n"
                       "  s.sorted = u16[5,3] get-tuple-element(s.radix_sort), index=0\n"
                       "  ROOT s.from_minor = u16[3,5] transpose(s.sorted), dimensions={1,0}\n"),
            /*evaluate=*/false);
}

// JAX's argsort comparator: -0 and NaN canonicalized, TOTALORDER.
TEST(RadixSortRewriter, JaxCanonicalizedFloatsAreNumpyOrder) {
  RadixSortRewriter pass;
  const std::string cmp =
      "cmp {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n  i = s32[] parameter(2)\n"
      "  j = s32[] parameter(3)\n  nan = bf16[] constant(nan)\n  zero = bf16[] constant(0)\n"
      "  ne.a = pred[] compare(a, a), direction=NE\n  eq.a = pred[] compare(a, zero), direction=EQ\n"
      "  z.a = bf16[] select(eq.a, zero, a)\n  c.a = bf16[] select(ne.a, nan, z.a)\n"
      "  ne.b = pred[] compare(b, b), direction=NE\n  eq.b = pred[] compare(b, zero), direction=EQ\n"
      "  z.b = bf16[] select(eq.b, zero, b)\n  c.b = bf16[] select(ne.b, nan, z.b)\n"
      "  ROOT lt = pred[] compare(c.a, c.b), direction=LT, type=TOTALORDER\n}\n";
  CheckPass(pass,
            Module(cmp, "  x = bf16[2,6] parameter(0)\n  i = s32[2,6] iota(), iota_dimension=1\n"
                        "  ROOT s = (bf16[2,6], s32[2,6]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp\n"),
            true,
            Module(cmp, "  x = bf16[2,6] parameter(0)\n  i = s32[2,6] iota(), iota_dimension=1\n"
                        "  s.radix_sort = (bf16[2,6], s32[2,6]) custom-call(x, i), "
                        "custom_call_target=\"__kiln$radix_sort\", descending=false, radix_order=\"float-numpy\"\n"
                        "  s.sorted = bf16[2,6] get-tuple-element(s.radix_sort), index=0\n"
                        "  s.sorted.1 = s32[2,6] get-tuple-element(s.radix_sort), index=1\n"
                        "  ROOT s.result = (bf16[2,6], s32[2,6]) tuple(s.sorted, s.sorted.1)\n"),
            /*evaluate=*/false);
}

// Comparators and operands a radix sort does not compute: these stay sorts.
TEST(RadixSortRewriter, OtherSortsStay) {
  RadixSortRewriter pass;
  const std::string header = "c {\n  p0 = s32[] parameter(0)\n  p1 = s32[] parameter(1)\n";
  const std::string sort = "  x = s32[10] parameter(0)\n  ROOT s = s32[10] sort(x), dimensions={0}, to_apply=c\n";
  for (const std::string root : {"  ROOT r = pred[] compare(p0, p1), direction=LE\n",  // not a strict order
                                 "  ROOT r = pred[] compare(p0, p0), direction=LT\n",  // one parameter
                                 "  ROOT r = pred[] compare(p0, p1), direction=NE\n",
                                 "  n0 = s32[] negate(p0)\n  n1 = s32[] negate(p1)\n"
                                 "  ROOT r = pred[] compare(n0, n1), direction=LT\n"}) {
    SCOPED_TRACE(root);
    CheckPass(pass, Module(header + root + "}\n", sort), false, "", /*evaluate=*/false);
  }
  // Two keys (JAX's multi-key sort), three operands, complex keys.
  const std::string two_keys =
      "c {\n  p0 = s32[] parameter(0)\n  p1 = s32[] parameter(1)\n  p2 = f32[] parameter(2)\n"
      "  p3 = f32[] parameter(3)\n  lt0 = pred[] compare(p0, p1), direction=LT\n"
      "  eq0 = pred[] compare(p0, p1), direction=EQ\n  lt1 = pred[] compare(p2, p3), direction=LT\n"
      "  and = pred[] and(eq0, lt1)\n  ROOT r = pred[] or(lt0, and)\n}\n";
  CheckPass(pass,
            Module(two_keys, "  k = s32[6] parameter(0)\n  v = f32[6] parameter(1)\n"
                             "  ROOT s = (s32[6], f32[6]) sort(k, v), dimensions={0}, to_apply=c\n"),
            false, "", /*evaluate=*/false);
  const std::string three =
      "c {\n  p0 = s32[] parameter(0)\n  p1 = s32[] parameter(1)\n  p2 = s32[] parameter(2)\n"
      "  p3 = s32[] parameter(3)\n  p4 = s32[] parameter(4)\n  p5 = s32[] parameter(5)\n"
      "  ROOT r = pred[] compare(p0, p1), direction=LT\n}\n";
  CheckPass(pass,
            Module(three, "  a = s32[6] parameter(0)\n  b = s32[6] parameter(1)\n  d = s32[6] parameter(2)\n"
                          "  ROOT s = (s32[6], s32[6], s32[6]) sort(a, b, d), dimensions={0}, to_apply=c\n"),
            false, "", /*evaluate=*/false);
}

}  // namespace
}  // namespace kiln::passes
