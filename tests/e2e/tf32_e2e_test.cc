// TF32 GEMMs: f32 dots at DEFAULT operand precision run on CUDA's TF32
// tensor cores (GemmThunk::tf32, cuBLAS' CUBLAS_COMPUTE_32F_FAST_TF32), as
// XLA GPU runs them; HIGH/HIGHEST precision, an f32 algorithm, bef-compile's
// --tf32=off and NVIDIA_TF32_OVERRIDE=0 keep f32 precision.
//
// The expected TF32 result is independent of the code under test: the
// reference evaluator's f32 dot of operands rounded here to TF32 (10-bit
// mantissa, to nearest, ties away from zero, as PTX's cvt.rna.tf32.f32).
// Products of two TF32 values are exact in f32, so the device result may
// differ from it only by the order of the f32 sums.
// Linked with tests/support/cuda_test_main.cc: without a GPU (or the
// emulator) the binary reports SKIPPED.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "compiler/driver/compiler.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

constexpr char kDot[] = R"(HloModule dot
ENTRY e {
  a = f32[16,64] parameter(0)
  b = f32[64,24] parameter(1)
  ROOT d = f32[16,24] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}PRECISION
})";

std::string DotModule(const std::string& precision) {
  std::string text = kDot;
  return text.replace(text.find("PRECISION"), 9, precision);
}

float RoundToTf32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & ~0x1fffu;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

Literal RoundedToTf32(const Literal& l) {
  Literal out = l;
  float* data = out.data<float>();
  for (int64_t i = 0; i < out.element_count(); ++i) data[i] = RoundToTf32(data[i]);
  return out;
}

class Tf32E2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(runtime::DeviceKind::kCuda);
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }

  // The module's result on the CUDA device, compiled with `tf32`.
  Literal Run(const hlo::HloModule& module, const std::vector<Literal>& args, bool tf32) {
    StatusOr<tools::DeviceRunResult> run = tools::CompileAndRun(module, args, *device_, {.tf32 = tf32});
    EXPECT_TRUE(run.ok()) << run.status().message();
    return run.ok() ? std::move(run->result) : Literal();
  }

  static Literal Evaluate(const hlo::HloModule& module, const std::vector<Literal>& args) {
    StatusOr<Literal> r = hlo::Evaluator().Evaluate(module, args);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(*r) : Literal();
  }

  // "" when `got` matches `want` to f32 summation-order accuracy.
  static std::string Compare(const Literal& got, const Literal& want) {
    CompareOptions tol;
    tol.rtol = 1e-5;
    tol.atol = 1e-5;
    Status s = CompareValues(got, want, "result", tol);
    return s.ok() ? "" : s.message();
  }

  std::unique_ptr<runtime::Device> device_;
};

TEST_F(Tf32E2ETest, DefaultPrecisionRoundsOperandsToTf32) {
  auto module = hlo::ParseHloModule(DotModule(""));
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<Literal> args = RandomArgs(**module, 3);
  Literal got = Run(**module, args, /*tf32=*/true);
  std::vector<Literal> rounded{RoundedToTf32(args[0]), RoundedToTf32(args[1])};
  EXPECT_EQ(Compare(got, Evaluate(**module, rounded)), "");
  // ... and it is not the f32 result: random f32 operands lose bits.
  EXPECT_NE(Compare(got, Evaluate(**module, args)), "");
}

TEST_F(Tf32E2ETest, F32PrecisionsKeepF32) {
  for (const char* precision : {", operand_precision={highest,highest}", ", operand_precision={default,high}",
                                ", algorithm=dot_f32_f32_f32"}) {
    auto module = hlo::ParseHloModule(DotModule(precision));
    ASSERT_TRUE(module.ok()) << module.status().message();
    std::vector<Literal> args = RandomArgs(**module, 4);
    EXPECT_EQ(Compare(Run(**module, args, /*tf32=*/true), Evaluate(**module, args)), "") << precision;
  }
}

TEST_F(Tf32E2ETest, OptionOffAndEnvironmentOverrideKeepF32) {
  auto module = hlo::ParseHloModule(DotModule(""));
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<Literal> args = RandomArgs(**module, 5);
  Literal exact = Evaluate(**module, args);
  EXPECT_EQ(Compare(Run(**module, args, /*tf32=*/false), exact), "");
  // NVIDIA's switch, read by cuBLAS (and the emulator's double) per call.
  ASSERT_EQ(setenv("NVIDIA_TF32_OVERRIDE", "0", 1), 0);
  Literal overridden = Run(**module, args, /*tf32=*/true);
  unsetenv("NVIDIA_TF32_OVERRIDE");
  EXPECT_EQ(Compare(overridden, exact), "");
}

// Which GEMM thunks of a compiled module carry tf32.
std::vector<bool> Tf32Flags(const std::string& text, bool tf32_option) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return {};
  compiler::CompileOptions options;
  options.host = false;
  options.cuda = true;
  options.tf32 = tf32_option;
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  std::vector<bool> flags;
  if (!artifact.ok()) return flags;
  thunks::ForEachThunk(artifact->program.root, [&](const thunks::Thunk& t, int) {
    if (const auto* g = t.As<thunks::GemmThunk>()) flags.push_back(g->tf32);
  });
  return flags;
}

TEST(Tf32Compile, GemmThunksFollowEachDotsPrecision) {
  EXPECT_EQ(Tf32Flags(DotModule(""), true), std::vector<bool>{true});
  EXPECT_EQ(Tf32Flags(DotModule(", operand_precision={DEFAULT,DEFAULT}"), true), std::vector<bool>{true});
  EXPECT_EQ(Tf32Flags(DotModule(", algorithm=dot_tf32_tf32_f32"), true), std::vector<bool>{true});
  EXPECT_EQ(Tf32Flags(DotModule(", operand_precision={highest,highest}"), true), std::vector<bool>{false});
  EXPECT_EQ(Tf32Flags(DotModule(", algorithm=dot_f32_f32_f32"), true), std::vector<bool>{false});
  EXPECT_EQ(Tf32Flags(DotModule(""), false), std::vector<bool>{false});
  // Only f32 GEMMs: a bf16 dot runs on the BF16 tensor cores as it is.
  EXPECT_EQ(Tf32Flags(R"(HloModule m
ENTRY e {
  a = bf16[16,64] parameter(0)
  b = bf16[64,24] parameter(1)
  ROOT d = f32[16,24] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                      true),
            std::vector<bool>{false});
  // A GEMM custom call of an optimized GPU dump: its precision_config.
  for (const char* precision : {"DEFAULT", "HIGHEST"}) {
    std::string text = std::string(R"(HloModule m
ENTRY e {
  a = f32[16,64] parameter(0)
  b = f32[64,24] parameter(1)
  ROOT g = f32[16,24] custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"precision_config":{"operand_precision":[")") +
                       precision + "\",\"" + precision + R"("],"algorithm":"ALG_UNSET"},"epilogue":"DEFAULT"}}
})";
    EXPECT_EQ(Tf32Flags(text, true), std::vector<bool>{std::string(precision) == "DEFAULT"}) << precision;
  }
}

}  // namespace
}  // namespace kiln::testing
