// hlo-run: checks HLO text files and runs them on kiln's reference evaluator.
//
//   hlo-run --check FILE...
//       parses and verifies each file; prints "OK <file>" or the error.
//   hlo-run --reference FILE [--input=SPEC]... [--output=SPEC]...
//           [--expected_output=SPEC]... [--atol=X] [--rtol=X] [--seed=N]
//           [--num_replicas=N] [--num_partitions=N]
//       evaluates the entry computation with kiln::hlo::Evaluator; on a
//       multi-device module every device gets the same inputs and device 0's
//       result is reported.
//   hlo-run FILE --device=host|cuda [--seed=N] [value flags] [--profile]
//           [--export_profile=FILE.json]
//       compiles FILE in memory (bef-compile's pipeline), runs it on the
//       device and compares every output with the reference evaluator on
//       the same inputs (per-type tolerances, or --atol/--rtol), and with
//       --expected_output when given; like XLA's run_hlo_module it prints a
//       verdict and exits 1 on a mismatch. --profile prints the run's
//       per-HLO profile, --export_profile writes it as JSON
//       (tools/common/profile_json.h). In the CUDA emulator's sampling mode
//       (KILN_EMU_SAMPLE) the device computes no results: it prints
//       "results not computed (sampled emulation: ...)" and neither
//       evaluates the reference nor compares.
//
// Values use the IREE-style syntax of common/value_syntax.h. Tuple
// parameters and results are flattened: one --input per array leaf of the
// entry parameters (in order), one --output / --expected_output per array
// leaf of the result. Without --input, inputs are seeded random values
// (common/random_literal.h). Without --output or --expected_output, every
// result leaf is printed, one value per line.
//
// Why a separate tool: the evaluator is kiln's correctness oracle, and this is
// how people (and the corpus tests) feed it real modules and compare against
// values computed by JAX. Every failure is one line "hlo-run: error: ..." and
// exit code 1; a result mismatch prints "[FAILED] ..." lines and exits 1.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>

#include "common/value_syntax.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "tools/common/flags.h"
#ifdef KILN_HAVE_DEVICE_RUNNER
#include "common/value_compare.h"
#include "tools/common/counter_report.h"
#include "tools/common/json_writer.h"
#include "tools/common/profile_json.h"
#include "tools/common/profile_report.h"
#include "tools/hlo-run/device_runner.h"
#endif
#include "tools/common/tool_values.h"

namespace kiln::tools {
namespace {

constexpr char kProgram[] = "hlo-run";

struct Options {
  bool check = false;
  bool reference = false;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> expected_outputs;
  std::optional<double> atol;
  std::optional<double> rtol;
  int64_t seed = 0;
  bool print_timing = false;
  // Device counts to simulate, overriding the module header (0 = keep).
  // Collective tests are often dumped without replica_count.
  int64_t num_replicas = 0;
  int64_t num_partitions = 0;
  std::string device;  // "host" or "cuda": compile and run on it
  bool profile = false;
  std::string export_profile;  // with --device: the profile as JSON
  bool tf32 = false;           // with --device=cuda: TF32 GEMMs, as bef-compile's default
};

StatusOr<std::unique_ptr<hlo::HloModule>> LoadModule(const std::string& path,
                                                     const Options& options = {}) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module, hlo::ParseHloModuleFile(path));
  if (options.num_replicas > 0) module->config().replica_count = options.num_replicas;
  if (options.num_partitions > 0) module->config().num_partitions = options.num_partitions;
  KILN_RETURN_IF_ERROR(hlo::VerifyModule(*module).WithContext(path));
  if (!module->entry()) return Error(path + ": module has no entry computation");
  if (std::string warning = hlo::ElidedConstantsWarning(*module); !warning.empty())
    std::fprintf(stderr, "hlo-run: %s\n", warning.c_str());
  return module;
}

int RunCheck(const std::vector<std::string>& files) {
  if (files.empty()) return ReportError(kProgram, Error("--check needs at least one FILE"));
  int failures = 0;
  for (const std::string& file : files) {
    StatusOr<std::unique_ptr<hlo::HloModule>> module = LoadModule(file);
    if (module.ok()) {
      std::cout << "OK " << file << "\n";
    } else {
      // The full message: parser errors carry the offending source line.
      std::cerr << kProgram << ": error: " << module.status().message() << "\n";
      ++failures;
    }
  }
  return failures ? 1 : 0;
}

StatusOr<std::vector<Literal>> BuildArguments(const hlo::HloComputation& entry, const Options& options) {
  std::vector<Shape> params;
  for (int64_t i = 0; i < entry.parameter_count(); ++i) {
    if (!entry.parameter(i)) return Error("entry parameter " + std::to_string(i) + " is missing");
    params.push_back(entry.parameter(i)->shape());
  }
  if (options.inputs.empty()) return RandomValues(params, options.seed);
  std::vector<Shape> leaf_shapes;
  for (const Shape& shape : params) {
    std::vector<Shape> leaves = FlattenShape(shape);
    leaf_shapes.insert(leaf_shapes.end(), leaves.begin(), leaves.end());
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> leaves,
                        ParseInputs(leaf_shapes, options.inputs, "the entry computation"));
  std::vector<Literal> args;
  size_t next = 0;
  for (const Shape& shape : params) {
    size_t count = FlattenShape(shape).size();
    std::vector<Literal> mine(std::make_move_iterator(leaves.begin() + next),
                              std::make_move_iterator(leaves.begin() + next + count));
    next += count;
    KILN_ASSIGN_OR_RETURN(Literal arg, UnflattenTuple(shape, std::move(mine)));
    args.push_back(std::move(arg));
  }
  return args;
}

OutputFlags ToOutputFlags(const Options& options) {
  OutputFlags flags;
  flags.outputs = options.outputs;
  flags.expected_outputs = options.expected_outputs;
  flags.atol = options.atol;
  flags.rtol = options.rtol;
  return flags;
}

int RunReference(const std::vector<std::string>& files, const Options& options) {
  if (files.size() != 1)
    return ReportError(kProgram, Error("--reference needs exactly one FILE, got " + std::to_string(files.size())));
  if (options.num_replicas < 0 || options.num_partitions < 0 ||
      options.num_replicas * std::max<int64_t>(options.num_partitions, 1) > 4096)
    return ReportError(kProgram, Error("--num_replicas and --num_partitions must be between 1 and 4096 devices"));
  StatusOr<std::unique_ptr<hlo::HloModule>> module = LoadModule(files[0], options);
  if (!module.ok()) return ReportError(kProgram, module.status());
  StatusOr<std::vector<Literal>> args = BuildArguments(*(*module)->entry(), options);
  if (!args.ok()) return ReportError(kProgram, args.status());

  auto start = std::chrono::steady_clock::now();
  StatusOr<Literal> result = hlo::Evaluator().Evaluate(**module, *args);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok()) return ReportError(kProgram, result.status());
  if (options.print_timing)
    std::fprintf(stderr, "%s: evaluated %s in %.3f ms\n", kProgram, files[0].c_str(), ms);

  std::vector<Literal> leaves = FlattenTuple(std::move(result).value());
  OutputFlags output_flags = ToOutputFlags(options);
  Status emitted = EmitOutputs(leaves, output_flags, std::cout);
  if (!emitted.ok()) return ReportError(kProgram, emitted);
  if (options.expected_outputs.empty()) return 0;
  StatusOr<int> mismatches = CompareOutputs(leaves, output_flags, std::cout);
  if (!mismatches.ok()) return ReportError(kProgram, mismatches.status());
  return *mismatches ? 1 : 0;
}

#ifdef KILN_HAVE_DEVICE_RUNNER
// --profile and --export_profile of the device run.
Status ReportProfile(const runtime::ExecutionProfile& profile, const runtime::Device& device,
                     const Options& options) {
  KILN_ASSIGN_OR_RETURN(thunks::RooflineTarget target, RooflineTargetForDevice(device.kind()));
  ProfileReport report = BuildProfileReport({profile});
  if (options.profile) {
    std::cout << "device: " << device.description() << "\n";
    std::cout << FormatProfileReport(report, target) << FormatCounterReport(report);
  }
  if (options.export_profile.empty()) return Status::Ok();
  return WriteProfileJson(report, device.description(), target, options.export_profile)
      .WithContext("--export_profile");
}

StatusOr<int> RunOnDevice(const std::string& file, const Options& options) {
  runtime::DeviceKind kind;
  if (options.device == "host") kind = runtime::DeviceKind::kHost;
  else if (options.device == "cuda") kind = runtime::DeviceKind::kCuda;
  else return Error("unknown --device '" + options.device + "' (expected host or cuda)");
  if (!options.export_profile.empty())
    KILN_RETURN_IF_ERROR(CheckWritable(options.export_profile).WithContext("--export_profile"));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module, LoadModule(file, options));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> args, BuildArguments(*module->entry(), options));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Device> device, runtime::Device::Create(kind));
  bool profile = options.profile || !options.export_profile.empty();
  KILN_ASSIGN_OR_RETURN(DeviceRunResult run, CompileAndRun(*module, args, *device, {.profile = profile, .tf32 = options.tf32}));
  if (!run.results_computed) {
    // Sampled emulation: nothing to print or compare, so no reference either.
    std::cout << ResultsNotComputedLine() << "\n";
    if (profile) KILN_RETURN_IF_ERROR(ReportProfile(run.profile, *device, options));
    return 0;
  }
  KILN_ASSIGN_OR_RETURN(Literal reference, hlo::Evaluator().Evaluate(*module, args));
  std::vector<Literal> leaves = FlattenTuple(std::move(run.result));
  std::vector<Literal> reference_leaves = FlattenTuple(std::move(reference));
  OutputFlags output_flags = ToOutputFlags(options);
  KILN_RETURN_IF_ERROR(EmitOutputs(leaves, output_flags, std::cout));
  int mismatches = 0;
  CompareOptions tolerance{options.atol, options.rtol};
  for (size_t i = 0; i < leaves.size() && i < reference_leaves.size(); ++i) {
    Status match = CompareValues(leaves[i], reference_leaves[i], "result[" + std::to_string(i) + "]", tolerance);
    if (!match.ok()) {
      std::cout << "[FAILED] " << match.message() << " (reference evaluator)\n";
      ++mismatches;
    }
  }
  if (leaves.size() != reference_leaves.size()) return Error("the device returned a different number of results");
  if (mismatches == 0)
    std::cout << "[OK] " << leaves.size() << " results match the reference evaluator on "
              << (device->kind() == runtime::DeviceKind::kCuda ? device->description() : options.device) << "\n";
  if (!options.expected_outputs.empty()) {
    KILN_ASSIGN_OR_RETURN(int expected_mismatches, CompareOutputs(leaves, output_flags, std::cout));
    mismatches += expected_mismatches;
  }
  if (profile) KILN_RETURN_IF_ERROR(ReportProfile(run.profile, *device, options));
  return mismatches ? 1 : 0;
}
#endif

int Main(int argc, char** argv) {
  Options options;
  FlagParser flags(kProgram,
                   "hlo-run --check FILE...\n       hlo-run --reference FILE [flags]\n"
                   "       hlo-run FILE --device=host|cuda [flags]");
  flags.AddBool("check", &options.check, "parse and verify each FILE");
  flags.AddBool("reference", &options.reference, "evaluate FILE with the reference evaluator");
  flags.AddStringList("input", &options.inputs,
                      "one entry input per array leaf: 2x3xf32=1 2 3 4 5 6, @x.npy, 4xbf16=@raw.bin");
  flags.AddStringList("output", &options.outputs,
                      "one per result leaf: '-' prints, '@o.npy' writes, '+o.npy' appends, '' skips");
  flags.AddStringList("expected_output", &options.expected_outputs,
                      "one per result leaf, compared with per-type tolerances; '(ignored)' skips");
  flags.AddDouble("atol", &options.atol, "absolute tolerance for float results (default per type)");
  flags.AddDouble("rtol", &options.rtol, "relative tolerance for float results (default per type)");
  flags.AddInt("seed", &options.seed, "seed of the random inputs used without --input (default 0)");
  flags.AddInt("num_replicas", &options.num_replicas,
               "replicas to simulate, overriding the module's replica_count");
  flags.AddInt("num_partitions", &options.num_partitions,
               "partitions to simulate, overriding the module's num_partitions");
  flags.AddBool("print_timing", &options.print_timing, "print the evaluation time to stderr");
  flags.AddString("device", &options.device,
                  "host or cuda: compile FILE, run it there and compare with the reference evaluator");
  flags.AddBool("profile", &options.profile, "with --device: print the per-HLO profile of the run");
  flags.AddBool("tf32", &options.tf32,
                "with --device=cuda: run default-precision f32 dots on the TF32 tensor cores, as bef-compile does "
                "by default (off here, so results are checked against the evaluator's f32 arithmetic)");
  flags.AddString("export_profile", &options.export_profile,
                  "with --device: write the per-HLO profile of the run as JSON");
  std::vector<std::string> files;
  Status parsed = flags.Parse(argc, argv, &files);
  if (!parsed.ok()) return ReportError(kProgram, parsed);
  if (flags.help_requested()) {
    std::cout << flags.Usage();
    return 0;
  }
  int modes = int{options.check} + int{options.reference} + int{!options.device.empty()};
  if (modes != 1)
    return ReportError(kProgram, Error("give exactly one of --check, --reference and --device (see --help)"));
  if (options.device.empty() && (options.profile || !options.export_profile.empty()))
    return ReportError(kProgram, Error("--profile and --export_profile need --device"));
  if (options.check) return RunCheck(files);
  if (!options.device.empty()) {
    if (files.size() != 1) return ReportError(kProgram, Error("--device needs exactly one FILE"));
#ifdef KILN_HAVE_DEVICE_RUNNER
    StatusOr<int> verdict = RunOnDevice(files[0], options);
    if (!verdict.ok()) return ReportError(kProgram, verdict.status());
    return *verdict;
#else
    return ReportError(kProgram, Error("this hlo-run was built without the compiler (no MLIR): --device is unavailable"));
#endif
  }
  return RunReference(files, options);
}

}  // namespace
}  // namespace kiln::tools

int main(int argc, char** argv) {
  try {
    return kiln::tools::Main(argc, argv);
  } catch (const std::exception& e) {
    // Out of memory on an oversized module, mostly; still one line, no abort.
    std::cerr << "hlo-run: error: " << e.what() << "\n";
    return 1;
  }
}
