// DeviceRunner: compile an HLO module in memory and run it on a kiln device,
// with Literals in and out. What `hlo-run --device=` and the end-to-end
// tests use to compare compiled execution against the reference evaluator.
#pragma once

#include <memory>
#include <vector>

#include "common/literal.h"
#include "common/status.h"
#include "compiler/driver/compiler.h"
#include "compiler/hlo/module.h"
#include "runtime/runtime.h"

namespace kiln::tools {

// Literal <-> runtime buffers, one per array leaf in depth-first order (the
// order LoadedExecutable takes arguments and returns outputs).
StatusOr<std::vector<runtime::Buffer>> LiteralToBuffers(const Literal& literal);
// Reassembles a value of `shape` from its leaf buffers.
StatusOr<Literal> BuffersToLiteral(const Shape& shape, const std::vector<runtime::Buffer>& buffers);

struct DeviceRunResult {
  Literal result;
  // False in the CUDA emulator's sampling mode: `result` holds no values
  // (runtime::ExecutionResult::results_computed).
  bool results_computed = true;
  // Its entries point into `executable`'s program, which is kept alive here.
  runtime::ExecutionProfile profile;
  std::unique_ptr<runtime::LoadedExecutable> executable;
};

struct CompileAndRunOptions {
  bool profile = false;  // collect the per-thunk profile
  // Compile for host and CUDA: the one program both run, as
  // `bef-compile --targets=host,cuda` writes it.
  bool all_targets = false;
  // Let default-precision f32 GEMMs round their operands to TF32 on CUDA
  // (bef-compile's default, CompileOptions::tf32). Off here: runs that are
  // compared with the reference evaluator check f32 arithmetic.
  bool tf32 = false;
  // Streams the program's independent thunks may run on (CompileOptions::streams).
  int streams = 1;
};

// Compiles `module` for `device`'s target and runs it once on `args` (one
// per entry parameter). The device outlives the call. Host kernels are
// compiled for the best x86-64 level of this machine alone: the artifact
// runs here and now, and is never copied elsewhere.
StatusOr<DeviceRunResult> CompileAndRun(const hlo::HloModule& module, const std::vector<Literal>& args,
                                        runtime::Device& device, const CompileAndRunOptions& run = {});

// Loads `artifact` on `device` and runs it once on `args`, as CompileAndRun
// does after compiling.
StatusOr<DeviceRunResult> RunArtifact(const bef::Artifact& artifact, const std::vector<Literal>& args,
                                      runtime::Device& device, const CompileAndRunOptions& run = {});

}  // namespace kiln::tools
