// FP8 GEMMs end to end: f8 dots compiled for host and CUDA (one program, as
// `bef-compile --targets=host,cuda` writes it) become GemmThunks with f8
// operands (cuBLASLt's FP8 GEMM on CUDA, widened sgemms on the host) and
// match the reference evaluator on the device under test (the host, or the
// emulated CUDA device when KILN_E2E_DEVICE=cuda): every type pair cuBLASLt
// multiplies, f32, bf16 and f16 results, operands that need a transpose
// into the "TN" form, batch dimensions, and XLA's convert-and-scale
// pattern. The evaluator sums the decoded f8 values exactly and rounds per
// op, independently of the code under test; the GEMM's f32 accumulation
// may differ from it by summation order (f32 results) and by one rounding
// of the result (bf16 and f16).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/e2e/e2e_test_util.h"
#include "tests/support/corpus_files.h"
#include "thunks/program.h"

namespace kiln::testing {
namespace {

// The FP8 GemmThunks of `text` compiled for host and CUDA, as
// "lhs x rhs -> out" each (with " m=.. n=.. k=.." when `dims`).
std::vector<std::string> Fp8Gemms(const std::string& text, bool dims = false) {
  std::optional<bef::Artifact> artifact = CompileForHostAndCuda(text);
  if (!artifact) return {};
  std::vector<std::string> gemms;
  thunks::ForEachThunk(artifact->program.root, [&](const thunks::Thunk& t, int) {
    const auto* g = t.As<thunks::GemmThunk>();
    if (g && thunks::IsFp8Gemm(*g))
      gemms.push_back(std::string(ElementTypeName(g->lhs_type)) + " x " + std::string(ElementTypeName(g->rhs_type)) +
                      " -> " + std::string(ElementTypeName(g->out_type)) +
                      (dims ? " m=" + std::to_string(g->m) + " n=" + std::to_string(g->n) + " k=" +
                                  std::to_string(g->k)
                            : ""));
  });
  return gemms;
}

class Fp8GemmTest : public E2EDeviceTest {
 protected:
  // Compiled for host and CUDA, run on the device under test, compared
  // with the evaluator on seeded random operands in [-1, 1].
  void ExpectMatches(const std::string& text, double tol) {
    auto module = hlo::ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().message();
    ASSERT_TRUE(hlo::VerifyModule(**module).ok());
    std::vector<Literal> args = RandomArgs(**module, 7);
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, *device_, {.all_targets = true});
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    CompareOptions options;
    options.rtol = tol;
    options.atol = tol;
    Status s = CompareValues(actual->result, *expected, "result", options);
    EXPECT_TRUE(s.ok()) << s.message() << "\n" << text;
  }
};

// out[m, n] = lhs[m, k] . rhs[n, k]: both operands k-major, cuBLASLt's form.
std::string TnDot(const std::string& lhs, const std::string& rhs, const std::string& out) {
  return "HloModule tn\nENTRY e {\n  a = " + lhs + "[32,64] parameter(0)\n  b = " + rhs +
         "[48,64] parameter(1)\n  ROOT d = " + out +
         "[32,48] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}\n";
}

// Result tolerance: f32 summation order, or one rounding of bf16 / f16.
double Tolerance(const std::string& out) { return out == "f32" ? 1e-5 : (out == "bf16" ? 1e-2 : 2e-3); }

TEST_F(Fp8GemmTest, EveryTypePairAndResultType) {
  const std::pair<const char*, const char*> pairs[] = {
      {"f8e4m3fn", "f8e4m3fn"}, {"f8e4m3fn", "f8e5m2"}, {"f8e5m2", "f8e4m3fn"}};
  for (const auto& [lhs, rhs] : pairs) {
    for (const char* out : {"f32", "bf16", "f16"}) {
      const std::string text = TnDot(lhs, rhs, out);
      EXPECT_EQ(Fp8Gemms(text), std::vector<std::string>{std::string(lhs) + " x " + rhs + " -> " + out});
      ExpectMatches(text, Tolerance(out));
    }
  }
}

// f8e5m2 x f8e5m2 has no cuBLASLt kernel, and f8 types other than e4m3fn
// and e5m2 none either: they keep the exact bf16 / f32 path.
TEST_F(Fp8GemmTest, PairsWithoutFp8KernelsKeepTheExactPath) {
  for (const char* type : {"f8e5m2", "f8e4m3b11fnuz", "f8e5m2fnuz"}) {
    const std::string text = TnDot(type, type, "f32");
    EXPECT_TRUE(Fp8Gemms(text).empty()) << type;
    ExpectMatches(text, 1e-5);
  }
}

// An f8 result: the GEMM computes f32 and a convert rounds it.
TEST_F(Fp8GemmTest, F8ResultIsRoundedAfterAnF32Gemm) {
  const std::string text = TnDot("f8e4m3fn", "f8e4m3fn", "f8e4m3fn");
  EXPECT_EQ(Fp8Gemms(text), std::vector<std::string>{"f8e4m3fn x f8e4m3fn -> f32"});
  ExpectMatches(text, 0.07);  // one e4m3fn rounding (3 mantissa bits) of sums up to ~8
}

// Contracting dimensions that are not minor: DotCanonicalization transposes
// the operands into [m,k] x [n,k] first.
TEST_F(Fp8GemmTest, OperandsThatAreNotKMajorAreTransposed) {
  const std::string text = R"(HloModule nk
ENTRY e {
  a = f8e4m3fn[64,32] parameter(0)
  b = f8e5m2[64,48] parameter(1)
  ROOT d = bf16[32,48] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})";
  EXPECT_EQ(Fp8Gemms(text), std::vector<std::string>{"f8e4m3fn x f8e5m2 -> bf16"});
  ExpectMatches(text, 1e-2);
}

TEST_F(Fp8GemmTest, BatchDimensions) {
  const std::string text = R"(HloModule batched
ENTRY e {
  a = f8e5m2[3,2,16,32] parameter(0)
  b = f8e4m3fn[3,2,32,16] parameter(1)
  ROOT d = f32[3,2,16,16] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
})";
  EXPECT_EQ(Fp8Gemms(text), std::vector<std::string>{"f8e5m2 x f8e4m3fn -> f32"});
  ExpectMatches(text, 1e-5);
}

// XLA's scaled FP8 dot: convert(f8) * broadcast(scale) on each operand
// (Fp8ScaleHoisting), with f32 and bf16 arithmetic, one side unscaled.
TEST_F(Fp8GemmTest, ConvertAndScalePatternBecomesAnFp8Gemm) {
  const std::string f32_scales = R"(HloModule scaled
ENTRY e {
  a = f8e4m3fn[32,64] parameter(0)
  b = f8e4m3fn[48,64] parameter(1)
  sa = f32[] parameter(2)
  sb = f32[] parameter(3)
  ca = f32[32,64] convert(a)
  cb = f32[48,64] convert(b)
  ba = f32[32,64] broadcast(sa), dimensions={}
  bb = f32[48,64] broadcast(sb), dimensions={}
  xa = f32[32,64] multiply(ca, ba)
  xb = f32[48,64] multiply(bb, cb)
  ROOT d = f32[32,48] dot(xa, xb), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})";
  EXPECT_EQ(Fp8Gemms(f32_scales), std::vector<std::string>{"f8e4m3fn x f8e4m3fn -> f32"});
  ExpectMatches(f32_scales, 1e-4);
  const std::string bf16_one_scale = R"(HloModule scaled_bf16
ENTRY e {
  a = f8e5m2[32,64] parameter(0)
  b = f8e4m3fn[48,64] parameter(1)
  sa = bf16[] parameter(2)
  ca = bf16[32,64] convert(a)
  cb = bf16[48,64] convert(b)
  ba = bf16[32,64] broadcast(sa), dimensions={}
  xa = bf16[32,64] multiply(ca, ba)
  ROOT d = bf16[32,48] dot(xa, cb), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})";
  EXPECT_EQ(Fp8Gemms(bf16_one_scale), std::vector<std::string>{"f8e5m2 x f8e4m3fn -> f32"});
  ExpectMatches(bf16_one_scale, 2e-2);  // the evaluator rounds the scaled operands to bf16 first
}

// Extents cuBLASLt's FP8 kernels cannot align (k or n not a multiple of
// 16) keep the exact path.
TEST_F(Fp8GemmTest, MisalignedExtentsKeepTheExactPath) {
  const std::string text = R"(HloModule odd
ENTRY e {
  a = f8e4m3fn[5,24] parameter(0)
  b = f8e4m3fn[40,24] parameter(1)
  ROOT d = f32[5,40] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})";
  EXPECT_TRUE(Fp8Gemms(text).empty());
  ExpectMatches(text, 1e-5);
}

// The corpus module fp8_gemm_loop: 20 iterations of an f8e5m2[32768,1024]
// x f8e4m3fn[8192,1024] dot contracting the minor dimensions into
// bf16[32768,8192]. Its one GEMM is cuBLASLt's FP8 GEMM at full size (the
// run at that size is tests/tools/fp8_gemm_loop_test.sh, on the emulator
// in sampling mode); a variant with the sizes cut to 64 x 48 x 32 runs on
// the device under test and matches the evaluator.
TEST_F(Fp8GemmTest, CorpusFp8GemmLoop) {
  std::ifstream file(std::string(test_support::kCorpusDir) + "/openxla_hlo_tests/fp8_gemm_loop.hlo");
  if (!file) GTEST_SKIP() << "corpus module fp8_gemm_loop not found under " << test_support::kCorpusDir;
  std::stringstream text;
  text << file.rdbuf();
  const std::string full = text.str();
  EXPECT_EQ(Fp8Gemms(full, true), std::vector<std::string>{"f8e5m2 x f8e4m3fn -> bf16 m=32768 n=8192 k=1024"});
  std::string small = full;
  for (auto [from, to] : {std::pair<std::string, std::string>{"32768", "64"}, {"8192", "48"}, {"1024", "32"}})
    for (size_t at = small.find(from); at != std::string::npos; at = small.find(from, at + to.size()))
      small.replace(at, from.size(), to);
  EXPECT_EQ(Fp8Gemms(small, true), std::vector<std::string>{"f8e5m2 x f8e4m3fn -> bf16 m=64 n=48 k=32"});
  // bf16 sums of 20 rounded products, then an f32 row sum of 48 of them.
  ExpectMatches(small, 2e-2);
}

}  // namespace
}  // namespace kiln::testing
