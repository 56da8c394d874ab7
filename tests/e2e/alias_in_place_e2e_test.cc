// input_output_alias and in-place buffers end to end: HLO -> bef-compile's
// pipeline -> the host runtime, results against the reference evaluator on
// the same seeded inputs. Also checks what the program's allocations say
// (a donated parameter is the output; no output allocation besides it) and
// that the runtime leaves an undonated may-alias argument untouched.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/driver/compiler.h"
#include "runtime/runtime.h"
#include "tests/e2e/e2e_test_util.h"
#include "tools/hlo-run/device_runner.h"

namespace kiln::testing {
namespace {

struct Compiled {
  std::unique_ptr<hlo::HloModule> module;
  bef::Artifact artifact;
};

class AliasInPlaceE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = runtime::Device::Create(E2EDeviceKind());
    ASSERT_TRUE(device.ok()) << device.status().message();
    device_ = std::move(*device);
  }

  Compiled Compile(const std::string& text) {
    Compiled c;
    auto module = hlo::ParseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) return c;
    c.module = std::move(*module);
    compiler::CompileOptions options;
    options.host = E2EDeviceKind() == runtime::DeviceKind::kHost;
    options.cuda = E2EDeviceKind() == runtime::DeviceKind::kCuda;
    auto artifact = compiler::CompileModule(*c.module, options);
    EXPECT_TRUE(artifact.ok()) << artifact.status().message();
    if (artifact.ok()) c.artifact = std::move(*artifact);
    return c;
  }

  // Runs with every argument donated or none; returns the result and
  // whether output 0 lives in argument 0's memory.
  StatusOr<Literal> Run(const Compiled& c, const std::vector<Literal>& args, bool donate, bool* output_in_arg0,
                        std::vector<runtime::Buffer>* kept_args = nullptr) {
    KILN_ASSIGN_OR_RETURN(auto exe, runtime::LoadedExecutable::Load(*device_, c.artifact));
    std::vector<runtime::Buffer> buffers;
    for (const Literal& arg : args) {
      KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> leaves, tools::LiteralToBuffers(arg));
      for (runtime::Buffer& b : leaves) buffers.push_back(std::move(b));
    }
    if (kept_args) *kept_args = buffers;
    const uint8_t* arg0 = buffers.empty() ? nullptr : buffers[0].data();
    runtime::ExecuteOptions exec;
    exec.donate.assign(buffers.size(), donate);
    exec.host_outputs = true;  // a donated host argument is updated in place
    KILN_ASSIGN_OR_RETURN(runtime::ExecutionResult r, exe->ExecuteSync(std::move(buffers), exec));
    if (output_in_arg0) *output_in_arg0 = !r.outputs.empty() && r.outputs[0].data() == arg0;
    return tools::BuffersToLiteral(c.artifact.program.signature.result, r.outputs);
  }

  void ExpectMatches(const Compiled& c, uint64_t seed, bool donate, bool* output_in_arg0 = nullptr) {
    std::vector<Literal> args = RandomArgs(*c.module, seed);
    auto expected = hlo::Evaluator().Evaluate(*c.module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    bool in_arg0 = false;
    auto actual = Run(c, args, donate, &in_arg0);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    Status s = CompareValues(*actual, *expected, "result", {});
    EXPECT_TRUE(s.ok()) << s.message();
    if (output_in_arg0) *output_in_arg0 = in_arg0;
  }

  // Allocations that are outputs without being parameters.
  static int OutputOnlyAllocations(const Compiled& c) {
    int n = 0;
    for (const thunks::Allocation& a : c.artifact.program.allocations) n += a.is_output() && !a.is_parameter();
    return n;
  }

  // Top-level thunks whose profile name ends in `suffix` (".in_place":
  // the copy before an in-place kernel; ".result": an output copy).
  static int ThunksEndingIn(const Compiled& c, const std::string& suffix) {
    int n = 0;
    for (const thunks::Thunk& t : c.artifact.program.root.thunks) {
      const std::string& name = t.info.profile_name;
      n += name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    }
    return n;
  }

  std::unique_ptr<runtime::Device> device_;
};

constexpr const char* kIncrement = R"(
HloModule inc, input_output_alias={ {}: (0, {}, must-alias) }
ENTRY main {
  p0 = f32[64] parameter(0)
  one = f32[] constant(1)
  ob = f32[64] broadcast(one), dimensions={}
  ROOT y = f32[64] add(p0, ob)
})";

TEST_F(AliasInPlaceE2ETest, DonatedIncrementRunsInParameterBuffer) {
  Compiled c = Compile(kIncrement);
  ASSERT_FALSE(c.artifact.program.allocations.empty());
  EXPECT_EQ(OutputOnlyAllocations(c), 0);
  bool in_arg0 = false;
  ExpectMatches(c, 3, /*donate=*/true, &in_arg0);
  EXPECT_TRUE(in_arg0) << "the donated argument's memory should hold the result";
}

TEST_F(AliasInPlaceE2ETest, MustAliasWithoutDonationIsRefused) {
  Compiled c = Compile(kIncrement);
  std::vector<Literal> args = RandomArgs(*c.module, 1);
  bool in_arg0 = false;
  EXPECT_FALSE(Run(c, args, /*donate=*/false, &in_arg0).ok());
}

// may-alias without donation: the runtime runs on a private copy and the
// caller's argument keeps its value.
TEST_F(AliasInPlaceE2ETest, MayAliasWithoutDonationLeavesArgumentIntact) {
  std::string text = kIncrement;
  text.replace(text.find("must-alias"), 10, "may-alias");
  Compiled c = Compile(text);
  std::vector<Literal> args = RandomArgs(*c.module, 5);
  auto expected = hlo::Evaluator().Evaluate(*c.module, args);
  ASSERT_TRUE(expected.ok());
  std::vector<runtime::Buffer> kept;
  bool in_arg0 = true;
  auto actual = Run(c, args, /*donate=*/false, &in_arg0, &kept);
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  EXPECT_TRUE(CompareValues(*actual, *expected, "result", {}).ok());
  EXPECT_FALSE(in_arg0);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(std::memcmp(kept[0].data(), args[0].raw(), args[0].raw_size()), 0) << "argument was overwritten";
}

// p0 = dynamic-update-slice(p0, u, i), donated: the update happens in the
// parameter's buffer.
TEST_F(AliasInPlaceE2ETest, DonatedDynamicUpdateSlice) {
  Compiled c = Compile(R"(
HloModule dus, input_output_alias={ {}: (0, {}, must-alias) }
ENTRY main {
  p0 = f32[32,8] parameter(0)
  u = f32[4,8] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[32,8] dynamic-update-slice(p0, u, i, z)
})");
  EXPECT_EQ(OutputOnlyAllocations(c), 0);
  EXPECT_EQ(ThunksEndingIn(c, ".in_place"), 0);
  EXPECT_EQ(c.artifact.program.root.thunks.size(), 1u);  // the kernel alone
  bool in_arg0 = false;
  ExpectMatches(c, 7, /*donate=*/true, &in_arg0);
  EXPECT_TRUE(in_arg0);
}

// The dynamic-update-slice operand is read again afterwards: the emitter
// copies it into the result before the in-place kernel.
TEST_F(AliasInPlaceE2ETest, DynamicUpdateSliceOfLiveOperandIsCopied) {
  Compiled c = Compile(R"(
HloModule dus_live
ENTRY main {
  x = f32[32] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  t = f32[32] exponential(x)
  d = f32[32] dynamic-update-slice(t, u, i)
  ROOT r = f32[32] add(d, t)
})");
  ExpectMatches(c, 11, /*donate=*/false);
  // Unless fusion folded the update into the consumer, t is copied first.
  bool dus_kernel = false;
  for (const thunks::Thunk& t : c.artifact.program.root.thunks)
    for (const thunks::HloInstructionRef& h : t.info.hlo) dus_kernel |= h.opcode == "dynamic-update-slice";
  if (dus_kernel) EXPECT_EQ(ThunksEndingIn(c, ".in_place"), 1);
}

// Output {0} is written while the donated p0 is still read: copied at the end.
TEST_F(AliasInPlaceE2ETest, AliasedOutputCopiedAfterLastRead) {
  Compiled c = Compile(R"(
HloModule late, input_output_alias={ {0}: (0, {}, must-alias) }
ENTRY main {
  p0 = f32[16,16] parameter(0)
  e = f32[16,16] exponential(p0)
  t = f32[16,16] transpose(p0), dimensions={1,0}
  m = f32[16,16] multiply(t, e)
  ROOT r = (f32[16,16], f32[16,16]) tuple(e, m)
})");
  EXPECT_EQ(OutputOnlyAllocations(c), 1);  // {1} only; {0} is the parameter
  EXPECT_EQ(ThunksEndingIn(c, ".result"), 1);
  ExpectMatches(c, 13, /*donate=*/true);
}

// A while loop whose init value dies at the loop: the state starts in place.
TEST_F(AliasInPlaceE2ETest, WhileStateInInitBuffer) {
  Compiled c = Compile(R"(
HloModule loop
cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  h = f32[16] constant({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16})
  w = f32[16] multiply(v, h)
  ROOT t = (s32[], f32[16]) tuple(j, w)
}
ENTRY main {
  x = f32[16] parameter(0)
  z = s32[] constant(0)
  v = f32[16] sine(x)
  init = (s32[], f32[16]) tuple(z, v)
  w = (s32[], f32[16]) while(init), condition=cond, body=body
  ROOT o = f32[16] get-tuple-element(w), index=1
})");
  ExpectMatches(c, 17, /*donate=*/false);
}

}  // namespace
}  // namespace kiln::testing
