// ActivationCustomCallRewriter: torch-neuronx's GELU custom-calls become
// elementwise HLO. The rewritten module and a hand-written module of the
// formula (exact erf form, tanh form) give identical results under the
// evaluator; other custom-calls stay.
#include "compiler/passes/activation_custom_call_rewriter.h"

#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::CheckPass;
using test_support::MustParse;

void ExpectRewriteMeans(const std::string& text, const std::string& reference) {
  ActivationCustomCallRewriter pass;
  test_support::ExpectRewriteComputes(pass, text, reference);
}

TEST(ActivationCustomCallRewriter, ExactGelu) {
  ExpectRewriteMeans(R"(HloModule m
ENTRY e {
  x = f32[4,6] parameter(0)
  ROOT g = f32[4,6] custom-call(x), custom_call_target="AwsNeuronGelu"
})",
                     R"(HloModule m
ENTRY e {
  x = f32[4,6] parameter(0)
  k = f32[] constant(0.70710678118654752)
  kb = f32[4,6] broadcast(k), dimensions={}
  xs = f32[4,6] multiply(x, kb)
  e = f32[4,6] erf(xs)
  h = f32[] constant(0.5)
  hb = f32[4,6] broadcast(h), dimensions={}
  hx = f32[4,6] multiply(x, hb)
  one = f32[] constant(1)
  ob = f32[4,6] broadcast(one), dimensions={}
  e1 = f32[4,6] add(e, ob)
  ROOT r = f32[4,6] multiply(hx, e1)
})");
}

TEST(ActivationCustomCallRewriter, TanhGelu) {
  ExpectRewriteMeans(R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT g = f32[8] custom-call(x), custom_call_target="AwsNeuronGeluApprxTanh"
})",
                     R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  x2 = f32[8] multiply(x, x)
  x3 = f32[8] multiply(x2, x)
  k = f32[] constant(0.044715)
  kb = f32[8] broadcast(k), dimensions={}
  x3k = f32[8] multiply(x3, kb)
  s = f32[8] add(x, x3k)
  c = f32[] constant(0.7978845608028654)
  cb = f32[8] broadcast(c), dimensions={}
  sc = f32[8] multiply(s, cb)
  t = f32[8] tanh(sc)
  h = f32[] constant(0.5)
  hb = f32[8] broadcast(h), dimensions={}
  hx = f32[8] multiply(x, hb)
  one = f32[] constant(1)
  ob = f32[8] broadcast(one), dimensions={}
  t1 = f32[8] add(t, ob)
  ROOT r = f32[8] multiply(hx, t1)
})");
}

TEST(ActivationCustomCallRewriter, LeavesOtherCustomCallsAlone) {
  ActivationCustomCallRewriter pass;
  CheckPass(pass, R"(HloModule m

ENTRY e {
  x = f32[8] parameter(0)
  ROOT g = f32[8] custom-call(x), custom_call_target="SomethingElse"
}
)",
            false, "", /*evaluate=*/false);
}

}  // namespace
}  // namespace kiln::passes
