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

// Compiles `module` for `device`'s target (with `all_targets`, for host and
// CUDA: the one program both run, as `bef-compile --targets=host,cuda`
// writes it) and runs it once on `args` (one per entry parameter). The
// device outlives the call.
StatusOr<DeviceRunResult> CompileAndRun(const hlo::HloModule& module, const std::vector<Literal>& args,
                                        runtime::Device& device, bool profile = false, bool all_targets = false);

}  // namespace kiln::tools
