// End to end bounded dynamic shapes: HLO with `<=N` dimensions,
// set-dimension-size, get-dimension-size and dynamic-reshape, compiled by
// bef-compile's pipeline (DynamicPadder pads every value to its bound) and
// run on the host runtime (or, as dynamic_shapes_e2e_test_cuda, on the CUDA
// emulator). Arguments smaller than their bounds are padded by the runtime
// and results come back cut to the sizes the program computed.
//
// Expected values are computed by hand, and each case is also checked
// against the reference evaluator, which keeps every value at its logical
// extent and pads nothing. Where the padding must not leak into a result,
// the data past a size is real data (set-dimension-size on a full array),
// so an unmasked reduction or dot would give a different answer.
#include <gtest/gtest.h>

#include "common/value_syntax.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

Literal Value(const std::string& spec) {
  StatusOr<Literal> v = ParseValue(spec, nullptr);
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v.ok() ? std::move(*v) : Literal();
}

class DynamicShapesE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }

  std::unique_ptr<hlo::HloModule> Parse(const std::string& body) {
    const std::string text = "HloModule m\n\nENTRY e {\n" + body + "}\n";
    auto module = hlo::ParseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) return nullptr;
    EXPECT_TRUE(hlo::VerifyModule(**module).ok()) << hlo::VerifyModule(**module).message();
    return std::move(*module);
  }

  // Runs `body` on `args`; the result must equal `expected` (a value spec,
  // or a tuple of them) and the evaluator's result.
  void Check(const std::string& body, const std::vector<std::string>& args,
             const std::vector<std::string>& expected) {
    std::unique_ptr<hlo::HloModule> module = Parse(body);
    ASSERT_TRUE(module);
    std::vector<Literal> values;
    for (const std::string& a : args) values.push_back(Value(a));
    StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(*module, values, *device_);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    std::vector<Literal> leaves;
    for (const std::string& e : expected) leaves.push_back(Value(e));
    Literal want = leaves.size() == 1 ? std::move(leaves[0]) : Literal::MakeTuple(std::move(leaves));
    Status match = CompareValues(actual->result, want, "result", {});
    EXPECT_TRUE(match.ok()) << match.message() << "\n" << body;
    StatusOr<Literal> reference = hlo::Evaluator().Evaluate(*module, values);
    ASSERT_TRUE(reference.ok()) << reference.status().message();
    Status agree = CompareValues(actual->result, *reference, "result", {});
    EXPECT_TRUE(agree.ok()) << agree.message() << "\n" << body;
  }

  // The one-line error compiling or running `body` on `args` gives.
  std::string Failure(const std::string& body, const std::vector<std::string>& args) {
    std::unique_ptr<hlo::HloModule> module = Parse(body);
    if (!module) return "unparsed";
    std::vector<Literal> values;
    for (const std::string& a : args) values.push_back(Value(a));
    StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(*module, values, *device_);
    return actual.ok() ? "" : actual.status().message();
  }

  std::unique_ptr<runtime::Device> device_;
};

// XLA's DynamicReshapeTest.SingleDynamicDimension: rows 0-1 of dimension 1.
TEST_F(DynamicShapesE2ETest, SetDimensionSizeThenDynamicReshape) {
  const std::string body = R"(
  p = s32[2,3,3] parameter(0)
  two = s32[] parameter(1)
  cut = s32[2,<=3,3] set-dimension-size(p, two), dimensions={1}
  n = s32[] parameter(2)
  ROOT r = s32[<=18] dynamic-reshape(cut, n)
)";
  Check(body, {"2x3x3xs32=0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", "s32=2", "s32=12"},
        {"12xs32=0 1 2 3 4 5 9 10 11 12 13 14"});
  Check(body, {"2x3x3xs32=0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", "s32=0", "s32=0"}, {"0xs32="});
}

// A dynamic parameter: the argument has 3 of its 8 elements; elementwise
// ops keep the size.
TEST_F(DynamicShapesE2ETest, DynamicParameterThroughElementwise) {
  const std::string body = R"(
  p = f32[<=8] parameter(0)
  m = f32[<=8] add(p, p)
  ROOT n = f32[<=8] negate(m)
)";
  Check(body, {"3xf32=1 -2 3.5"}, {"3xf32=-2 4 -7"});
  Check(body, {"8xf32=1 2 3 4 5 6 7 8"}, {"8xf32=-2 -4 -6 -8 -10 -12 -14 -16"});
  Check(body, {"0xf32="}, {"0xf32="});
}

// Reducing a dynamic dimension ignores what lies past the size: here that
// is real data (rows of 100s and 200s; 4, 5, 40, 50), which an unmasked
// max or sum would take in.
TEST_F(DynamicShapesE2ETest, MaxOverDynamicRows) {
  const std::string text = R"(HloModule m

max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}

add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}

ENTRY e {
  p = f32[4,2] parameter(0)
  n = s32[] parameter(1)
  cut = f32[<=4,2] set-dimension-size(p, n), dimensions={0}
  lowest = f32[] constant(-inf)
  mx = f32[2] reduce(cut, lowest), dimensions={0}, to_apply=max
  q = s32[2,5] parameter(2)
  k = s32[] parameter(3)
  qcut = s32[2,<=5] set-dimension-size(q, k), dimensions={1}
  zero = s32[] constant(0)
  sum = s32[2] reduce(qcut, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[2], s32[2]) tuple(mx, sum)
}
)";
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<Literal> args = {Value("4x2xf32=1 -5 3 -7 100 100 200 200"), Value("s32=2"),
                               Value("2x5xs32=1 2 3 4 5 10 20 30 40 50"), Value("s32=3")};
  StatusOr<tools::DeviceRunResult> actual = tools::CompileAndRun(**module, args, *device_);
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  std::vector<Literal> want;
  want.push_back(Value("2xf32=3 -5"));
  want.push_back(Value("2xs32=6 60"));
  Status match = CompareValues(actual->result, Literal::MakeTuple(std::move(want)), "result", {});
  EXPECT_TRUE(match.ok()) << match.message();
  StatusOr<Literal> reference = hlo::Evaluator().Evaluate(**module, args);
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  EXPECT_TRUE(CompareValues(actual->result, *reference, "result", {}).ok());
}

// A dot contracting a dynamic dimension: columns 2-3 of lhs and rows 2-3
// of rhs (NaN and 1000s) must not reach the result.
TEST_F(DynamicShapesE2ETest, DotMasksContractedPadding) {
  const std::string body = R"(
  a = f32[2,4] parameter(0)
  b = f32[4,3] parameter(1)
  k = s32[] parameter(2)
  ac = f32[2,<=4] set-dimension-size(a, k), dimensions={1}
  bc = f32[<=4,3] set-dimension-size(b, k), dimensions={0}
  ROOT d = f32[2,3] dot(ac, bc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)";
  Check(body,
        {"2x4xf32=1 2 nan 1000 3 4 1000 nan", "4x3xf32=1 0 2 0 1 3 nan 1000 1 1000 nan 1", "s32=2"},
        {"2x3xf32=1 2 8 3 4 18"});
}

// Reshapes: [<=4,3] -> [<=12] keeps the row-major prefix (a plain reshape);
// [2,<=3] -> [<=6] gathers across the padding of each row.
TEST_F(DynamicShapesE2ETest, ReshapesOfDynamicValues) {
  Check(R"(
  p = s32[<=4,3] parameter(0)
  ROOT r = s32[<=12] reshape(p)
)",
        {"2x3xs32=1 2 3 4 5 6"}, {"6xs32=1 2 3 4 5 6"});
  Check(R"(
  p = s32[2,<=3] parameter(0)
  ROOT r = s32[<=6] reshape(p)
)",
        {"2x2xs32=1 2 3 4"}, {"4xs32=1 2 3 4"});
}

// Sizes travel through broadcast and transpose to a tuple of results, and
// get-dimension-size reads them.
TEST_F(DynamicShapesE2ETest, SizesThroughBroadcastTransposeAndTuple) {
  const std::string body = R"(
  p = f32[<=5] parameter(0)
  b = f32[3,<=5] broadcast(p), dimensions={1}
  t = f32[<=5,3] transpose(b), dimensions={1,0}
  n = s32[] get-dimension-size(t), dimensions={0}
  s = f32[<=2] slice(p), slice={[0:2]}
  ROOT r = (f32[<=5,3], s32[], f32[<=2]) tuple(t, n, s)
)";
  Check(body, {"2xf32=7 8"}, {"2x3xf32=7 7 7 8 8 8", "s32=2", "2xf32=7 8"});
  Check(body, {"4xf32=1 2 3 4"}, {"4x3xf32=1 1 1 2 2 2 3 3 3 4 4 4", "s32=4", "2xf32=1 2"});
}

// The dynamic dimensions survive the .bef: a loaded artifact takes a
// short argument and returns a short result, with the size leaves hidden.
TEST_F(DynamicShapesE2ETest, SerializedArtifactKeepsDynamicDimensions) {
  std::unique_ptr<hlo::HloModule> module = Parse(R"(
  p = f32[<=6] parameter(0)
  ROOT n = f32[<=6] negate(p)
)");
  ASSERT_TRUE(module);
  compiler::CompileOptions options;
  options.host = E2EDeviceKind() == runtime::DeviceKind::kHost;
  options.cuda = !options.host;
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(*module, options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  StatusOr<std::vector<uint8_t>> bytes = bef::SerializeArtifact(*artifact);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  StatusOr<bef::Artifact> loaded = bef::LoadArtifact(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const thunks::DynamicDimension param{false, 0, 0, 1}, result{true, 0, 0, 1};
  EXPECT_EQ(loaded->program.signature.dynamic_dimensions, (std::vector<thunks::DynamicDimension>{param, result}));
  auto exe = runtime::LoadedExecutable::Load(*device_, *loaded);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  ASSERT_EQ((*exe)->argument_shapes().size(), 1u);
  EXPECT_EQ((*exe)->argument_shapes()[0].ToString(false), "f32[<=6]");
  EXPECT_EQ((*exe)->result_shape().ToString(false), "f32[<=6]");
  StatusOr<std::vector<runtime::Buffer>> args = tools::LiteralToBuffers(Value("2xf32=1.5 -4"));
  ASSERT_TRUE(args.ok());
  StatusOr<runtime::ExecutionResult> r = (*exe)->ExecuteSync(*args);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->outputs.size(), 1u);
  StatusOr<Literal> out = tools::BuffersToLiteral((*exe)->result_shape(), r->outputs);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(CompareValues(*out, Value("2xf32=-1.5 4"), "result", {}).ok()) << FormatValue(*out);
}

TEST_F(DynamicShapesE2ETest, ArgumentBeyondItsBoundIsAnError) {
  const std::string m = Failure(R"(
  p = f32[<=4] parameter(0)
  ROOT n = f32[<=4] negate(p)
)",
                                {"5xf32=1 2 3 4 5"});
  EXPECT_NE(m.find("expected f32[<=4], got f32[5]"), std::string::npos) << m;
}

// A size the program computes past the result's bound is a one-line error,
// not a read past the buffer.
TEST_F(DynamicShapesE2ETest, ComputedSizeBeyondTheBoundIsAnError) {
  const std::string m = Failure(R"(
  p = f32[4] parameter(0)
  n = s32[] parameter(1)
  ROOT c = f32[<=4] set-dimension-size(p, n), dimensions={0}
)",
                                {"4xf32=1 2 3 4", "s32=9"});
  EXPECT_NE(m.find("computed size 9 for dimension 0, outside its bound 4"), std::string::npos) << m;
}

TEST_F(DynamicShapesE2ETest, UnsupportedOpOnADynamicDimensionIsNamed) {
  const std::string m = Failure(R"(
  p = f32[<=4] parameter(0)
  ROOT c = f32[<=8] concatenate(p, p), dimensions={0}
)",
                                {"2xf32=1 2"});
  EXPECT_NE(m.find("does not support concatenate on a dynamic dimension"), std::string::npos) << m;
}

}  // namespace
}  // namespace kiln::testing
