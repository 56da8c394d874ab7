// CUDA graphs end to end (docs/runtime_hal.md, runtime/cuda_graphs.h):
// compiled HLO executed several times on the emulated CUDA device with
// graphs on and off, against the reference evaluator. Covers library calls
// inside graphs (cuBLAS GEMM, cuDNN convolution, cuFFT), fresh argument
// buffers on every execution (the graph-exec update path), data-dependent
// while loops and conditionals (conditional nodes inside the graph where
// the driver has them, CUDA 12.4+; a split graph otherwise), the per-HLO
// profile with graphs on, and the driver calls per execution counted by
// the emulator (kilnEmuApiCalls): one cuGraphLaunch per segment and no
// kernel launch through the API once a segment is captured. CUDA only:
// skipped on the host registration (tests/CMakeLists.txt runs it with
// KILN_E2E_DEVICE=cuda, and again with KILN_EMU_DRIVER_VERSION=12040, IF
// nodes without SWITCH, and 12030, no conditional nodes).
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/command_segments.h"
#include "tests/e2e/e2e_test_util.h"
#include "tests/support/emulator_transfers.h"
#include "thunks/streams.h"

namespace kiln::testing {
namespace {

using runtime::Buffer;

// A GEMM, a convolution and an FFT with elementwise kernels between them:
// one straight-line segment of kernels and library calls.
constexpr const char* kLibraries = R"(
HloModule graphs_libraries
ENTRY main {
  a = f32[8,16] parameter(0)
  b = f32[16,8] parameter(1)
  x = f32[1,6,6,2] parameter(2)
  w = f32[3,3,2,4] parameter(3)
  s = c64[16] parameter(4)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[8,8] tanh(d)
  c = f32[1,6,6,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  zb = f32[1,6,6,4] broadcast(z), dimensions={}
  r = f32[1,6,6,4] maximum(c, zb)
  f = c64[16] fft(s), fft_type=FFT, fft_length={16}
  g = c64[16] multiply(f, f)
  ROOT out = (f32[8,8], f32[1,6,6,4], c64[16]) tuple(t, r, g)
}
)";

// The computations of a loop that halves v until its sum is below the
// limit, and of a conditional's two branches.
constexpr const char* kLoopAndBranches = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (f32[16], f32[]) parameter(0)
  v = f32[16] get-tuple-element(p), index=0
  limit = f32[] get-tuple-element(p), index=1
  z = f32[] constant(0)
  sum = f32[] reduce(v, z), dimensions={0}, to_apply=add
  ROOT gt = pred[] compare(sum, limit), direction=GT
}
body {
  p = (f32[16], f32[]) parameter(0)
  v = f32[16] get-tuple-element(p), index=0
  limit = f32[] get-tuple-element(p), index=1
  h = f32[] constant(0.5)
  hb = f32[16] broadcast(h), dimensions={}
  v2 = f32[16] multiply(v, hb)
  ROOT t = (f32[16], f32[]) tuple(v2, limit)
}
neg {
  p = f32[16] parameter(0)
  ROOT n = f32[16] negate(p)
}
sq {
  p = f32[16] parameter(0)
  ROOT m = f32[16] multiply(p, p)
}
)";

// Halves v until its sum is below the limit: a while loop whose trip
// count depends on the data (the predicate is read back), then a
// conditional on the result; straight-line kernels before, inside and after.
// Entry instructions from x and limit to the conditional's result, picked.
constexpr const char* kLoopThenConditional = R"(
  ax = f32[16] abs(x)
  one = f32[] constant(1)
  ob = f32[16] broadcast(one), dimensions={}
  start = f32[16] add(ax, ob)
  init = (f32[16], f32[]) tuple(start, limit)
  loop = (f32[16], f32[]) while(init), condition=cond, body=body
  v = f32[16] get-tuple-element(loop), index=0
  z = f32[] constant(0)
  total = f32[] reduce(v, z), dimensions={0}, to_apply=add
  small = pred[] compare(total, one), direction=LT
  picked = f32[16] conditional(small, v, v), true_computation=neg, false_computation=sq
)";

const std::string kControlFlow = std::string("HloModule graphs_control_flow\n") + kLoopAndBranches + R"(
ENTRY main {
  x = f32[16] parameter(0)
  limit = f32[] parameter(1)
)" + kLoopThenConditional + R"(
  ROOT out = f32[16] add(picked, v)
}
)";

// A conditional with an S32 index over three branches, the last holding a
// data-dependent while loop (a conditional node inside a conditional
// node's body); an out-of-range index runs the last branch.
constexpr const char* kIndexed = R"(
HloModule graphs_indexed
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  v = f32[8] parameter(0)
  z = f32[] constant(0)
  sum = f32[] reduce(v, z), dimensions={0}, to_apply=add
  one = f32[] constant(1)
  ROOT gt = pred[] compare(sum, one), direction=GT
}
body {
  v = f32[8] parameter(0)
  h = f32[] constant(0.5)
  hb = f32[8] broadcast(h), dimensions={}
  ROOT v2 = f32[8] multiply(v, hb)
}
b0 {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
b1 {
  p = f32[8] parameter(0)
  ROOT e = f32[8] exponential(p)
}
b2 {
  p = f32[8] parameter(0)
  a = f32[8] abs(p)
  ROOT w = f32[8] while(a), condition=cond, body=body
}
ENTRY main {
  i = s32[] parameter(0)
  x = f32[8] parameter(1)
  c = f32[8] conditional(i, x, x, x), branch_computations={b0, b1, b2}
  ROOT out = f32[8] add(c, x)
}
)";

// kControlFlow's loop and conditional beside two independent GEMMs, with
// a GEMM after the conditional (it waits for it) and one joining the first
// two: compiled with --streams=4, the loop and the conditional sit in a
// multi-stream root.
const std::string kStreamsControlFlow = std::string("HloModule graphs_streams_control_flow\n") + kLoopAndBranches + R"(
ENTRY main {
  x = f32[16] parameter(0)
  limit = f32[] parameter(1)
  a = f32[32,32] parameter(2)
  b = f32[32,32] parameter(3)
  c = f32[32,32] parameter(4)
  d = f32[32,32] parameter(5)
  e = f32[16,32] parameter(6)
  dot1 = f32[32,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot2 = f32[32,32] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)" + kLoopThenConditional + R"(
  out = f32[16] add(picked, v)
  row = f32[1,16] reshape(out)
  dot3 = f32[1,32] dot(row, e), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot4 = f32[32,32] dot(dot1, dot2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[16], f32[1,32], f32[32,32], f32[32,32]) tuple(out, dot3, dot4, dot1)
}
)";

std::optional<KilnEmuApiCalls> ApiCalls() { return EmulatorApiCalls(); }

// The driver version the emulator plays (tests/CMakeLists.txt): conditional
// nodes from 12.4 on.
int DriverVersion() {
  const char* v = std::getenv("KILN_EMU_DRIVER_VERSION");
  return v ? std::atoi(v) : CUDA_VERSION;
}
bool HasConditionalNodes() { return DriverVersion() >= 12040; }

class CudaGraphsE2ETest : public CudaOnlyE2ETest {
 protected:
  // `text` compiled for CUDA with `streams` program streams and loaded;
  // its module in *module, its program in *program when asked.
  std::unique_ptr<runtime::LoadedExecutable> Load(const std::string& text, std::unique_ptr<hlo::HloModule>* module,
                                                  int streams = 1, thunks::ThunkProgram* program = nullptr) {
    return CompileAndLoadForCuda(text, *device_, module, streams, program);
  }

  // One execution on `args` with graphs on or off: the result, or the error.
  StatusOr<Literal> Execute(const runtime::LoadedExecutable& exe, const std::vector<Buffer>& args, bool graphs,
                            bool profile = false, runtime::ExecutionProfile* out_profile = nullptr) {
    runtime::ExecuteOptions options;
    options.cuda_graphs = graphs;
    options.profile = profile;
    options.host_outputs = true;
    KILN_ASSIGN_OR_RETURN(runtime::ExecutionResult r, exe.ExecuteSync(args, options));
    if (out_profile) *out_profile = std::move(r.profile);
    return tools::BuffersToLiteral(exe.result_shape(), r.outputs);
  }

  // Five executions on fresh inputs in fresh device buffers, each with
  // graphs on and off, against the evaluator.
  void ExpectGraphsMatchEvaluator(const std::string& text, const std::vector<std::vector<Literal>>& inputs,
                                  const CompareOptions& tol) {
    std::unique_ptr<hlo::HloModule> module;
    auto exe = Load(text, &module);
    ASSERT_NE(exe, nullptr);
    for (size_t i = 0; i < inputs.size(); ++i) {
      StatusOr<Literal> expected = hlo::Evaluator().Evaluate(*module, inputs[i]);
      ASSERT_TRUE(expected.ok()) << expected.status().message();
      std::vector<Buffer> args = Upload(inputs[i]);
      StatusOr<Literal> on = Execute(*exe, args, true);
      ASSERT_TRUE(on.ok()) << on.status().message();
      StatusOr<Literal> off = Execute(*exe, args, false);
      ASSERT_TRUE(off.ok()) << off.status().message();
      Status vs_evaluator = CompareValues(*on, *expected, "graphs on, execution " + std::to_string(i), tol);
      EXPECT_TRUE(vs_evaluator.ok()) << vs_evaluator.message();
      // The same kernels and library calls on the same inputs: bitwise equal.
      Status vs_off = CompareValues(*on, *off, "graphs on vs off, execution " + std::to_string(i), {0.0, 0.0});
      EXPECT_TRUE(vs_off.ok()) << vs_off.message();
    }
  }
};

std::vector<std::vector<Literal>> Inputs(const std::string& text, int n, uint64_t seed) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok());
  std::vector<std::vector<Literal>> inputs;
  for (int i = 0; i < n && module.ok(); ++i) inputs.push_back(RandomArgs(**module, seed + i));
  return inputs;
}

TEST_F(CudaGraphsE2ETest, LibraryCallsInsideGraphsOverFreshBuffers) {
  // cuBLAS, cuDNN and cuFFT sum in other orders than the evaluator.
  ExpectGraphsMatchEvaluator(kLibraries, Inputs(kLibraries, 5, 11), {1e-4, 1e-4});
}

// kControlFlow's inputs: limits from 0.5 to 200, from many halvings (and
// the negate branch) to none (and the square branch).
std::vector<std::vector<Literal>> ControlFlowInputs() {
  auto module = hlo::ParseHloModule(kControlFlow);
  EXPECT_TRUE(module.ok());
  std::vector<std::vector<Literal>> inputs;
  for (float limit : {0.5f, 3.0f, 40.0f, 200.0f, 1.0f}) {
    std::vector<Literal> args = RandomArgs(**module, 7 + static_cast<uint64_t>(limit));
    args[1] = Literal::Scalar(ElementType::kF32, limit);
    inputs.push_back(std::move(args));
  }
  return inputs;
}

// kIndexed's inputs: every branch, and indices below and above the range.
std::vector<std::vector<Literal>> IndexedInputs() {
  auto module = hlo::ParseHloModule(kIndexed);
  EXPECT_TRUE(module.ok());
  std::vector<std::vector<Literal>> inputs;
  for (int32_t index : {0, 1, 2, -1, 7}) {
    std::vector<Literal> args = RandomArgs(**module, 40 + static_cast<uint64_t>(index + 1));
    args[0] = Literal::Scalar(ElementType::kS32, index);
    inputs.push_back(std::move(args));
  }
  return inputs;
}

// The driver calls of one execution with graphs on.
KilnEmuApiCalls CallsOfOneExecution(const std::function<void()>& execute) {
  std::optional<KilnEmuApiCalls> a = ApiCalls();
  execute();
  std::optional<KilnEmuApiCalls> b = ApiCalls();
  KilnEmuApiCalls d{};
  d.kernel_launches = b->kernel_launches - a->kernel_launches;
  d.library_calls = b->library_calls - a->library_calls;
  d.graph_launches = b->graph_launches - a->graph_launches;
  d.graph_nodes_run = b->graph_nodes_run - a->graph_nodes_run;
  d.graph_instantiations = b->graph_instantiations - a->graph_instantiations;
  d.graph_updates = b->graph_updates - a->graph_updates;
  d.stream_syncs = b->stream_syncs - a->stream_syncs;
  return d;
}

TEST_F(CudaGraphsE2ETest, WhileAndConditionalMatchTheEvaluator) {
  ExpectGraphsMatchEvaluator(kControlFlow, ControlFlowInputs(), {1e-5, 1e-5});
  ExpectGraphsMatchEvaluator(kIndexed, IndexedInputs(), {1e-5, 1e-5});
}

// With conditional nodes the loop and the conditional stay inside the one
// graph: one cuGraphLaunch per execution however many iterations run, no
// predicate read back, no kernel launched through the API; the device runs
// more nodes for more iterations. Without them they split the graph: the
// loop's graphs are launched once per iteration, predicates are read back.
TEST_F(CudaGraphsE2ETest, WhileAndConditionalInsideTheGraph) {
  std::unique_ptr<hlo::HloModule> parsed;
  auto exe = Load(kControlFlow, &parsed);
  ASSERT_NE(exe, nullptr);
  const size_t split = runtime::CommandSegments(exe->program()).count();
  const size_t whole = runtime::CommandSegments(exe->program(), true).count();
  EXPECT_GE(split, 4u);
  EXPECT_EQ(whole, 1u);
  std::vector<std::vector<Literal>> inputs = ControlFlowInputs();
  std::vector<uint64_t> nodes_run;
  for (size_t i : {0u, 3u}) {  // limit 0.5 (many iterations) and 200 (none)
    std::vector<Buffer> args = Upload(inputs[i]);
    for (int k = 0; k < 2; ++k) ASSERT_TRUE(Execute(*exe, args, true).ok());  // direct, then captured
    KilnEmuApiCalls c = CallsOfOneExecution([&] { ASSERT_TRUE(Execute(*exe, args, true).ok()); });
    EXPECT_EQ(c.kernel_launches, 0u);
    if (HasConditionalNodes()) {
      EXPECT_EQ(c.graph_launches, 1u) << "input " << i;
      EXPECT_LE(c.stream_syncs, 1u) << "input " << i;  // the execution's end only
    } else {
      EXPECT_GT(c.graph_launches, i == 0 ? 4u : 2u) << "input " << i;
      EXPECT_GT(c.stream_syncs, 1u) << "input " << i;  // the predicate and branch index reads
    }
    nodes_run.push_back(c.graph_nodes_run);
  }
  if (HasConditionalNodes()) {
    EXPECT_GT(nodes_run[0], nodes_run[1]);  // the iterations ran on the device
  }
}

// Fresh buffers re-capture a graph with conditional nodes, and the exec
// graph takes the new one through cuGraphExecUpdate (bodies included).
TEST_F(CudaGraphsE2ETest, ConditionalNodesUpdateOverFreshBuffers) {
  std::unique_ptr<hlo::HloModule> parsed;
  auto exe = Load(kIndexed, &parsed);
  ASSERT_NE(exe, nullptr);
  std::vector<std::vector<Literal>> inputs = IndexedInputs();
  std::vector<Buffer> args = Upload(inputs[2]);
  for (int k = 0; k < 2; ++k) ASSERT_TRUE(Execute(*exe, args, true).ok());
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<Buffer> fresh = Upload(inputs[i]);
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(*parsed, inputs[i]);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    StatusOr<Literal> on = Literal();
    KilnEmuApiCalls c = CallsOfOneExecution([&] { on = Execute(*exe, fresh, true); });
    ASSERT_TRUE(on.ok()) << on.status().message();
    Status same = CompareValues(*on, *expected, "index input " + std::to_string(i), {1e-5, 1e-5});
    EXPECT_TRUE(same.ok()) << same.message();
    if (!HasConditionalNodes()) continue;  // (the re-capture's launches are recorded, not run)
    EXPECT_EQ(c.graph_launches, 1u) << "input " << i;
    EXPECT_EQ(c.graph_updates, 1u) << "input " << i;
    EXPECT_EQ(c.graph_instantiations, 0u) << "input " << i;
  }
}

// A profiled execution splits the graph at the loop and the conditional
// (a conditional body takes no event-record nodes) and keeps every row.
TEST_F(CudaGraphsE2ETest, ProfileRowsWithControlFlow) {
  std::unique_ptr<hlo::HloModule> module;
  auto exe = Load(kControlFlow, &module);
  ASSERT_NE(exe, nullptr);
  std::vector<Buffer> args = Upload(ControlFlowInputs()[1]);
  runtime::ExecutionProfile off, on;
  ASSERT_TRUE(Execute(*exe, args, false, true, &off).ok());
  ASSERT_TRUE(Execute(*exe, args, true).ok());  // unprofiled graphs first
  for (int i = 0; i < 3; ++i) {
    auto r = Execute(*exe, args, true, true, &on);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(on.thunks.size(), off.thunks.size()) << "execution " << i;
    for (size_t t = 0; t < on.thunks.size(); ++t) EXPECT_EQ(on.thunks[t].name, off.thunks[t].name);
  }
}

// The per-HLO profile with graphs on has the rows it has with graphs off:
// the same thunks in the same order, each with its own modeled time and
// launch counters (event-record nodes between the thunks' nodes).
TEST_F(CudaGraphsE2ETest, ProfileRowsWithGraphsOn) {
  std::unique_ptr<hlo::HloModule> module;
  auto exe = Load(kLibraries, &module);
  ASSERT_NE(exe, nullptr);
  std::vector<Buffer> args = Upload(RandomArgs(*module, 3));
  runtime::ExecutionProfile off, on;
  ASSERT_TRUE(Execute(*exe, args, false, true, &off).ok());
  for (int i = 0; i < 3; ++i) {  // direct, captured, replayed
    auto r = Execute(*exe, args, true, true, &on);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(on.thunks.size(), off.thunks.size()) << "execution " << i;
    for (size_t t = 0; t < on.thunks.size(); ++t) {
      EXPECT_EQ(on.thunks[t].name, off.thunks[t].name);
      EXPECT_EQ(on.thunks[t].kind, off.thunks[t].kind);
      EXPECT_EQ(on.thunks[t].duration, off.thunks[t].duration) << on.thunks[t].name;  // modeled
      ASSERT_TRUE(on.thunks[t].counters.has_value());
      EXPECT_EQ(on.thunks[t].counters->launches, off.thunks[t].counters->launches) << on.thunks[t].name;
    }
    EXPECT_EQ(on.total, off.total);
  }
}

// Driver calls per execution: with graphs, after the first (direct) and
// second (captured) executions, each execution makes one cuGraphLaunch
// per segment and no kernel launch or library call through the API; with
// fresh buffers it captures again and updates the exec graph instead of
// instantiating a new one.
TEST_F(CudaGraphsE2ETest, OneGraphLaunchPerSegmentPerExecution) {
  std::unique_ptr<hlo::HloModule> module;
  auto exe = Load(kLibraries, &module);
  ASSERT_NE(exe, nullptr);
  const size_t segments = runtime::CommandSegments(exe->program()).count();
  ASSERT_EQ(segments, 1u);  // straight-line: the whole program
  std::vector<Buffer> args = Upload(RandomArgs(*module, 5));
  std::optional<KilnEmuApiCalls> before = ApiCalls();
  ASSERT_TRUE(before.has_value());
  ASSERT_TRUE(Execute(*exe, args, false).ok());
  std::optional<KilnEmuApiCalls> after_off = ApiCalls();
  const uint64_t direct_work = after_off->kernel_launches + after_off->library_calls -
                               before->kernel_launches - before->library_calls;
  EXPECT_GE(direct_work, 6u);  // at least: gemm, tanh, conv, max, fft, multiply
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(Execute(*exe, args, true).ok());  // direct, then captured
  for (int i = 0; i < 3; ++i) {
    std::optional<KilnEmuApiCalls> a = ApiCalls();
    ASSERT_TRUE(Execute(*exe, args, true).ok());
    std::optional<KilnEmuApiCalls> b = ApiCalls();
    EXPECT_EQ(b->graph_launches - a->graph_launches, segments);
    EXPECT_EQ(b->kernel_launches - a->kernel_launches, 0u);
    EXPECT_EQ(b->library_calls - a->library_calls, 0u);
    EXPECT_EQ(b->graph_nodes_run - a->graph_nodes_run, direct_work);
    EXPECT_EQ(b->graph_instantiations, a->graph_instantiations);
  }
  // Fresh argument buffers: captured again, the exec graph updated.
  std::optional<KilnEmuApiCalls> a = ApiCalls();
  std::vector<Buffer> fresh = Upload(RandomArgs(*module, 6));
  ASSERT_TRUE(Execute(*exe, fresh, true).ok());
  std::optional<KilnEmuApiCalls> b = ApiCalls();
  EXPECT_EQ(b->graph_updates - a->graph_updates, 1u);
  EXPECT_EQ(b->graph_instantiations, a->graph_instantiations);
  EXPECT_EQ(b->graph_launches - a->graph_launches, segments);
  // Every launch and library call of the re-capture was recorded, not run.
  EXPECT_EQ(b->kernel_launches + b->library_calls - a->kernel_launches - a->library_calls, direct_work);
  EXPECT_GE(b->captured - a->captured, direct_work);
  EXPECT_EQ(b->graph_nodes_run - a->graph_nodes_run, b->captured - a->captured);
}

// A multi-stream root keeps its data-dependent loop and conditional inside
// the graph: the program streams join before each conditional node and
// fork again after it, all inside one capture. With conditional nodes an
// execution is one cuGraphLaunch with no predicate read back, over the
// same and over fresh buffers (an exec update); results equal the
// evaluator's, with graphs on and off. Without conditional nodes the graph
// splits there as in a one-stream program.
TEST_F(CudaGraphsE2ETest, MultiStreamRootKeepsConditionalNodes) {
  std::unique_ptr<hlo::HloModule> module;
  thunks::ThunkProgram program;
  auto exe = Load(kStreamsControlFlow, &module, 4, &program);
  ASSERT_NE(exe, nullptr);
  ASSERT_GE(program.num_streams, 2) << thunks::StreamSummary(program);
  ASSERT_GE(program.num_events, 1) << thunks::StreamSummary(program);
  int root_control_flow = 0;
  for (const thunks::Thunk& t : program.root.thunks) {
    if (t.kind() == thunks::ThunkKind::kConditional) ++root_control_flow;
    if (t.kind() == thunks::ThunkKind::kWhile && !t.As<thunks::WhileThunk>()->trip_count) ++root_control_flow;
  }
  ASSERT_EQ(root_control_flow, 2) << "the loop and the conditional are root thunks";
  EXPECT_EQ(runtime::CommandSegments(program, true).count(), 1u);
  EXPECT_GE(runtime::CommandSegments(program).count(), 3u);

  auto inputs = [&](float limit, uint64_t seed) {
    std::vector<Literal> args = RandomArgs(*module, seed);
    args[1] = Literal::Scalar(ElementType::kF32, limit);
    return args;
  };
  uint64_t seed = 500;
  for (float limit : {0.5f, 40.0f, 200.0f}) {  // many iterations, some, none
    SCOPED_TRACE("limit " + std::to_string(limit));
    std::vector<Literal> args = inputs(limit, seed++);
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(*module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    std::vector<Buffer> buffers = Upload(args);
    StatusOr<Literal> off = Execute(*exe, buffers, false);
    ASSERT_TRUE(off.ok()) << off.status().message();
    for (int k = 0; k < 2; ++k) ASSERT_TRUE(Execute(*exe, buffers, true).ok());  // direct, then captured
    StatusOr<Literal> on = Literal();
    KilnEmuApiCalls c = CallsOfOneExecution([&] { on = Execute(*exe, buffers, true); });
    ASSERT_TRUE(on.ok()) << on.status().message();
    Status vs_evaluator = CompareValues(*on, *expected, "graphs on", {1e-4, 1e-4});
    EXPECT_TRUE(vs_evaluator.ok()) << vs_evaluator.message();
    Status vs_off = CompareValues(*on, *off, "graphs on vs off", {0.0, 0.0});
    EXPECT_TRUE(vs_off.ok()) << vs_off.message();
    EXPECT_EQ(c.kernel_launches, 0u);
    EXPECT_EQ(c.library_calls, 0u);
    if (HasConditionalNodes()) {
      EXPECT_EQ(c.graph_launches, 1u);
      EXPECT_LE(c.stream_syncs, 1u);  // the execution's end only
    } else {
      EXPECT_GE(c.graph_launches, 3u);
      EXPECT_GT(c.stream_syncs, 1u);  // the predicate and branch index reads
    }
  }
  // Fresh buffers: captured again, the exec graph updated, not rebuilt.
  std::vector<Literal> args = inputs(3.0f, seed);
  StatusOr<Literal> expected = hlo::Evaluator().Evaluate(*module, args);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  std::vector<Buffer> fresh = Upload(args);
  StatusOr<Literal> on = Literal();
  KilnEmuApiCalls c = CallsOfOneExecution([&] { on = Execute(*exe, fresh, true); });
  ASSERT_TRUE(on.ok()) << on.status().message();
  Status same = CompareValues(*on, *expected, "fresh buffers", {1e-4, 1e-4});
  EXPECT_TRUE(same.ok()) << same.message();
  if (HasConditionalNodes()) {
    EXPECT_EQ(c.graph_launches, 1u);
    EXPECT_EQ(c.graph_updates, 1u);
    EXPECT_EQ(c.graph_instantiations, 0u);
  }
}

}  // namespace
}  // namespace kiln::testing
