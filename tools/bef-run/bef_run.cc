// bef-run: runs a compiled .bef artifact on a device with kiln's runtime —
// the deployment half of the compile-once pipeline, and a thin client of
// runtime/runtime.h (it never links the compiler).
//
//   bef-run MODULE.bef [--device=auto|host|cuda]
//           [--input=SPEC]... [--seed=N]
//           [--output=SPEC]... [--expected_output=SPEC]... [--atol=X] [--rtol=X]
//           [--iterations=N] [--warmup=N] [--include_transfers]
//           [--profile] [--trace=FILE.json] [--export_profile=FILE.json]
//           [--print_memory] [--donate] [--cuda_graphs=on|off]
//           [--num_devices=N] [--collective_timeout=SECONDS]
//           [--process_id=I --num_processes=P --coordinator=HOST:PORT|file:DIR
//            [--collective_interface=NAME|ADDRESS]]
//
// One --input per array leaf of the parameters (LoadedExecutable's
// argument_shapes, in order), in the IREE syntax shared by every kiln tool
// (common/value_syntax.h); without --input, seeded random inputs. One
// --output / --expected_output per result leaf; without either, every
// result is printed. The result run is not profiled; --iterations adds timed
// runs (after --warmup untimed ones) and prints latency statistics;
// --profile, --trace and --export_profile run separately with per-thunk
// profiling on (as many runs as --iterations, at least one) and print the
// per-HLO table (tools/common/profile_report.h), write a Chrome trace
// (tools/common/trace_writer.h) or write the table as JSON
// (tools/common/profile_json.h). --print_memory prints the allocation table.
// --donate donates every argument, as a module whose input_output_alias
// says must-alias requires; every run then gets its own copy of the
// inputs, so each computes on the same values (on every device of an SPMD
// run too).
//
// Every run but the timed ones goes through runtime::ExecuteWithHostBuffers
// (upload, execute, download). The timed runs measure the execution alone,
// as XLA's and IREE's benchmarks do: the inputs are uploaded once and stay
// on the device, the outputs stay there too; the report gives the result
// run's transfers (bytes and time) on a line of their own.
// --include_transfers times upload + execution + download instead. The
// reports start with the device line, which on the host names the CPU
// level of the kernel image that runs (serialization/host_image.h;
// KILN_HOST_CPU_LEVEL forces one).
//
// In the CUDA emulator's sampling mode (KILN_EMU_SAMPLE) the device
// computes no results: the result run prints "results not computed
// (sampled emulation: KILN_EMU_SAMPLE=N)" instead of values, and nothing is
// written or compared.
//
// --cuda_graphs (default on) replays each straight-line part of the thunk
// program as a CUDA graph on a CUDA device (runtime/cuda_graphs.h); off
// issues every thunk on its own. The host ignores it.
//
// --num_devices=N runs an SPMD module (replica_count x num_partitions = N)
// on N host devices in one process, collectives through Gloo, or with
// --device=cuda on CUDA devices 0..N-1, collectives through NCCL
// (multi_device.h: per-device --input, --output and --expected_output); a
// collective whose peers do not arrive within --collective_timeout
// (default 60 s) fails with one line naming it and the missing devices.
// --process_id/--num_processes/--coordinator run one process per device,
// or per --num_devices local devices (multi_process.h); each process
// reads, prints and writes its own devices' values.
//
// Every failure is one line "bef-run: error: ..." and exit code 1; a result
// mismatch prints "[FAILED] ..." and exits 1.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

#include "common/value_syntax.h"
#include "runtime/host_execution.h"
#include "runtime/runtime.h"
#include "serialization/host_image.h"
#include "tools/common/buffer_literal.h"
#include "tools/common/flags.h"
#include "tools/common/json_writer.h"
#include "tools/common/latency_stats.h"
#include "tools/common/memory_report.h"
#include "tools/common/counter_report.h"
#include "tools/common/profile_json.h"
#include "tools/common/profile_report.h"
#include "tools/common/tool_values.h"
#include "tools/common/trace_writer.h"
#include "tools/bef-run/multi_device.h"
#include "tools/bef-run/multi_process.h"

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
  std::string export_profile;
  bool print_memory = false;
  bool donate = false;
  bool include_transfers = false;
  bool cuda_graphs = true;
  int64_t num_devices = 0;  // 0: one device (one per process with num_processes)
  std::optional<double> collective_timeout;  // seconds; default 60
  int64_t process_id = 0;
  int64_t num_processes = 0;  // 0: one process
  std::string coordinator;
  std::string collective_interface;

  bool profiled_runs() const { return profile || !trace.empty() || !export_profile.empty(); }
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

// "device: host: x86-64, 16 threads, x86-64-v4 kernels": the device, and
// on the host the CPU level of the kernel image its runtime picked
// (serialization/host_image.h, as the host backend chooses).
std::string DeviceLine(const std::string& description, runtime::DeviceKind kind, const bef::Artifact& artifact) {
  std::string line = "device: " + description;
  if (kind != runtime::DeviceKind::kHost) return line;
  StatusOr<const bef::KernelImage*> image = bef::SelectHostImage(artifact);
  if (image.ok() && *image) line += ", " + bef::HostImageLevel(**image) + " kernels";
  return line;
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

// The arguments of one run: `args` themselves, or with --donate a private
// copy of them (the run may update donated buffers in place).
StatusOr<std::vector<runtime::Buffer>> RunArguments(const std::vector<runtime::Buffer>& args,
                                                    const Options& options) {
  if (!options.donate) return args;
  std::vector<runtime::Buffer> copies;
  for (const runtime::Buffer& arg : args) {
    KILN_ASSIGN_OR_RETURN(runtime::Buffer copy, runtime::Buffer::Allocate(arg.shape(), arg.size()));
    std::memcpy(copy.data(), arg.data(), static_cast<size_t>(arg.size()));
    copies.push_back(std::move(copy));
  }
  return copies;
}

runtime::ExecuteOptions RunOptions(const Options& options, bool profile, size_t arguments) {
  runtime::ExecuteOptions run;
  run.profile = profile;
  run.cuda_graphs = options.cuda_graphs;
  if (options.donate) run.donate.assign(arguments, true);
  return run;
}

// One run on RunArguments: uploaded, executed, downloaded.
StatusOr<runtime::ExecutionResult> RunOnce(const runtime::LoadedExecutable& exe,
                                           const std::vector<runtime::Buffer>& args,
                                           const Options& options, bool profile,
                                           runtime::HostExecutionTimes* times = nullptr) {
  KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> run_args, RunArguments(args, options));
  return runtime::ExecuteWithHostBuffers(exe, std::move(run_args),
                                         RunOptions(options, profile, args.size()), times);
}

// The result run's transfers, apart from its execution, and what the
// latency below counts.
std::string TransferLine(const runtime::HostExecutionTimes& t, bool latency_includes_them) {
  auto us = [](std::chrono::nanoseconds d) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", std::chrono::duration<double, std::micro>(d).count());
    return std::string(text);
  };
  return "transfers: " + std::to_string(t.bytes_uploaded) + " bytes to the device in " + us(t.upload) +
         " us, " + std::to_string(t.bytes_downloaded) + " bytes back in " + us(t.download) +
         " us; execution " + us(t.execute) + " us (latency " +
         (latency_includes_them ? "includes the transfers)" : "of the execution alone, inputs on the device)");
}

// The result run: outputs printed, written and compared. Returns the number
// of mismatching results.
StatusOr<int> RunForResults(const runtime::LoadedExecutable& exe,
                            const std::vector<runtime::Buffer>& args, const Options& options,
                            runtime::HostExecutionTimes& times) {
  KILN_ASSIGN_OR_RETURN(runtime::ExecutionResult result,
                        RunOnce(exe, args, options, /*profile=*/false, &times));
  if (!result.results_computed) {
    std::cout << ResultsNotComputedLine() << "\n";
    return 0;
  }
  std::vector<Literal> leaves;
  for (const runtime::Buffer& out : result.outputs) {
    KILN_ASSIGN_OR_RETURN(Literal leaf, BufferToLiteral(out));
    leaves.push_back(std::move(leaf));
  }
  KILN_RETURN_IF_ERROR(EmitOutputs(leaves, options.output, std::cout));
  if (options.output.expected_outputs.empty()) return 0;
  return CompareOutputs(leaves, options.output, std::cout);
}

// Whether the execution takes host buffers as they are: on the host
// device, and for programs with dynamic dimensions (extents read on the host).
bool ReadsHostMemory(const runtime::LoadedExecutable& exe) {
  return exe.device().kind() == runtime::DeviceKind::kHost ||
         !exe.program().signature.dynamic_dimensions.empty();
}

StatusOr<std::vector<runtime::Buffer>> Upload(const runtime::LoadedExecutable& exe,
                                              const std::vector<runtime::Buffer>& args) {
  std::vector<runtime::Buffer> uploaded;
  for (const runtime::Buffer& arg : args) {
    KILN_ASSIGN_OR_RETURN(runtime::Device::Transfer t, exe.device().TransferToDevice(arg));
    KILN_RETURN_IF_ERROR(t.done.Wait().status());
    uploaded.push_back(std::move(t.buffer));
  }
  return uploaded;
}

// The arguments of one timed run (`host_args` are RunArguments): the host
// buffers when the run uploads them itself (--include_transfers) or the
// device reads host memory; else the inputs uploaded once, or with
// --donate (donated inputs are consumed) a fresh untimed upload.
StatusOr<std::vector<runtime::Buffer>> TimedArguments(const runtime::LoadedExecutable& exe,
                                                      const std::vector<runtime::Buffer>& resident,
                                                      const std::vector<runtime::Buffer>& host_args,
                                                      const Options& options) {
  if (options.include_transfers || ReadsHostMemory(exe)) return host_args;
  if (!options.donate) return resident;
  return Upload(exe, host_args);
}

// One timed run: the execution alone on resident inputs (outputs left on
// the device), or with --include_transfers upload + execution + download.
StatusOr<double> TimedRun(const runtime::LoadedExecutable& exe, std::vector<runtime::Buffer> run_args,
                          const Options& options, size_t arguments) {
  runtime::ExecuteOptions run = RunOptions(options, /*profile=*/false, arguments);
  auto start = std::chrono::steady_clock::now();
  if (options.include_transfers) {
    KILN_RETURN_IF_ERROR(runtime::ExecuteWithHostBuffers(exe, std::move(run_args), run).status());
  } else {
    KILN_RETURN_IF_ERROR(exe.ExecuteSync(std::move(run_args), run).status());
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

// --warmup untimed runs, then --iterations timed ones (profiling off, so
// the latency is not distorted).
Status RunTiming(const runtime::LoadedExecutable& exe, const std::vector<runtime::Buffer>& args,
                 const Options& options) {
  std::vector<runtime::Buffer> resident;
  if (!ReadsHostMemory(exe) && !options.include_transfers) {
    KILN_ASSIGN_OR_RETURN(resident, Upload(exe, args));
  }
  std::vector<double> samples;
  for (int64_t i = 0; i < options.warmup + options.iterations; ++i) {
    KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> host_args, RunArguments(args, options));
    KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> run_args,
                          TimedArguments(exe, resident, host_args, options));
    KILN_ASSIGN_OR_RETURN(double us, TimedRun(exe, std::move(run_args), options, args.size()));
    if (i >= options.warmup) samples.push_back(us);
  }
  std::cout << FormatLatencyStats(ComputeLatencyStats(std::move(samples))) << "\n";
  return Status::Ok();
}

// Separate profiled runs for --profile, --trace and --export_profile.
Status RunProfile(const runtime::LoadedExecutable& exe, const std::vector<runtime::Buffer>& args,
                  const runtime::Device& device, const Options& options) {
  std::vector<runtime::ExecutionProfile> profiles;
  int64_t runs = options.iterations > 0 ? options.iterations : 1;
  for (int64_t i = 0; i < runs; ++i) {
    KILN_ASSIGN_OR_RETURN(runtime::ExecutionResult result, RunOnce(exe, args, options, /*profile=*/true));
    profiles.push_back(std::move(result.profile));
  }
  KILN_ASSIGN_OR_RETURN(thunks::RooflineTarget target, RooflineTargetForDevice(device.kind()));
  ProfileReport report = BuildProfileReport(profiles);
  if (options.profile) std::cout << FormatProfileReport(report, target) << FormatCounterReport(report);
  if (!options.export_profile.empty())
    KILN_RETURN_IF_ERROR(
        WriteProfileJson(report, device.description(), target, options.export_profile)
            .WithContext("--export_profile"));
  if (!options.trace.empty())
    KILN_RETURN_IF_ERROR(WriteChromeTrace(profiles, runtime::DeviceKindName(device.kind()),
                                          options.trace)
                             .WithContext("--trace"));
  return Status::Ok();
}

// Device d's arguments (d of `devices` in the run): its --input specs, or
// random values seeded --seed + d.
StatusOr<std::vector<runtime::Buffer>> DeviceArguments(const runtime::LoadedExecutable& exe, const Options& options,
                                                       int64_t device, int64_t devices) {
  Options own = options;
  own.seed = options.seed + device;
  KILN_ASSIGN_OR_RETURN(own.inputs,
                        SpecsForDevice(options.inputs, exe.argument_shapes().size(), device, devices, "--input"));
  return BuildArguments(exe, own);
}

// Prints, writes and compares every device's results; returns the number
// of mismatches.
StatusOr<int> ReportDeviceResults(const DeviceSet& set, const std::vector<runtime::ExecutionResult>& results,
                                  const Options& options) {
  int mismatches = 0;
  for (size_t d = 0; d < results.size(); ++d) {
    std::vector<Literal> leaves;
    for (const runtime::Buffer& out : results[d].outputs) {
      KILN_ASSIGN_OR_RETURN(Literal leaf, BufferToLiteral(out));
      leaves.push_back(std::move(leaf));
    }
    const int64_t device = set.first_device + static_cast<int64_t>(d);
    OutputFlags flags = options.output;
    KILN_ASSIGN_OR_RETURN(flags.outputs, SpecsForDevice(options.output.outputs, leaves.size(), device,
                                                        set.total_devices, "--output"));
    KILN_ASSIGN_OR_RETURN(flags.expected_outputs, SpecsForDevice(options.output.expected_outputs, leaves.size(),
                                                                 device, set.total_devices, "--expected_output"));
    std::cout << "device " << device << ":\n";
    KILN_RETURN_IF_ERROR(EmitOutputs(leaves, flags, std::cout));
    if (flags.expected_outputs.empty()) continue;
    KILN_ASSIGN_OR_RETURN(int m, CompareOutputs(leaves, flags, std::cout));
    mismatches += m;
  }
  return mismatches;
}

// One execution on every device of `set`; with --donate each device runs
// on a private copy of its arguments, made outside the timing. `micros`,
// when set, gets the execution's wall time.
StatusOr<std::vector<runtime::ExecutionResult>> ExecuteDeviceSet(const DeviceSet& set,
                                                                const std::vector<std::vector<runtime::Buffer>>& args,
                                                                const Options& options, runtime::ExecuteOptions run,
                                                                double* micros = nullptr) {
  std::vector<std::vector<runtime::Buffer>> own;
  for (const std::vector<runtime::Buffer>& a : args) {
    KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> copy, RunArguments(a, options));
    own.push_back(std::move(copy));
  }
  if (options.donate && !args.empty()) run.donate.assign(args[0].size(), true);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::vector<runtime::ExecutionResult>> results = ExecuteOnDevices(set, own, run);
  if (micros) *micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return results;
}

// --profile of an SPMD run: every device runs each profiled execution (a
// collective needs its peers); the table is this process's first device's.
Status ProfileDeviceSet(const DeviceSet& set, const std::vector<std::vector<runtime::Buffer>>& args,
                        const Options& options) {
  runtime::ExecuteOptions run;
  run.host_outputs = true;
  std::vector<runtime::ExecutionProfile> profiles;
  const int64_t runs = options.iterations > 0 ? options.iterations : 1;
  for (int64_t i = 0; i < runs; ++i) {
    KILN_ASSIGN_OR_RETURN(std::vector<runtime::ExecutionResult> results, ExecuteDeviceSet(set, args, options, run));
    profiles.push_back(std::move(results[0].profile));
  }
  KILN_ASSIGN_OR_RETURN(thunks::RooflineTarget target, RooflineTargetForDevice(set.devices[0]->kind()));
  ProfileReport report = BuildProfileReport(profiles);
  std::cout << "device " << set.first_device << " profile:\n"
            << FormatProfileReport(report, target) << FormatCounterReport(report);
  return Status::Ok();
}

// This process's devices of an SPMD run all run at once; --iterations
// times the slowest device of each run.
StatusOr<int> RunDeviceSet(const DeviceSet& set, const bef::Artifact& artifact, const Options& options) {
  std::vector<std::vector<runtime::Buffer>> args;
  for (size_t d = 0; d < set.size(); ++d) {
    KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> a,
                          DeviceArguments(*set.executables[d], options, set.first_device + static_cast<int64_t>(d),
                                          set.total_devices));
    args.push_back(std::move(a));
  }
  runtime::ExecuteOptions run;
  run.profile = false;
  run.host_outputs = true;  // CUDA devices download their results
  KILN_ASSIGN_OR_RETURN(std::vector<runtime::ExecutionResult> results, ExecuteDeviceSet(set, args, options, run));
  KILN_ASSIGN_OR_RETURN(int mismatches, ReportDeviceResults(set, results, options));
  if (options.iterations == 0) {
    if (options.profile) KILN_RETURN_IF_ERROR(ProfileDeviceSet(set, args, options));
    return mismatches;
  }
  std::cout << DeviceLine(std::to_string(set.size()) + " x " + set.devices[0]->description(),
                         set.devices[0]->kind(), artifact)
            << "\n";
  for (int64_t i = 0; i < options.warmup; ++i)
    KILN_RETURN_IF_ERROR(ExecuteDeviceSet(set, args, options, run).status());
  std::vector<double> samples;
  for (int64_t i = 0; i < options.iterations; ++i) {
    double micros = 0;
    KILN_RETURN_IF_ERROR(ExecuteDeviceSet(set, args, options, run, &micros).status());
    samples.push_back(micros);
  }
  std::cout << FormatLatencyStats(ComputeLatencyStats(std::move(samples))) << "\n";
  if (options.profile) KILN_RETURN_IF_ERROR(ProfileDeviceSet(set, args, options));
  return mismatches;
}

// --num_devices and --num_processes: the devices of this process.
StatusOr<int> RunOnDevices(const bef::Artifact& artifact, const Options& options) {
  if (!options.trace.empty() || !options.export_profile.empty() || options.print_memory)
    return Error("--num_devices and --num_processes run without --trace, --export_profile and --print_memory "
                 "(not yet)");
  if (options.num_processes != 0 && options.device == "cuda")
    return Error("--num_processes runs on host devices (CUDA devices across processes: not yet)");
  const double timeout = options.collective_timeout.value_or(60);
  if (options.num_processes == 0) {
    const runtime::DeviceKind kind =
        options.device == "cuda" ? runtime::DeviceKind::kCuda : runtime::DeviceKind::kHost;
    KILN_ASSIGN_OR_RETURN(DeviceSet set, LoadOnHostDevices(artifact, options.num_devices, timeout, kind));
    return RunDeviceSet(set, artifact, options);
  }
  ProcessGroupOptions g{options.process_id, options.num_processes, options.num_devices ? options.num_devices : 1,
                        options.coordinator, options.collective_interface, timeout};
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ProcessGroup> group, ProcessGroup::Join(g, artifact.program.device_count()));
  StatusOr<DeviceSet> set =
      LoadOnHostDevices(artifact, group->first_device(), group->local_devices(), group->rendezvous());
  StatusOr<int> result = set.ok() ? RunDeviceSet(*set, artifact, options) : StatusOr<int>(set.status());
  group->Finish();
  return result;
}

StatusOr<int> Run(const std::string& path, const Options& options) {
  if (options.iterations < 0 || options.warmup < 0)
    return Error("--iterations and --warmup must not be negative");
  // Output files are checked before the runs, which may be long.
  if (!options.trace.empty()) KILN_RETURN_IF_ERROR(CheckWritable(options.trace).WithContext("--trace"));
  if (!options.export_profile.empty())
    KILN_RETURN_IF_ERROR(CheckWritable(options.export_profile).WithContext("--export_profile"));
  KILN_ASSIGN_OR_RETURN(bef::Artifact artifact, bef::LoadArtifactFile(path));
  if (options.num_devices != 0 || options.num_processes != 0) return RunOnDevices(artifact, options);
  if (options.process_id != 0 || !options.coordinator.empty())
    return Error("--process_id and --coordinator need --num_processes");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Device> device, CreateDevice(options.device, artifact));
  StatusOr<std::unique_ptr<runtime::LoadedExecutable>> loaded =
      runtime::LoadedExecutable::Load(*device, artifact);
  if (!loaded.ok()) return loaded.status().WithContext(path);
  const runtime::LoadedExecutable& exe = **loaded;
  KILN_ASSIGN_OR_RETURN(std::vector<runtime::Buffer> args, BuildArguments(exe, options));

  runtime::HostExecutionTimes times;
  KILN_ASSIGN_OR_RETURN(int mismatches, RunForResults(exe, args, options, times));
  if (options.print_memory) std::cout << FormatMemoryReport(exe.program());
  // The reports say what they measured on; result values stay alone on
  // stdout for callers that parse them.
  if (options.iterations > 0 || options.profile)
    std::cout << DeviceLine(device->description(), device->kind(), artifact) << "\n";
  if (options.iterations > 0) std::cout << TransferLine(times, options.include_transfers) << "\n";
  if (options.iterations > 0) KILN_RETURN_IF_ERROR(RunTiming(exe, args, options));
  if (options.profiled_runs()) KILN_RETURN_IF_ERROR(RunProfile(exe, args, *device, options));
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
  flags.AddString("export_profile", &options.export_profile,
                  "write the per-HLO profile of the profiled runs as JSON (modeled and optimal µs)");
  flags.AddBool("print_memory", &options.print_memory, "print the allocation table and totals");
  flags.AddBool("include_transfers", &options.include_transfers,
                "time upload + execution + download in --iterations (default: the execution alone)");
  flags.AddBool("donate", &options.donate,
                "donate every argument (must-alias modules need it); each run gets its own copy");
  std::string cuda_graphs = "on";
  flags.AddString("cuda_graphs", &cuda_graphs,
                  "on|off: replay straight-line thunk sequences as CUDA graphs on a CUDA device (default on)");
  flags.AddInt("num_devices", &options.num_devices,
               "run an SPMD module on N host devices in this process (N = replica_count x num_partitions)");
  flags.AddDouble("collective_timeout", &options.collective_timeout,
                  "seconds a collective waits for its peers before failing (default 60)");
  flags.AddInt("num_processes", &options.num_processes,
               "run an SPMD module in P processes, --num_devices host devices each (default 1)");
  flags.AddInt("process_id", &options.process_id, "this process's number, 0 .. P-1 (its devices: id x num_devices ..)");
  flags.AddString("coordinator", &options.coordinator,
                  "HOST:PORT that process 0 serves the rendezvous store on, or file:DIR (a fresh shared directory)");
  flags.AddString("collective_interface", &options.collective_interface,
                  "network interface or address Gloo listens on (default: loopback for a loopback or file: "
                  "coordinator, else this host's name)");
  options.output.report_each_match = true;
  std::vector<std::string> files;
  Status parsed = flags.Parse(argc, argv, &files);
  if (!parsed.ok()) return ReportError(kProgram, parsed);
  if (flags.help_requested()) {
    std::cout << flags.Usage();
    return 0;
  }
  if (cuda_graphs != "on" && cuda_graphs != "off")
    return ReportError(kProgram, Error("--cuda_graphs must be on or off, got '" + cuda_graphs + "'"));
  options.cuda_graphs = cuda_graphs == "on";
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
