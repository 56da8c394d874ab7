// kiln's compiler driver: HLO module -> .bef artifact.
//
//   1. HLO passes (compiler/passes): call inlining, bitcast -> reshape, dot
//      canonicalization into GEMMs, kernel fusion, dead code elimination;
//   2. a sequential schedule and buffer assignment per computation, and the
//      thunk program (compiler/emitter);
//   3. kernel codegen through MLIR for the requested targets
//      (compiler/codegen: host shared object, CUDA PTX + cubin);
//   4. the artifact (serialization/artifact.h), deterministic byte for byte.
// With a dump directory, every stage's output is written there.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/hlo/module.h"
#include "serialization/artifact.h"

namespace kiln::compiler {

struct CompileOptions {
  bool host = true;
  bool cuda = false;
  std::string cuda_arch = "sm_90";
  // When set: module.before_optimizations.hlo, module.after_optimizations.hlo,
  // buffer_assignment.txt, kernels.mlir, kernels.ptx, thunk_program.txt.
  std::string dump_dir;
  std::string producer = "kiln 0.1 (bef-compile)";
};

// Wall time of each stage, for `bef-compile --stats` and bench/.
struct CompileStats {
  double passes_seconds = 0;
  double emit_seconds = 0;
  double codegen_seconds = 0;
  int64_t num_kernels = 0;
  int64_t num_thunks = 0;
};

// Compiles a copy of `module` (the caller's module is not modified).
StatusOr<bef::Artifact> CompileModule(const hlo::HloModule& module, const CompileOptions& options,
                                      CompileStats* stats = nullptr);

// Runs only the HLO pass pipeline on `module`, in place.
Status OptimizeModule(hlo::HloModule& module);

// "host,cuda" -> options.host/options.cuda; errors name an unknown target.
Status ParseTargets(const std::string& list, CompileOptions& options);

}  // namespace kiln::compiler
