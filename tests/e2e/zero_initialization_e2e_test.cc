// No per-execution zeroing, end to end: the compiler marks which
// allocations must start zeroed (thunks/initialization_analysis.h), the
// runtime zeroes only those. Every run here fills the memory it does not
// zero with a different poison byte (ExecuteOptions::poison_uninitialized),
// so a read before a write would show as a wrong result against the
// reference evaluator. Under the emulated CUDA device the emulator's own
// memset counters show what the runtime zeroed. Runs on the host and
// (KILN_E2E_DEVICE=cuda) on the emulated CUDA device.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>

#include "compiler/driver/compiler.h"
#include "runtime/host_execution.h"
#include "runtime/runtime.h"
#include "tests/e2e/e2e_test_util.h"
#include "tests/support/emulator_transfers.h"
#include "tests/support/sample_artifact.h"
#include "thunks/initialization_analysis.h"

namespace kiln::testing {
namespace {

// The emulator's memsets so far (calls, bytes) on the emulated CUDA device.
std::optional<std::pair<uint64_t, uint64_t>> EmulatorMemsets() {
  if (E2EDeviceKind() != runtime::DeviceKind::kCuda) return std::nullopt;
  std::optional<KilnEmuTransferCounters> c = EmulatorTransferCounters();
  if (!c) return std::nullopt;
  return std::make_pair(c->memsets, c->memset_bytes);
}

constexpr const char* kSoftmaxThenDot = R"(
HloModule softmax_dot
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[32,48] parameter(0)
  w = f32[48,16] parameter(1)
  ninf = f32[] constant(-inf)
  mx = f32[32] reduce(x, ninf), dimensions={1}, to_apply=max
  bm = f32[32,48] broadcast(mx), dimensions={0}
  xm = f32[32,48] subtract(x, bm)
  e = f32[32,48] exponential(xm)
  zero = f32[] constant(0)
  s = f32[32] reduce(e, zero), dimensions={1}, to_apply=add
  bs = f32[32,48] broadcast(s), dimensions={0}
  p = f32[32,48] divide(e, bs)
  ROOT d = f32[32,16] dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// A loop whose state is updated in place by a dynamic-update-slice, and a
// scatter into a copy of its operand: in-place kernels that write only
// part of their output.
constexpr const char* kInPlaceUpdates = R"(
HloModule in_place
cond {
  st = (s32[], f32[8,16]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  st = (s32[], f32[8,16]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  buf = f32[8,16] get-tuple-element(st), index=1
  fi = f32[] convert(i)
  row = f32[1,16] broadcast(fi), dimensions={}
  z = s32[] constant(0)
  upd = f32[8,16] dynamic-update-slice(buf, row, i, z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT next = (s32[], f32[8,16]) tuple(i1, upd)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,16] parameter(0)
  idx = s32[3,1] parameter(1)
  updates = f32[3,16] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[8,16]) tuple(zero, x)
  loop = (s32[], f32[8,16]) while(init), condition=cond, body=body
  filled = f32[8,16] get-tuple-element(loop), index=1
  sc = f32[8,16] scatter(filled, idx, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = f32[8,16] multiply(sc, x)
})";

class ZeroInitializationE2ETest : public E2EDeviceTest {
 protected:
  bef::Artifact Compile(const hlo::HloModule& module) {
    compiler::CompileOptions options;
    options.host = E2EDeviceKind() == runtime::DeviceKind::kHost;
    options.cuda = !options.host;
    options.tf32 = false;  // compared with the evaluator's f32 arithmetic
    auto artifact = compiler::CompileModule(module, options);
    EXPECT_TRUE(artifact.ok()) << artifact.status().message();
    return artifact.ok() ? std::move(*artifact) : bef::Artifact{};
  }

  // Runs `artifact` three times on the same inputs, each with a different
  // poison byte, and compares every result with the evaluator.
  void ExpectCorrectWithPoison(const std::string& text, const CompareOptions& tol) {
    auto module = hlo::ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().message();
    std::vector<Literal> args = RandomArgs(**module, 3);
    if (text.find("scatter") != std::string::npos) {
      // In-range rows for the scatter's indices.
      int32_t rows[3] = {1, 5, 6};
      std::memcpy(args[1].raw(), rows, sizeof rows);
    }
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    bef::Artifact artifact = Compile(**module);
    int unzeroed = 0;
    for (const thunks::Allocation& a : artifact.program.allocations) unzeroed += !a.zero_initialize;
    EXPECT_GT(unzeroed, 0) << "the compiler should prove some allocation needs no zeroing";
    auto exe = runtime::LoadedExecutable::Load(*device_, artifact);
    ASSERT_TRUE(exe.ok()) << exe.status().message();
    for (uint8_t poison : {0xFF, 0x7F, 0xA5}) {
      std::vector<runtime::Buffer> buffers;
      for (const Literal& arg : args) {
        auto leaves = tools::LiteralToBuffers(arg);
        ASSERT_TRUE(leaves.ok()) << leaves.status().message();
        for (runtime::Buffer& b : *leaves) buffers.push_back(std::move(b));
      }
      runtime::ExecuteOptions options;
      options.poison_uninitialized = poison;
      auto r = runtime::ExecuteWithHostBuffers(**exe, std::move(buffers), options);
      ASSERT_TRUE(r.ok()) << r.status().message();
      auto actual = tools::BuffersToLiteral((*exe)->result_shape(), r->outputs);
      ASSERT_TRUE(actual.ok()) << actual.status().message();
      Status s = CompareValues(*actual, *expected, "result", tol);
      EXPECT_TRUE(s.ok()) << "poison " << int(poison) << ": " << s.message();
    }
  }
};

TEST_F(ZeroInitializationE2ETest, SoftmaxAndDotAreCorrectOverPoisonedMemory) {
  ExpectCorrectWithPoison(kSoftmaxThenDot, {.atol = 1e-5, .rtol = 1e-5});
}

TEST_F(ZeroInitializationE2ETest, InPlaceUpdatesAreCorrectOverPoisonedMemory) {
  ExpectCorrectWithPoison(kInPlaceUpdates, {});
}

// Before: every temporary and output zeroed per execution; after: none of
// this module's. The emulator counts the memsets either way.
TEST_F(ZeroInitializationE2ETest, OrdinaryModuleZeroesNothing) {
  auto module = hlo::ParseHloModule(kSoftmaxThenDot);
  ASSERT_TRUE(module.ok()) << module.status().message();
  bef::Artifact analyzed = Compile(**module);
  int64_t memset_thunks = 0, writable_bytes = 0;
  thunks::ForEachThunk(analyzed.program.root,
                       [&](const thunks::Thunk& t, int) { memset_thunks += t.kind() == thunks::ThunkKind::kMemset; });
  for (const thunks::Allocation& a : analyzed.program.allocations) {
    EXPECT_FALSE(a.zero_initialize) << a.ToString();
    if (!a.is_parameter() && !a.is_constant()) writable_bytes += a.size;
  }
  ASSERT_EQ(memset_thunks, 0) << "the module should have no memsets of its own";
  bef::Artifact zero_all = analyzed;
  for (thunks::Allocation& a : zero_all.program.allocations) a.zero_initialize = true;

  auto memsets_of_one_run = [&](const bef::Artifact& artifact) -> std::optional<std::pair<uint64_t, uint64_t>> {
    auto exe = runtime::LoadedExecutable::Load(*device_, artifact);
    EXPECT_TRUE(exe.ok()) << exe.status().message();
    if (!exe.ok()) return std::nullopt;
    std::vector<runtime::Buffer> args;
    for (const Shape& s : (*exe)->argument_shapes()) args.push_back(*runtime::Buffer::Allocate(s));
    runtime::ExecuteOptions options;
    options.host_outputs = true;
    EXPECT_TRUE((*exe)->ExecuteSync(args, options).ok());  // first run: workspaces
    auto before = EmulatorMemsets();
    EXPECT_TRUE((*exe)->ExecuteSync(args, options).ok());
    auto after = EmulatorMemsets();
    if (!before || !after) return std::nullopt;
    return std::make_pair(after->first - before->first, after->second - before->second);
  };
  auto with_analysis = memsets_of_one_run(analyzed);
  auto zeroing_all = memsets_of_one_run(zero_all);
  if (!with_analysis || !zeroing_all) GTEST_SKIP() << "memsets are counted by the CUDA emulator";
  EXPECT_EQ(with_analysis->first, 0u);
  EXPECT_EQ(with_analysis->second, 0u);
  EXPECT_EQ(zeroing_all->second, static_cast<uint64_t>(writable_bytes));
}

// A hand-built program that reads a temporary no thunk wrote (a copy of
// a1 into the output): a1 must keep being zeroed, the output need not be.
TEST_F(ZeroInitializationE2ETest, ReadBeforeWriteKeepsItsZeroing) {
  bef::Artifact artifact;
  thunks::ThunkProgram& p = artifact.program;
  p = ParameterTempOutputProgram({MakeThunk("copy.1", thunks::CopyThunk{S(1, 0, 64), S(2, 0, 64)})});
  thunks::MarkZeroInitializedAllocations(p);
  EXPECT_TRUE(p.allocations[1].zero_initialize);
  EXPECT_FALSE(p.allocations[2].zero_initialize);
  auto exe = runtime::LoadedExecutable::Load(*device_, artifact);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  for (int run = 0; run < 2; ++run) {
    runtime::ExecuteOptions options;
    options.poison_uninitialized = 0xEE;
    auto r = runtime::ExecuteWithHostBuffers(**exe, {*runtime::Buffer::Allocate(p.signature.parameters[0])},
                                             options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::vector<uint8_t> bytes(r->outputs[0].data(), r->outputs[0].data() + 64);
    EXPECT_EQ(bytes, std::vector<uint8_t>(64, 0)) << "run " << run;
  }
}

}  // namespace
}  // namespace kiln::testing
