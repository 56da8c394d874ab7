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
#include <random>

#include "common/random_literal.h"
#include "common/value_compare.h"
#include "common/value_syntax.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "tools/common/flags.h"

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
};

StatusOr<std::unique_ptr<hlo::HloModule>> LoadModule(const std::string& path,
                                                     const Options& options = {}) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module, hlo::ParseHloModuleFile(path));
  if (options.num_replicas > 0) module->config().replica_count = options.num_replicas;
  if (options.num_partitions > 0) module->config().num_partitions = options.num_partitions;
  KILN_RETURN_IF_ERROR(hlo::VerifyModule(*module).WithContext(path));
  if (!module->entry()) return Error(path + ": module has no entry computation");
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

std::string DescribeShapes(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& shape : shapes) s += (s.empty() ? "" : ", ") + FormatValueShape(shape);
  return s;
}

// Rebuilds a (nested tuple) value of `shape` from its array leaves.
Literal Assemble(const Shape& shape, std::vector<Literal>& leaves, size_t* next) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(Assemble(s, leaves, next));
    return Literal::MakeTuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);  // tokens
  return std::move(leaves[(*next)++]);
}

StatusOr<std::vector<Literal>> BuildArguments(const hlo::HloComputation& entry, const Options& options) {
  std::vector<Shape> params;
  for (int64_t i = 0; i < entry.parameter_count(); ++i) {
    if (!entry.parameter(i)) return Error("entry parameter " + std::to_string(i) + " is missing");
    params.push_back(entry.parameter(i)->shape());
  }
  std::vector<Literal> args;
  if (options.inputs.empty()) {
    std::mt19937_64 rng(static_cast<uint64_t>(options.seed));
    for (const Shape& shape : params) args.push_back(RandomLiteral(shape, rng));
    return args;
  }
  std::vector<Shape> leaf_shapes;
  for (const Shape& shape : params) {
    std::vector<Shape> leaves = FlattenShape(shape);
    leaf_shapes.insert(leaf_shapes.end(), leaves.begin(), leaves.end());
  }
  if (options.inputs.size() != leaf_shapes.size())
    return Error("the entry computation takes " + std::to_string(leaf_shapes.size()) + " inputs (" +
                 DescribeShapes(leaf_shapes) + "), got " + std::to_string(options.inputs.size()) +
                 " --input flags");
  std::vector<Literal> leaves;
  for (size_t i = 0; i < leaf_shapes.size(); ++i) {
    StatusOr<Literal> value = ParseValue(options.inputs[i], &leaf_shapes[i]);
    if (!value.ok()) return value.status().WithContext("--input " + std::to_string(i));
    leaves.push_back(std::move(value).value());
  }
  size_t next = 0;
  for (const Shape& shape : params) args.push_back(Assemble(shape, leaves, &next));
  return args;
}

// Writes or prints the result leaves; with no --output (and nothing to
// compare against) every leaf is printed.
Status EmitOutputs(const std::vector<Literal>& results, const Options& options) {
  if (options.outputs.empty()) {
    if (!options.expected_outputs.empty()) return Status::Ok();
    for (const Literal& leaf : results) KILN_RETURN_IF_ERROR(WriteValue(leaf, "-", std::cout));
    return Status::Ok();
  }
  if (options.outputs.size() != results.size())
    return Error("the module has " + std::to_string(results.size()) + " results, got " +
                 std::to_string(options.outputs.size()) + " --output flags");
  for (size_t i = 0; i < results.size(); ++i)
    KILN_RETURN_IF_ERROR(WriteValue(results[i], options.outputs[i], std::cout)
                             .WithContext("--output " + std::to_string(i)));
  return Status::Ok();
}

// Compares with --expected_output; returns the number of mismatching
// results, or an error for malformed expectations.
StatusOr<int> CompareOutputs(const std::vector<Literal>& results, const Options& options) {
  if (options.expected_outputs.size() != results.size())
    return Error("the module has " + std::to_string(results.size()) + " results, got " +
                 std::to_string(options.expected_outputs.size()) + " --expected_output flags");
  CompareOptions compare{options.atol, options.rtol};
  int mismatches = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& spec = options.expected_outputs[i];
    if (spec.empty() || spec == "(ignored)") continue;
    const Shape& shape = results[i].shape();
    StatusOr<Literal> expected = ParseValue(spec, &shape);
    if (!expected.ok()) return expected.status().WithContext("--expected_output " + std::to_string(i));
    Status match = CompareValues(results[i], *expected, "result[" + std::to_string(i) + "]", compare);
    if (!match.ok()) {
      std::cout << "[FAILED] " << match.message() << "\n";
      ++mismatches;
    }
  }
  if (mismatches == 0)
    std::cout << "[SUCCESS] " << results.size() << " result" << (results.size() == 1 ? "" : "s")
              << " matched the expected outputs\n";
  return mismatches;
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
  Status emitted = EmitOutputs(leaves, options);
  if (!emitted.ok()) return ReportError(kProgram, emitted);
  if (options.expected_outputs.empty()) return 0;
  StatusOr<int> mismatches = CompareOutputs(leaves, options);
  if (!mismatches.ok()) return ReportError(kProgram, mismatches.status());
  return *mismatches ? 1 : 0;
}

int Main(int argc, char** argv) {
  Options options;
  FlagParser flags(kProgram, "hlo-run --check FILE...\n       hlo-run --reference FILE [flags]");
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
  std::vector<std::string> files;
  Status parsed = flags.Parse(argc, argv, &files);
  if (!parsed.ok()) return ReportError(kProgram, parsed);
  if (flags.help_requested()) {
    std::cout << flags.Usage();
    return 0;
  }
  if (options.check == options.reference)
    return ReportError(kProgram, Error("give exactly one of --check and --reference (see --help)"));
  if (options.check) return RunCheck(files);
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
