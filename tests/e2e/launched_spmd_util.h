// An SPMD artifact run as P bef-run processes by scripts/launch_local.sh
// over the loopback, each process checking its own devices' results
// against expected ones (--expected_output): the .bef, every device's
// inputs and expected results are written as files to a scratch directory
// ("in.{device}.i.npy", "expected.{device}.i.npy", the README's per-device
// convention). Shared by multiprocess_e2e_test and corpus_spmd_e2e_test.
// KILN_BEF_RUN and KILN_LAUNCH_LOCAL (set by CMake) name the programs.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/npy.h"
#include "common/value_syntax.h"
#include "serialization/artifact.h"
#include "tests/e2e/process_test_util.h"
#include "tests/e2e/spmd_test_util.h"

namespace kiln::testing {

struct ProcessRun {
  int processes = 2;
  bool file_store = false;
  double atol = 1e-5, rtol = 1e-5;
  double timeout_seconds = 30;
  bool donate = false;  // bef-run --donate (a module with must-alias input_output_alias needs it)
};

inline std::string BefRun() { return EnvPath("KILN_BEF_RUN"); }
inline std::string LaunchLocal() { return EnvPath("KILN_LAUNCH_LOCAL"); }

// "" when every device of `artifact`, run as `run.processes` processes on
// the per-device arguments `args`, gives the per-device `expected` results;
// else what went wrong. The launcher is waited for with a deadline.
inline std::string CompareLaunchedProcesses(const bef::Artifact& artifact,
                                            const std::vector<std::vector<Literal>>& args,
                                            const std::vector<Literal>& expected, const ProcessRun& run) {
  constexpr auto kChildDeadline = std::chrono::seconds(120);
  if (BefRun().empty() || LaunchLocal().empty()) return "KILN_BEF_RUN and KILN_LAUNCH_LOCAL must be set";
  const int64_t n = artifact.program.device_count();
  if (run.processes <= 0 || n % run.processes != 0) return "the devices do not divide among the processes";
  if (static_cast<int64_t>(args.size()) != n || static_cast<int64_t>(expected.size()) != n)
    return "arguments or expected results are not one per device";
  ScratchDir dir;
  if (dir.path().empty()) return "no scratch directory";
  Status written = bef::WriteArtifactFile(artifact, dir / "m.bef");
  if (!written.ok()) return written.message();
  std::vector<std::string> argv = {"/bin/bash", LaunchLocal()};
  if (run.file_store) argv.push_back("--file_store");
  argv.insert(argv.end(), {std::to_string(run.processes), BefRun(), dir / "m.bef",
                           "--num_devices=" + std::to_string(n / run.processes),
                           "--collective_timeout=" + std::to_string(run.timeout_seconds),
                           "--atol=" + std::to_string(run.atol), "--rtol=" + std::to_string(run.rtol)});
  if (run.donate) argv.push_back("--donate");
  size_t inputs = 0, outputs = 0;
  for (int64_t d = 0; d < n; ++d) {
    std::vector<Literal> leaves;
    for (const Literal& a : args[d])
      for (Literal& leaf : FlattenTuple(a)) leaves.push_back(std::move(leaf));
    inputs = leaves.size();
    for (size_t i = 0; i < leaves.size(); ++i) {
      Status s = WriteNpy(leaves[i], dir / ("in." + std::to_string(d) + "." + std::to_string(i) + ".npy"));
      if (!s.ok()) return s.message();
    }
    std::vector<Literal> results = FlattenTuple(expected[d]);
    outputs = results.size();
    for (size_t i = 0; i < results.size(); ++i) {
      Status s = WriteNpy(results[i], dir / ("expected." + std::to_string(d) + "." + std::to_string(i) + ".npy"));
      if (!s.ok()) return s.message();
    }
  }
  for (size_t i = 0; i < inputs; ++i) argv.push_back("--input=@" + dir / ("in.{device}." + std::to_string(i) + ".npy"));
  for (size_t i = 0; i < outputs; ++i) {
    argv.push_back("--output=");
    argv.push_back("--expected_output=@" + dir / ("expected.{device}." + std::to_string(i) + ".npy"));
  }
  Child launcher(argv, dir / "out", dir / "err");
  if (!launcher.started()) return "cannot start " + LaunchLocal();
  const int code = launcher.Wait(kChildDeadline);
  const std::string out = launcher.out();
  if (code != 0) return "exit code " + std::to_string(code) + "\n" + out + launcher.err();
  // Every device checked its every result.
  size_t ok = 0;
  for (size_t at = out.find("[OK]"); at != std::string::npos; at = out.find("[OK]", at + 1)) ++ok;
  if (ok != static_cast<size_t>(n) * outputs)
    return "expected " + std::to_string(n * outputs) + " matching results, got " + std::to_string(ok) + "\n" + out;
  return "";
}

}  // namespace kiln::testing
