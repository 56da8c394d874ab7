// Row normalizations through the whole pipeline, against the reference
// evaluator: softmax (with the max subtracted), log-softmax, layer norm
// with scale and bias (and its statistics as extra outputs) and RMS norm,
// in f32 and bf16, rows of 1, 7, 32, 100, 768, 1024 and 4096 elements and
// one longer than the emitter holds (the reduction kernels take it), from
// one row to hundreds, and rows holding -inf and NaN. Compiled for host and
// CUDA, so the CUDA run takes the row-normalization emitter and the host
// run the host's row loop; on the host also compiled for the host alone
// (its usual kernels). Registered twice (tests/CMakeLists.txt): on the host
// and on the CUDA emulator with its memcheck and race checks on. The launch
// test checks the documented heuristic (row_normalization_emitter.cc).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <limits>

#include "compiler/driver/compiler.h"
#include "serialization/artifact.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

enum class Kind { kSoftmax, kLogSoftmax, kLayerNorm, kRmsNorm };

// The reducers in type `t`: max_<t> and add_<t>.
std::string Reducers(const std::string& t) {
  return "max_" + t + " {\n  a = " + t + "[] parameter(0)\n  b = " + t + "[] parameter(1)\n  ROOT m = " + t +
         "[] maximum(a, b)\n}\nadd_" + t + " {\n  a = " + t + "[] parameter(0)\n  b = " + t +
         "[] parameter(1)\n  ROOT s = " + t + "[] add(a, b)\n}\n";
}

// A module of `kind` over [rows, n] values of type `t` (bf16 layer and RMS
// norms compute in f32, as JAX writes them; softmax stays in `t`).
std::string Module(Kind kind, const std::string& t, int64_t rows, int64_t n) {
  std::string r = std::to_string(rows), k = std::to_string(n);
  std::string x = t + "[" + r + "," + k + "]";
  std::string text = "HloModule row_norm\n" + Reducers(t) + (t == "f32" ? "" : Reducers("f32")) + "ENTRY e {\n";
  auto line = [&](const std::string& s) { text += "  " + s + "\n"; };
  if (kind == Kind::kSoftmax || kind == Kind::kLogSoftmax) {
    std::string row = t + "[" + r + "]";
    line("x = " + x + " parameter(0)");
    line("ninf = " + t + "[] constant(-inf)");
    line("m = " + row + " reduce(x, ninf), dimensions={1}, to_apply=max_" + t);
    line("mb = " + x + " broadcast(m), dimensions={0}");
    line("d = " + x + " subtract(x, mb)");
    line("ex = " + x + " exponential(d)");
    line("zero = " + t + "[] constant(0)");
    line("s = " + row + " reduce(ex, zero), dimensions={1}, to_apply=add_" + t);
    if (kind == Kind::kSoftmax) {
      line("sb = " + x + " broadcast(s), dimensions={0}");
      line("ROOT y = " + x + " divide(ex, sb)");
    } else {
      line("ls = " + row + " log(s)");
      line("lb = " + x + " broadcast(ls), dimensions={0}");
      line("ROOT y = " + x + " subtract(d, lb)");
    }
    return text + "}\n";
  }
  std::string xf = "f32[" + r + "," + k + "]", row = "f32[" + r + "]", vec = "f32[" + k + "]";
  line("x = " + x + " parameter(0)");
  line("g = " + t + "[" + k + "] parameter(1)");
  line("xf = " + xf + " convert(x)");
  line("zero = f32[] constant(0)");
  line("n = f32[] constant(" + k + ")");
  line("nb = " + row + " broadcast(n), dimensions={}");
  line("eps = f32[] constant(1e-5)");
  line("epsb = " + row + " broadcast(eps), dimensions={}");
  line("gf = " + vec + " convert(g)");
  line("gb = " + xf + " broadcast(gf), dimensions={1}");
  if (kind == Kind::kRmsNorm) {
    line("sq = " + xf + " multiply(xf, xf)");
    line("ss = " + row + " reduce(sq, zero), dimensions={1}, to_apply=add_f32");
    line("ms = " + row + " divide(ss, nb)");
    line("me = " + row + " add(ms, epsb)");
    line("rs = " + row + " rsqrt(me)");
    line("rb = " + xf + " broadcast(rs), dimensions={0}");
    line("nrm = " + xf + " multiply(xf, rb)");
    line("y = " + xf + " multiply(nrm, gb)");
    line("ROOT out = " + x + " convert(y)");
    return text + "}\n";
  }
  line("b = " + t + "[" + k + "] parameter(2)");
  line("s = " + row + " reduce(xf, zero), dimensions={1}, to_apply=add_f32");
  line("mean = " + row + " divide(s, nb)");
  line("mb = " + xf + " broadcast(mean), dimensions={0}");
  line("d = " + xf + " subtract(xf, mb)");
  line("d2 = " + xf + " multiply(d, d)");
  line("v = " + row + " reduce(d2, zero), dimensions={1}, to_apply=add_f32");
  line("var = " + row + " divide(v, nb)");
  line("ve = " + row + " add(var, epsb)");
  line("rs = " + row + " rsqrt(ve)");
  line("rb = " + xf + " broadcast(rs), dimensions={0}");
  line("nrm = " + xf + " multiply(d, rb)");
  line("bf = " + vec + " convert(b)");
  line("bb = " + xf + " broadcast(bf), dimensions={1}");
  line("sc = " + xf + " multiply(nrm, gb)");
  line("y = " + xf + " add(sc, bb)");
  line("ROOT out = " + x + " convert(y)");
  return text + "}\n";
}

CompareOptions Tolerance(const std::string& t) {
  CompareOptions tol;
  tol.rtol = t == "f32" ? 1e-4 : 2e-2;
  tol.atol = t == "f32" ? 1e-5 : 2e-2;
  return tol;
}

class RowNormalizationE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }

  // Compiled for host and CUDA (and, on the host, for the host alone too),
  // run on the test's device, compared with the evaluator.
  void Check(const std::string& text, const std::vector<Literal>* inputs = nullptr, const CompareOptions& tol = {},
             uint64_t seed = 1) {
    auto module = hlo::ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().message();
    ASSERT_TRUE(hlo::VerifyModule(**module).ok()) << hlo::VerifyModule(**module).message();
    std::vector<Literal> args = inputs ? *inputs : RandomArgs(**module, seed);
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    bool host = device_->kind() == runtime::DeviceKind::kHost;
    for (bool all_targets : host ? std::vector<bool>{true, false} : std::vector<bool>{true}) {
      SCOPED_TRACE(all_targets ? "compiled for host and CUDA" : "compiled for the host");
      StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, *device_, {.all_targets = all_targets});
      ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << text;
      Status s = CompareValues(actual->result, *expected, "result", tol);
      EXPECT_TRUE(s.ok()) << s.message() << "\n" << text;
    }
  }

  std::unique_ptr<runtime::Device> device_;
};

// (row length, rows): one warp or less per row (packed, ragged blocks and
// ragged vectors), a warp per row, a block per row, and rows longer than
// the emitter holds.
const std::vector<std::pair<int64_t, int64_t>> kShapes = {{1, 9},   {7, 37},  {32, 300}, {100, 5},
                                                          {768, 1}, {768, 9}, {1024, 3}, {4096, 2}};

void CheckEveryShape(Kind kind, RowNormalizationE2ETest& test,
                     const std::function<void(const std::string&, const CompareOptions&)>& check) {
  for (const std::string t : {"f32", "bf16"})
    for (auto [n, rows] : kShapes) {
      SCOPED_TRACE(t + "[" + std::to_string(rows) + "," + std::to_string(n) + "]");
      check(Module(kind, t, rows, n), Tolerance(t));
    }
}

TEST_F(RowNormalizationE2ETest, Softmax) {
  CheckEveryShape(Kind::kSoftmax, *this, [&](const std::string& text, const CompareOptions& tol) {
    Check(text, nullptr, tol, 21);
  });
}

TEST_F(RowNormalizationE2ETest, LogSoftmax) {
  CheckEveryShape(Kind::kLogSoftmax, *this, [&](const std::string& text, const CompareOptions& tol) {
    Check(text, nullptr, tol, 22);
  });
}

TEST_F(RowNormalizationE2ETest, LayerNormWithScaleAndBias) {
  CheckEveryShape(Kind::kLayerNorm, *this, [&](const std::string& text, const CompareOptions& tol) {
    Check(text, nullptr, tol, 23);
  });
}

TEST_F(RowNormalizationE2ETest, RmsNorm) {
  CheckEveryShape(Kind::kRmsNorm, *this, [&](const std::string& text, const CompareOptions& tol) {
    Check(text, nullptr, tol, 24);
  });
}

TEST_F(RowNormalizationE2ETest, RowsLongerThanABlockHolds) {
  Check(Module(Kind::kSoftmax, "f32", 2, 20000), nullptr, Tolerance("f32"), 25);
  Check(Module(Kind::kLayerNorm, "bf16", 2, 20000), nullptr, Tolerance("bf16"), 26);
}

// Layer norm returning its statistics too: per-row outputs beside the rows.
TEST_F(RowNormalizationE2ETest, LayerNormStatisticsAsOutputs) {
  std::string text = Module(Kind::kLayerNorm, "bf16", 37, 96);
  text.replace(text.find("ROOT out"), 8, "out");
  text.replace(text.rfind("}"), 1, "  ROOT t = (bf16[37,96], f32[37], f32[37]) tuple(out, mean, rs)\n}");
  Check(text, nullptr, Tolerance("bf16"), 27);
}

// -inf entries, a NaN, a row of -inf only and a row of +inf: softmax
// computes what the evaluator does (NaN where it does).
TEST_F(RowNormalizationE2ETest, InfinitiesAndNaN) {
  const int64_t rows = 5, n = 100;
  Shape shape(ElementType::kF32, {rows, n});
  std::vector<float> v(rows * n);
  for (int64_t i = 0; i < rows * n; ++i) v[i] = static_cast<float>((i * 37) % 17) * 0.25f - 2.0f;
  const float inf = std::numeric_limits<float>::infinity();
  v[0 * n + 3] = -inf;
  v[0 * n + 99] = -inf;
  v[1 * n + 50] = std::nanf("");
  for (int64_t j = 0; j < n; ++j) v[2 * n + j] = -inf;
  v[3 * n + 10] = inf;
  Literal x(shape);
  for (int64_t i = 0; i < rows * n; ++i) x.SetF64(i, v[i]);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  Check(Module(Kind::kSoftmax, "f32", rows, n), &args, Tolerance("f32"));
  Check(Module(Kind::kLogSoftmax, "f32", rows, n), &args, Tolerance("f32"));
}

TEST(RowNormalizationLaunchTest, FollowsTheDocumentedHeuristic) {
  std::string ptx;
  // bf16 [4096, 768]: V = 8, C = 96 -> T = 32 (a warp per row), I = 3;
  // 8 rows per block of 256; one kernel, 128-bit loads and stores.
  EXPECT_EQ(CudaLaunches(Module(Kind::kLayerNorm, "bf16", 4096, 768), &ptx),
            (std::vector<std::array<int64_t, 3>>{{512, 32, 8}}));
  EXPECT_NE(ptx.find("ld.global.v4"), std::string::npos);
  EXPECT_NE(ptx.find("st.global.v4"), std::string::npos);
  EXPECT_NE(ptx.find("shfl.sync.down"), std::string::npos);
  // f32 [4096, 4096]: V = 4, C = 1024 -> T = 256: a block of 8 warps per row.
  EXPECT_EQ(CudaLaunches(Module(Kind::kSoftmax, "f32", 4096, 4096), &ptx),
            (std::vector<std::array<int64_t, 3>>{{4096, 32, 8}}));
  // f32 [1536, 128]: C = 32 -> T = 8, doubled to 32 while under 132 x 256
  // threads (1536 x 16 < 33792): one vector per thread, 8 rows per block.
  EXPECT_EQ(CudaLaunches(Module(Kind::kSoftmax, "f32", 1536, 128), &ptx),
            (std::vector<std::array<int64_t, 3>>{{192, 32, 8}}));
}

}  // namespace
}  // namespace kiln::testing
