// GemmCustomCallRewriter: cuBLAS custom-calls of optimized GPU dumps become
// the HLO they stand for. Each case evaluates the rewritten module and a
// hand-written module of what the backend_config means (alpha, beta * c,
// bias along the minor dimension, relu, tanh-form gelu, workspace element)
// on the same random arguments; unsupported configs are one-line errors.
#include "compiler/passes/gemm_custom_call_rewriter.h"

#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

using test_support::MustParse;

std::string Config(const std::string& extra, const std::string& epilogue = "DEFAULT") {
  return R"(backend_config="{\"gemm_backend_config\":{\"alpha_real\":)" + extra +
         R"(,\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"],\"lhs_batch_dimensions\":[],\"rhs_batch_dimensions\":[]},\"alpha_imag\":0,\"epilogue\":\")" +
         epilogue + R"(\"}}")";
}

void ExpectRewriteMeans(const std::string& text, const std::string& reference) {
  GemmCustomCallRewriter pass;
  test_support::ExpectRewriteComputes(pass, text, reference);
}

TEST(GemmCustomCallRewriter, AlphaBetaAndWorkspace) {
  ExpectRewriteMeans(R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3,5] parameter(1)
  c = f32[4,5] parameter(2)
  g = (f32[4,5], s8[64]) custom-call(a, b, c), custom_call_target="__cublas$gemm", )" +
                         Config(R"(2,\"beta\":0.5)") + R"(
  ROOT r = f32[4,5] get-tuple-element(g), index=0
})",
                     R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3,5] parameter(1)
  c = f32[4,5] parameter(2)
  d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  two = f32[] constant(2)
  half = f32[] constant(0.5)
  twos = f32[4,5] broadcast(two), dimensions={}
  halves = f32[4,5] broadcast(half), dimensions={}
  d2 = f32[4,5] multiply(d, twos)
  c2 = f32[4,5] multiply(c, halves)
  ROOT r = f32[4,5] add(d2, c2)
})");
}

TEST(GemmCustomCallRewriter, BiasReluEpilogue) {
  ExpectRewriteMeans(R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3,5] parameter(1)
  bias = f32[5] parameter(2)
  ROOT g = f32[4,5] custom-call(a, b, bias), custom_call_target="__cublas$lt$matmul", )" +
                         Config(R"(1,\"beta\":0)", "BIAS_RELU") + R"(
})",
                     R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3,5] parameter(1)
  bias = f32[5] parameter(2)
  d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,5] broadcast(bias), dimensions={1}
  s = f32[4,5] add(d, bb)
  zero = f32[] constant(0)
  zeros = f32[4,5] broadcast(zero), dimensions={}
  ROOT r = f32[4,5] maximum(s, zeros)
})");
}

TEST(GemmCustomCallRewriter, GeluEpilogueIsTheTanhForm) {
  ExpectRewriteMeans(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT g = f32[2,2] custom-call(a, b), custom_call_target="__cublas$lt$matmul", )" +
                         Config(R"(1,\"beta\":0)", "GELU") + R"(
})",
                     R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  x = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x2 = f32[2,2] multiply(x, x)
  x3 = f32[2,2] multiply(x2, x)
  k = f32[] constant(0.044715)
  kb = f32[2,2] broadcast(k), dimensions={}
  x3k = f32[2,2] multiply(x3, kb)
  inner = f32[2,2] add(x, x3k)
  s = f32[] constant(0.7978845608028654)
  sb = f32[2,2] broadcast(s), dimensions={}
  scaled = f32[2,2] multiply(inner, sb)
  t = f32[2,2] tanh(scaled)
  half = f32[] constant(0.5)
  halves = f32[2,2] broadcast(half), dimensions={}
  one = f32[] constant(1)
  ones = f32[2,2] broadcast(one), dimensions={}
  hx = f32[2,2] multiply(x, halves)
  t1 = f32[2,2] add(t, ones)
  ROOT r = f32[2,2] multiply(hx, t1)
})");
}

TEST(GemmCustomCallRewriter, AuxiliaryOutputEpilogueIsAnError) {
  auto module = MustParse(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT g = f32[2,2] custom-call(a, b), custom_call_target="__cublas$lt$matmul", )" +
                          Config(R"(1,\"beta\":0)", "GELU_AUX") + R"(
})");
  ASSERT_NE(module, nullptr);
  GemmCustomCallRewriter pass;
  StatusOr<bool> r = pass.Run(*module);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("epilogue GELU_AUX is not supported"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace kiln::passes
