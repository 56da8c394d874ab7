// bef-run: runs a compiled .bef artifact on a device with kiln's runtime —
// the deployment half of the compile-once pipeline, and a thin client of
// runtime/runtime.h (it never links the compiler).
//
//   bef-run MODULE.bef [--device=auto|host|cuda]
//           [--input=SPEC]... [--seed=N]
//           [--output=SPEC]... [--expected_output=SPEC]... [--atol=X] [--rtol=X]
//           [--iterations=N] [--warmup=N]
//           [--profile] [--trace=FILE.json] [--print_memory]
//
// One --input per array leaf of the parameters (LoadedExecutable's
// argument_shapes, in order), in the IREE syntax shared by every kiln tool
// (common/value_syntax.h); without --input, seeded random inputs. One
// --output / --expected_output per result leaf; without either, every
// result is printed. The result run is not profiled; --iterations adds timed
// runs (after --warmup untimed ones) and prints latency statistics;
// --profile and --trace run separately with per-thunk profiling on (as many
// runs as --iterations, at least one) and print the per-HLO table
// (tools/common/profile_report.h) or write a Chrome trace
// (tools/common/trace_writer.h). --print_memory prints the allocation table.
//
// Every failure is one line "bef-run: error: ..." and exit code 1; a result
// mismatch prints "[FAILED] ..." and exits 1.
#include <chrono>
#include <exception>
#include <iostream>

#include "common/value_syntax.h"
#include "runtime/runtime.h"
#include "tools/common/buffer_literal.h"
#include "tools/common/flags.h"
#include "tools/common/latency_stats.h"
#include "tools/common/memory_report.h"
#include "tools/common/counter_report.h"
#include "tools/common/profile_report.h"
#include "tools/common/tool_values.h"
#include "tools/common/trace_writer.h"

namespace kiln::tools {
namespace {

constexpr char kProgram[] = "bef-run";

struct Options {
  std::string device = "auto";
  std::vector<std::string> inputs;
  OutputFlags output;
  int64_t seed = 0;
  int64_t iterations = 0;
  int64_t warmup = 1;
  bool profile = false;
  std::string trace;
  bool print_memory = false;
};

// auto: CUDA when the artifact has a CUDA image and a CUDA device can be
// created, else the host.
StatusOr<std::unique_ptr<runtime::Device>> CreateDevice(const std::string& name, const bef::Artifact& artifact) {
  if (name == "host") return runtime::Device::Create(runtime::DeviceKind::kHost);
  if (name == "cuda") return runtime::Device::Create(runtime::DeviceKind::kCuda);
  if (name != "auto")
    return Error("unknown --device '" + name + "' (expected auto, host or cuda)");
  bool has_cuda_image = false;
  for (const bef::KernelImage& image : artifact.kernel_images) has_cuda_image |= image.kind == bef::TargetKind::kCuda;
  if (has_cuda_image) {
    StatusOr<std::unique_ptr<runtime::Device>> cuda = runtime::Device::Create(runtime::DeviceKind::kCuda);
    if (cuda.ok()) return cuda;
  }
  return runtime::Device::Create(runtime::DeviceKind::kHost);
}

StatusOr<std::vector<runtime::Buffer>> BuildArguments(const runtime::LoadedExecutable& exe,
                                                      const Options& options) {
  const std::vector<Shape>& shapes = exe.argument_shapes();
  std::vector<Literal> values;
  if (options.inputs.empty()) {
    values = RandomValues(shapes, options.seed);
  } else {
    KILN_ASSIGN_OR_RETURN(values, ParseInputs(shapes, options.inputs, "the module"));
  }
  std::vector<runtime::Buffer> args;
  for (size_t i = 0; i < shapes.size(); ++i) {
    StatusOr<runtime::Buffer> buffer = LiteralToBuffer(values[i], shapes[i]);
    if (!buffer.ok()) return buffer.status().WithContext("--input " + std::to_string(i));
    args.push_back(std::move(buffer).value());
  }
  return args;
}

// The result run: outputs printed, written and compared. Returns the number
// of mismatching results.
StatusOr<int> RunForResults(const runtime::LoadedExecutable& exe,
                            const std::vector<runtime::Buffer>& args, const Options& options) {
  runtime::ExecuteOptions run;
  run.profile = false;
  KILN_ASSIGN_OR_RETURN(runtime::ExecutionResult result, exe.ExecuteSync(args, run));
  std::vector<Literal> leaves;
  for (const runtime::Buffer& out : result.outputs) {
    KILN_ASSIGN_OR_RETURN(Literal leaf, BufferToLiteral(out));
    leaves.push_back(std::move(leaf));
  }
  KILN_RETURN_IF_ERROR(EmitOutputs(leaves, options.output, std::cout));
  if (options.output.expected_outputs.empty()) return 0;
  return CompareOutputs(leaves, options.output, std::cout);
}

// --warmup untimed runs, then --iterations timed ones (profiling off, so
// the latency is not distorted); wall time of each ExecuteSync.
Status RunTiming(const runtime::LoadedExecutable& exe, const std::vector<runtime::Buffer>& args,
                 const Options& options) {
  runtime::ExecuteOptions run;
  run.profile = false;
  for (int64_t i = 0; i < options.warmup; ++i)
    KILN_RETURN_IF_ERROR(exe.ExecuteSync(args, run).status());
  std::vector<double> samples;
  for (int64_t i = 0; i < options.iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(exe.ExecuteSync(args, run).status());
    samples.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::cout << FormatLatencyStats(ComputeLatencyStats(std::move(samples))) << "\n";
  return Status::Ok();
}

// Separate profiled runs for --profile and --trace.
Status RunProfile(const runtime::LoadedExecutable& exe, const std::vector<runtime::Buffer>& args,
                  const runtime::Device& device, const Options& options) {
  runtime::ExecuteOptions run;
  run.profile = true;
  std::vector<runtime::ExecutionProfile> profiles;
  int64_t runs = options.iterations > 0 ? options.iterations : 1;
  for (int64_t i = 0; i < runs; ++i) {
    KILN_ASSIGN_OR_RETURN(runtime::ExecutionResult result, exe.ExecuteSync(args, run));
    profiles.push_back(std::move(result.profile));
  }
  if (options.profile) {
    KILN_ASSIGN_OR_RETURN(thunks::RooflineTarget target, RooflineTargetForDevice(device.kind()));
    ProfileReport report = BuildProfileReport(profiles);
    std::cout << FormatProfileReport(report, target) << FormatCounterReport(report);
  }
  if (!options.trace.empty())
    KILN_RETURN_IF_ERROR(WriteChromeTrace(profiles, runtime::DeviceKindName(device.kind()),
                                          options.trace)
                             .WithContext("--trace"));
  return Status::Ok();
}

StatusOr<int> Run(const std::string& path, const Options& options) {
  if (options.iterations < 0 || options.warmup < 0)
    return Error("--iterations and --warmup must not be negative");
  KILN_ASSIGN_OR_RETURN(bef::Artifact artifact, bef::LoadArtifactFile(path));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Device> device, CreateDevice(options.device, artifact));
  StatusOr<std::unique_ptr<runtime::LoadedExecutable>> loaded =
      runtime::LoadedExecutable::Load(*device, artifact);
  if (!loaded.ok()) return loaded.status().WithContext(path);
  const runtime::LoadedExecutable& exe = **loaded;
  KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> args, BuildArguments(exe, options));

  KILN_ASSIGN_OR_RETURN(int mismatches, RunForResults(exe, args, options));
  if (options.print_memory) std::cout << FormatMemoryReport(exe.program());
  // The reports say what they measured on; result values stay alone on
  // stdout for callers that parse them.
  if (options.iterations > 0 || options.profile)
    std::cout << "device: " << device->description() << "\n";
  if (options.iterations > 0) KILN_RETURN_IF_ERROR(RunTiming(exe, args, options));
  if (options.profile || !options.trace.empty())
    KILN_RETURN_IF_ERROR(RunProfile(exe, args, *device, options));
  return mismatches;
}

int Main(int argc, char** argv) {
  Options options;
  FlagParser flags(kProgram, "bef-run MODULE.bef [flags]");
  flags.AddString("device", &options.device,
                  "auto (CUDA when available, else host), host or cuda (default auto)");
  flags.AddStringList("input", &options.inputs,
                      "one per argument leaf: 2x3xf32=1 2 3 4 5 6, f32=1.5, @x.npy, 4xi32=@raw.bin");
  flags.AddInt("seed", &options.seed, "seed of the random inputs used without --input (default 0)");
  flags.AddStringList("output", &options.output.outputs,
                      "one per result leaf: '-' prints, '@o.npy' writes, '+o.npy' appends, '' skips");
  flags.AddStringList("expected_output", &options.output.expected_outputs,
                      "one per result leaf, compared with per-type tolerances; '(ignored)' skips");
  flags.AddDouble("atol", &options.output.atol, "absolute tolerance for float results");
  flags.AddDouble("rtol", &options.output.rtol, "relative tolerance for float results");
  flags.AddInt("iterations", &options.iterations,
               "timed runs; prints min/median/mean/p90/max latency (also the --profile run count)");
  flags.AddInt("warmup", &options.warmup, "untimed runs before the timed ones (default 1)");
  flags.AddBool("profile", &options.profile, "print the per-HLO profile of separate profiled runs");
  flags.AddString("trace", &options.trace, "write the profiled runs as Chrome trace JSON (Perfetto)");
  flags.AddBool("print_memory", &options.print_memory, "print the allocation table and totals");
  options.output.report_each_match = true;
  std::vector<std::string> files;
  Status parsed = flags.Parse(argc, argv, &files);
  if (!parsed.ok()) return ReportError(kProgram, parsed);
  if (flags.help_requested()) {
    std::cout << flags.Usage();
    return 0;
  }
  if (files.size() != 1)
    return ReportError(kProgram, Error("expected exactly one MODULE.bef, got " +
                                       std::to_string(files.size()) + " (see --help)"));
  StatusOr<int> mismatches = Run(files[0], options);
  if (!mismatches.ok()) return ReportError(kProgram, mismatches.status());
  return *mismatches ? 1 : 0;
}

}  // namespace
}  // namespace kiln::tools

int main(int argc, char** argv) {
  try {
    return kiln::tools::Main(argc, argv);
  } catch (const std::exception& e) {
    // Out of memory on an oversized artifact, mostly; still one line.
    std::cerr << "bef-run: error: " << e.what() << "\n";
    return 1;
  }
}
