// End to end cuDNN convolution custom calls of optimized XLA GPU dumps
// (__cudnn$convForward, __cudnn$convBackwardInput,
// __cudnn$convBackwardFilter, __cudnn$convBiasActivationForward), which
// CudnnConvCustomCallRewriter turns back into HLO: compiled by bef-compile's
// pipeline, run on the host (im2col + GEMM) or, as
// cudnn_conv_custom_call_e2e_test_cuda, on the emulated CUDA device (the
// cuDNN double), and compared with the reference evaluator on the plain HLO
// JAX writes for the same computation (tests/e2e/data/cudnn_conv, see its
// generate.py: the gradients come from JAX's own transpose rules, not from
// the rewrite's derivation). The evaluator's direct reading of the custom
// calls (compiler/evaluator/cudnn_conv_calls.h) is checked against the same
// reference.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

class CudnnConvCustomCallE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }

  static std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
    auto module = hlo::ParseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) return nullptr;
    EXPECT_TRUE(hlo::VerifyModule(**module).ok()) << hlo::VerifyModule(**module).message();
    return std::move(*module);
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // Runs the custom-call module and compares it with the evaluator's result
  // for `reference` on the same seeded random inputs.
  void Compare(const std::string& custom_call_text, const std::string& reference_text) {
    std::unique_ptr<hlo::HloModule> module = Parse(custom_call_text);
    std::unique_ptr<hlo::HloModule> reference = Parse(reference_text);
    ASSERT_TRUE(module && reference);
    std::vector<Literal> args = RandomArgs(*module, /*seed=*/5);
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(*reference, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(*module, args, *device_);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    Status s = CompareValues(actual->result, *expected, "result", kF32Tolerance);
    EXPECT_TRUE(s.ok()) << s.message() << "\n" << custom_call_text;
    // The evaluator's own reading of the custom call agrees with JAX's HLO.
    StatusOr<Literal> direct = hlo::Evaluator().Evaluate(*module, args);
    ASSERT_TRUE(direct.ok()) << direct.status().message();
    s = CompareValues(*direct, *expected, "evaluated custom call", kF32Tolerance);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  void CompareCase(const std::string& name) {
    const std::string dir = "tests/e2e/data/cudnn_conv/";
    Compare(Read(dir + name + ".hlo"), Read(dir + name + ".reference.hlo"));
  }

  // Compiling `text` fails with one line holding `what`.
  void ExpectError(const std::string& text, const std::string& what) {
    std::unique_ptr<hlo::HloModule> module = Parse(text);
    ASSERT_TRUE(module);
    StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(*module, RandomArgs(*module, 1), *device_);
    ASSERT_FALSE(actual.ok());
    EXPECT_NE(actual.status().message().find(what), std::string::npos) << actual.status().message();
    EXPECT_EQ(actual.status().message().find('\n'), std::string::npos) << actual.status().message();
  }

  // The libraries sum f32 products in their own order, the evaluator in f64.
  static inline const CompareOptions kF32Tolerance{1e-4, 1e-4};
  std::unique_ptr<runtime::Device> device_;
};

TEST_F(CudnnConvCustomCallE2ETest, ForwardScaled) { CompareCase("forward_nhwc_stride_scale"); }
TEST_F(CudnnConvCustomCallE2ETest, ForwardGroupedDilated) { CompareCase("forward_nchw_grouped_dilated"); }

TEST_F(CudnnConvCustomCallE2ETest, BiasReluWithSideInput) { CompareCase("bias_relu_side_input_nhwc"); }
TEST_F(CudnnConvCustomCallE2ETest, BiasLeakyRelu) { CompareCase("bias_leaky_relu_nchw"); }
TEST_F(CudnnConvCustomCallE2ETest, BiasActivations) {
  for (const char* name : {"bias_elu_1d", "bias_relu6_1d", "bias_sigmoid_1d", "bias_tanh_1d", "bias_gelu_1d",
                           "bias_none_side_input_1d"}) {
    SCOPED_TRACE(name);
    CompareCase(name);
  }
}

TEST_F(CudnnConvCustomCallE2ETest, BackwardInputStrided) { CompareCase("backward_input_nhwc_stride"); }
TEST_F(CudnnConvCustomCallE2ETest, BackwardInputGroupedDilated) { CompareCase("backward_input_nchw_grouped_dilated"); }
TEST_F(CudnnConvCustomCallE2ETest, BackwardInputWidePadding) { CompareCase("backward_input_1d_wide_padding"); }

TEST_F(CudnnConvCustomCallE2ETest, BackwardFilterStrided) { CompareCase("backward_filter_nhwc_stride"); }
TEST_F(CudnnConvCustomCallE2ETest, BackwardFilterGroupedDilated) {
  CompareCase("backward_filter_nchw_grouped_dilated");
}
TEST_F(CudnnConvCustomCallE2ETest, BackwardFilter3d) { CompareCase("backward_filter_3d"); }

// Older dumps: non-default layouts, a quoted backend_config with the fields
// at the top and the activation as a number ("2" = kRelu), the scratch
// returned (zeros of its size) and no window attribute (the whole filter).
TEST_F(CudnnConvCustomCallE2ETest, LegacyConfigLayoutsAndScratch) {
  Compare(R"(HloModule m

ENTRY e {
  x = f32[1,5,5,2]{2,1,3,0} parameter(0)
  w = f32[3,2,4,2]{1,0,2,3} parameter(1)
  b = f32[3] parameter(2)
  c = (f32[1,4,2,3]{1,3,2,0}, u8[16]{0}) custom-call(x, w, b), dim_labels=b01f_o01i->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config="{\"algorithm\":\"0\",\"tensor_ops_enabled\":false,\"conv_result_scale\":2,\"activation_mode\":\"2\",\"side_input_scale\":0}"
  r = f32[1,4,2,3] get-tuple-element(c), index=0
  s = u8[16] get-tuple-element(c), index=1
  ROOT t = (f32[1,4,2,3], u8[16]) tuple(r, s)
}
)",
          R"(HloModule m

ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  w = f32[3,2,4,2] parameter(1)
  b = f32[3] parameter(2)
  conv = f32[1,4,2,3] convolution(x, w), window={size=2x4}, dim_labels=b01f_o01i->b01f
  two = f32[] constant(2)
  twos = f32[1,4,2,3] broadcast(two), dimensions={}
  scaled = f32[1,4,2,3] multiply(conv, twos)
  bias = f32[1,4,2,3] broadcast(b), dimensions={3}
  sum = f32[1,4,2,3] add(scaled, bias)
  zero = f32[] constant(0)
  zeros = f32[1,4,2,3] broadcast(zero), dimensions={}
  relu = f32[1,4,2,3] maximum(sum, zeros)
  z8 = u8[] constant(0)
  s = u8[16] broadcast(z8), dimensions={}
  ROOT t = (f32[1,4,2,3], u8[16]) tuple(relu, s)
}
)");
}

TEST_F(CudnnConvCustomCallE2ETest, UnsupportedFormsAreOneLineErrors) {
  // kReluX's bound is not in the HLO.
  ExpectError(R"(HloModule m

ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  b = f32[3] parameter(2)
  c = (f32[1,3,3,3], u8[0]) custom-call(x, w, b), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"activation_mode":"kReluX"}}
  ROOT r = f32[1,3,3,3] get-tuple-element(c), index=0
}
)",
              "activation_mode kReluX is not supported");
  // A target kiln does not know is named.
  ExpectError(R"(HloModule m

ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  c = (f32[1,3,3,3], u8[0]) custom-call(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForwardGraph", backend_config={}
  ROOT r = f32[1,3,3,3] get-tuple-element(c), index=0
}
)",
              "does not support custom-call target '__cudnn$convForwardGraph'");
  // A malformed backend_config.
  ExpectError(R"(HloModule m

ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  c = (f32[1,3,3,3], u8[0]) custom-call(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward", backend_config="{conv_result_scale:1}"
  ROOT r = f32[1,3,3,3] get-tuple-element(c), index=0
}
)",
              "needs a JSON backend_config");
}

}  // namespace
}  // namespace kiln::testing
