// dispatch_bench: the runtime's cost of dispatching one kernel thunk.
//
//   dispatch_bench [--iterations=N] [--chain=K]
//
// The kernel is as small as a kernel gets (f32[4] add(p0, p1), compiled by
// kiln::codegen::CompileKernels for the host and, when CUDA code generation
// works here, for CUDA), so an execution's time is almost all dispatch. The
// artifact is hand-built rather than compiled from HLO: kernel fusion would
// merge any chain of adds into one kernel. Its program is a chain of K
// (default 1000) KernelThunks, each adding p1 to the previous result and
// alternating between the output buffer and a temporary, so the result is
// p0 + K * p1, which is checked (exactly representable in f32) before any
// timing counts. A 1-thunk program measures the fixed per-execution cost
// (argument checks, allocations, stream hand-off, Event), so
//   per thunk   = total(K) / K       (what the issue's < 5 us target names)
//   marginal    = (total(K) - total(1)) / (K - 1)
// are both printed, as min and median over N timed ExecuteSync calls
// (profile=false) after a warm-up. Devices: the host always; CUDA when
// Device::Create(kCuda) succeeds, else "cuda: skipped (<reason>)".
//
// On CUDA the chain runs twice, with CUDA graphs on (the default: the
// straight-line program is captured once and replayed with one
// cuGraphLaunch, runtime/cuda_graphs.h) and off (one cuLaunchKernel per
// thunk). Two argument placements: host inputs and host outputs (the
// graph's buffer addresses never change) and device outputs (a fresh
// output buffer per execution: the graph is captured again and the exec
// updated). Under the emulator the host time includes emulating the
// kernels, so the figure that carries over to a GPU is the driver calls per
// execution (kilnEmuApiCalls: calls that put work on a stream, those
// recorded into graphs, graph launches and updates); the device time per
// execution is the H100 timing model's ("modeled"), which charges every
// kernel its launch cost with or without graphs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/kernel_codegen.h"
#include "compiler/hlo/parser.h"
#include "runtime/runtime.h"
#include "serialization/artifact.h"
#include "tests/support/emulator_transfers.h"

namespace {

namespace th = kiln::thunks;
using kiln::ElementType;
using kiln::Shape;
using kiln::StatusOr;

constexpr char kKernelName[] = "dispatch_add_f32x4";
constexpr int64_t kElements = 4;
constexpr int64_t kBytes = kElements * 4;  // f32[4]

constexpr char kKernelHlo[] = R"(HloModule dispatch_add
ENTRY add {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT add = f32[4] add(p0, p1)
}
)";

struct Kernels {
  kiln::codegen::CodegenResult result;
  std::string cuda_note;  // why there is no CUDA image, if there is none
};

th::LaunchDims ToThunkDims(const kiln::codegen::LaunchDims& d) {
  return {{d.grid[0], d.grid[1], d.grid[2]}, {d.block[0], d.block[1], d.block[2]}, d.shared_mem_bytes};
}

// Host image always; CUDA image too when CUDA code generation succeeds.
StatusOr<Kernels> CompileAddKernel(const kiln::hlo::HloModule& module) {
  std::vector<kiln::codegen::KernelSpec> specs = {{kKernelName, module.entry()}};
  kiln::codegen::CodegenOptions options;
  options.cuda = true;
  StatusOr<kiln::codegen::CodegenResult> both = kiln::codegen::CompileKernels(specs, options);
  Kernels k;
  if (both.ok()) {
    k.result = std::move(*both);
    if (k.result.cuda && k.result.cuda->cubin.empty()) k.cuda_note = "PTX only, no ptxas";
    return k;
  }
  k.cuda_note = "CUDA codegen failed: " + both.status().message();
  options.cuda = false;
  KILN_ASSIGN_OR_RETURN(k.result, kiln::codegen::CompileKernels(specs, options));
  return k;
}

// Allocations: a0 = p0, a1 = p1, a2 = output, a3 = temporary (16 bytes each).
// Thunk i reads the previous result (p0 for i = 0) and p1 and writes a2 or
// a3, chosen so the last thunk writes a2.
th::ThunkProgram ChainProgram(int chain, const th::LaunchDims& launch) {
  th::ThunkProgram p;
  p.allocations = {{kBytes, 64, th::ParameterRef{0, {}}, std::nullopt, std::nullopt},
                   {kBytes, 64, th::ParameterRef{1, {}}, std::nullopt, std::nullopt},
                   {kBytes, 64, std::nullopt, kiln::ShapeIndex{}, std::nullopt},
                   {kBytes, 64, std::nullopt, std::nullopt, std::nullopt}};
  const Shape f32x4(ElementType::kF32, {kElements});
  auto slice = [](int32_t a) { return th::BufferSlice{a, 0, kBytes}; };
  p.signature.parameters = {f32x4, f32x4};
  p.signature.result = f32x4;
  p.signature.parameter_leaves = {{0, {}, slice(0)}, {1, {}, slice(1)}};
  p.signature.result_leaves = {{{}, slice(2)}};
  int32_t source = 0;
  for (int i = 0; i < chain; ++i) {
    const int32_t dest = (chain - 1 - i) % 2 == 0 ? 2 : 3;
    th::Thunk t;
    t.info.profile_name = "add." + std::to_string(i);
    t.info.hlo = {{"add", "add", ""}};
    t.body = th::KernelThunk{kKernelName,
                             {{slice(source), false}, {slice(1), false}, {slice(dest), true}},
                             launch};
    p.root.thunks.push_back(std::move(t));
    source = dest;
  }
  return p;
}

kiln::bef::Artifact ChainArtifact(const kiln::codegen::CodegenResult& kernels, int chain) {
  kiln::bef::Artifact a;
  a.producer = "kiln dispatch_bench";
  th::LaunchDims launch;  // host: all ones
  if (kernels.host) {
    kiln::bef::KernelImage image;
    image.target = "host-x86_64";
    image.kind = kiln::bef::TargetKind::kHost;
    image.shared_object = kernels.host->shared_object;
    image.kernels = {{kKernelName, ToThunkDims(kernels.host->kernels.at(0).launch)}};
    a.targets.push_back(image.target);
    a.kernel_images.push_back(std::move(image));
  }
  if (kernels.cuda) {
    kiln::bef::KernelImage image;
    image.target = "cuda";
    image.kind = kiln::bef::TargetKind::kCuda;
    image.ptx = kernels.cuda->ptx;
    // The runtime JITs the PTX on GPUs of another architecture.
    if (!kernels.cuda->cubin.empty() && kernels.cuda->arch.rfind("sm_", 0) == 0)
      image.cubins.push_back({std::atoi(kernels.cuda->arch.c_str() + 3), kernels.cuda->cubin});
    launch = ToThunkDims(kernels.cuda->kernels.at(0).launch);
    image.kernels = {{kKernelName, launch}};
    a.targets.push_back(image.target);
    a.kernel_images.push_back(std::move(image));
  }
  a.program = ChainProgram(chain, launch);
  a.hlo_text = kKernelHlo;
  return a;
}

StatusOr<kiln::runtime::Buffer> F32Buffer(const std::vector<float>& values) {
  KILN_ASSIGN_OR_RETURN(kiln::runtime::Buffer b,
                        kiln::runtime::Buffer::Allocate(Shape(ElementType::kF32, {kElements})));
  std::memcpy(b.data(), values.data(), kBytes);
  return b;
}

struct Timing {
  double min_us = 0, median_us = 0;
  // Under the emulator, per timed execution: driver calls that put work on
  // a stream directly, calls recorded into graphs, graph launches and exec
  // updates; and the modeled device time of one profiled execution.
  std::optional<double> direct_calls, captured_calls, graph_launches, graph_updates;
  std::optional<double> modeled_us;
};

// The emulator's call counters, when the CUDA device is kiln's emulator.
std::optional<KilnEmuApiCalls> EmulatorCalls() { return kiln::testing::EmulatorApiCalls(); }

uint64_t DirectCalls(const KilnEmuApiCalls& c) {
  return c.kernel_launches + c.library_calls + c.copies + c.memsets + c.event_records - c.captured +
         c.graph_launches;
}

// How a timed execution runs on CUDA.
struct Mode {
  bool graphs = true;
  bool host_outputs = true;
};

// Loads the `chain`-thunk artifact on `device`, checks one result against
// p0 + chain * p1 computed here, then times `iterations` executions.
StatusOr<Timing> TimeChain(kiln::runtime::Device& device, const kiln::codegen::CodegenResult& kernels,
                           int chain, int iterations, Mode mode = {}) {
  const kiln::bef::Artifact artifact = ChainArtifact(kernels, chain);
  KILN_RETURN_IF_ERROR(kiln::bef::ValidateArtifact(artifact));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::runtime::LoadedExecutable> exe,
                        kiln::runtime::LoadedExecutable::Load(device, artifact));
  const std::vector<float> p0 = {1, 2, 3, 4}, p1 = {0.5f, -0.25f, 1, 2};
  KILN_ASSIGN_OR_RETURN(kiln::runtime::Buffer a0, F32Buffer(p0));
  KILN_ASSIGN_OR_RETURN(kiln::runtime::Buffer a1, F32Buffer(p1));
  const std::vector<kiln::runtime::Buffer> args = {a0, a1};
  kiln::runtime::ExecuteOptions options;
  options.profile = false;
  options.cuda_graphs = mode.graphs;
  options.host_outputs = mode.host_outputs;

  kiln::runtime::ExecuteOptions checked = options;
  checked.host_outputs = true;  // compared here
  KILN_ASSIGN_OR_RETURN(kiln::runtime::ExecutionResult first, exe->ExecuteSync(args, checked));
  if (first.outputs.size() != 1) return kiln::Error("expected one output");
  std::vector<float> got(kElements);
  std::memcpy(got.data(), first.outputs[0].data(), kBytes);
  for (int64_t i = 0; i < kElements; ++i) {
    const float want = p0[i] + static_cast<float>(chain) * p1[i];
    if (got[i] != want)
      return kiln::Error("wrong result at " + std::to_string(i) + ": got " + std::to_string(got[i]) +
                         ", want " + std::to_string(want));
  }

  const int warmup = std::max(1, iterations / 10);
  for (int i = 0; i < warmup; ++i) KILN_RETURN_IF_ERROR(exe->ExecuteSync(args, options).status());
  std::vector<double> micros;
  const std::optional<KilnEmuApiCalls> before = EmulatorCalls();
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(exe->ExecuteSync(args, options).status());
    const auto end = std::chrono::steady_clock::now();
    micros.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  const std::optional<KilnEmuApiCalls> after = EmulatorCalls();
  std::sort(micros.begin(), micros.end());
  Timing t{micros.front(), micros[micros.size() / 2]};
  if (before && after) {
    const double n = iterations;
    t.direct_calls = double(DirectCalls(*after) - DirectCalls(*before)) / n;
    t.captured_calls = double(after->captured - before->captured) / n;
    t.graph_launches = double(after->graph_launches - before->graph_launches) / n;
    t.graph_updates = double(after->graph_updates - before->graph_updates) / n;
    kiln::runtime::ExecuteOptions profiled = options;
    profiled.profile = true;
    KILN_ASSIGN_OR_RETURN(kiln::runtime::ExecutionResult r, exe->ExecuteSync(args, profiled));
    if (r.profile.modeled) t.modeled_us = std::chrono::duration<double, std::micro>(r.profile.total).count();
  }
  return t;
}

// Graphs on and off, host and device outputs: per-execution host time,
// driver calls and modeled device time of the `chain`-thunk program.
bool BenchCudaGraphs(kiln::runtime::Device& device, const kiln::codegen::CodegenResult& kernels, int chain,
                     int iterations) {
  std::printf("  CUDA graphs, %d-thunk chain, per execution (median host us; driver calls%s):\n", chain,
              EmulatorCalls() ? ", counted by the emulator; device time modeled by its H100 model" : "");
  for (bool host_outputs : {true, false}) {
    for (bool graphs : {true, false}) {
      StatusOr<Timing> t = TimeChain(device, kernels, chain, iterations, Mode{graphs, host_outputs});
      if (!t.ok()) {
        std::fprintf(stderr, "dispatch_bench: error: cuda graphs=%s: %s\n", graphs ? "on" : "off",
                     t.status().message().c_str());
        return false;
      }
      std::printf("    graphs %-3s %-13s %10.1f us", graphs ? "on" : "off",
                  host_outputs ? "host outputs" : "device outputs", t->median_us);
      if (t->direct_calls) {
        std::printf("  %8.1f calls (%6.1f graph launches, %6.1f updates, %8.1f captured)", *t->direct_calls,
                    *t->graph_launches, *t->graph_updates, *t->captured_calls);
      }
      if (t->modeled_us) std::printf("  %9.1f us modeled", *t->modeled_us);
      std::printf("\n");
    }
  }
  return true;
}

// Prints the device's figures; false if an execution failed.
bool BenchDevice(kiln::runtime::DeviceKind kind, const kiln::codegen::CodegenResult& kernels, int chain,
                 int iterations) {
  const std::string name(kiln::runtime::DeviceKindName(kind));
  StatusOr<std::unique_ptr<kiln::runtime::Device>> device = kiln::runtime::Device::Create(kind);
  if (!device.ok()) {
    std::printf("%s: skipped (%s)\n", name.c_str(), device.status().message().c_str());
    return true;
  }
  if (kind == kiln::runtime::DeviceKind::kCuda && !kernels.cuda) {
    std::printf("%s: skipped (no CUDA kernel image)\n", name.c_str());
    return true;
  }
  StatusOr<Timing> one = TimeChain(**device, kernels, 1, iterations);
  StatusOr<Timing> many = chain == 1 ? one : TimeChain(**device, kernels, chain, iterations);
  for (const StatusOr<Timing>* t : {&one, &many}) {
    if (!t->ok()) {
      std::fprintf(stderr, "dispatch_bench: error: %s: %s\n", name.c_str(),
                   t->status().message().c_str());
      return false;
    }
  }
  std::printf("%s: %d executions each (profile=false), min / median\n", name.c_str(), iterations);
  std::printf("  1-thunk execution (fixed cost)   %10.2f / %10.2f us\n", one->min_us, one->median_us);
  if (chain > 1) {
    std::printf("  %5d-thunk execution             %10.2f / %10.2f us\n", chain, many->min_us,
                many->median_us);
    std::printf("  per thunk (total / %5d)        %10.3f / %10.3f us\n", chain, many->min_us / chain,
                many->median_us / chain);
    std::printf("  marginal per thunk (- fixed, / %d) %9.3f / %10.3f us\n", chain - 1,
                (many->min_us - one->min_us) / (chain - 1),
                (many->median_us - one->median_us) / (chain - 1));
  }
  if (kind == kiln::runtime::DeviceKind::kCuda) {
    std::printf("  target < 5 us per thunk on CUDA: %s\n",
                many->median_us / chain < 5.0 ? "OK" : "MISSED");
    return BenchCudaGraphs(**device, kernels, chain, iterations);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 200, chain = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--iterations=", 0) == 0) {
      iterations = std::max(1, std::atoi(arg.c_str() + 13));
    } else if (arg.rfind("--chain=", 0) == 0) {
      chain = std::max(1, std::atoi(arg.c_str() + 8));
    } else {
      std::fprintf(stderr, "dispatch_bench: error: unknown argument '%s' "
                           "(usage: dispatch_bench [--iterations=N] [--chain=K])\n", arg.c_str());
      return 1;
    }
  }
  StatusOr<std::unique_ptr<kiln::hlo::HloModule>> module = kiln::hlo::ParseHloModule(kKernelHlo);
  if (!module.ok()) {
    std::fprintf(stderr, "dispatch_bench: error: %s\n", module.status().message().c_str());
    return 1;
  }
  StatusOr<Kernels> kernels = CompileAddKernel(**module);
  if (!kernels.ok()) {
    std::fprintf(stderr, "dispatch_bench: error: %s\n", kernels.status().message().c_str());
    return 1;
  }
  std::printf("dispatch_bench: chain of %d KernelThunks of f32[4] add (host image%s)\n", chain,
              kernels->result.cuda ? (kernels->cuda_note.empty() ? " + CUDA cubin"
                                                                  : " + CUDA PTX (no cubin)")
                                   : "");
  if (!kernels->result.cuda) std::printf("  no CUDA image: %s\n", kernels->cuda_note.c_str());
  bool ok = BenchDevice(kiln::runtime::DeviceKind::kHost, kernels->result, chain, iterations);
  ok = BenchDevice(kiln::runtime::DeviceKind::kCuda, kernels->result, chain, iterations) && ok;
  return ok ? 0 : 1;
}
