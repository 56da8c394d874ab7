// Thunk emission: turns an optimized HLO module (after the fusion pipeline,
// so every loop kernel is a fusion instruction and every dot a canonical
// GEMM) into a ThunkProgram plus the list of kernels codegen must compile.
//
// Each computation that runs as a thunk sequence (the entry, and the while
// and conditional computations under it) gets its own sequential schedule
// and BufferAssignment. The entry's allocations become the program's
// parameter, output, constant and temp allocations; a called computation's
// parameters are bound to its caller's slices (the while loop state, the
// conditional's operands) and its other buffers get allocations of their
// own. Every thunk records the HLO it implements and a cost estimate.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/hlo/module.h"
#include "thunks/program.h"

namespace kiln::emitter {

// A loop kernel to compile: `name` is the C identifier KernelThunks launch.
struct KernelRequest {
  std::string name;
  const hlo::HloComputation* computation = nullptr;  // the fused computation
};

struct EmittedProgram {
  thunks::ThunkProgram program;  // KernelThunk launch dimensions left at 1
  std::vector<KernelRequest> kernels;
  // Every computation's buffer assignment, for --dump-dir.
  std::string buffer_assignment_text;
  // Sums over the computations of the temp arena size and its lower bound.
  int64_t temp_peak_bytes = 0;
  int64_t temp_lower_bound_bytes = 0;
};

struct EmitOptions {
  // GEMM thunks of default-precision f32 dots may use TF32
  // (GemmThunk::tf32; CompileOptions::tf32).
  bool tf32 = true;
  // The entry's temporaries are assigned for concurrent thunks
  // (pipeline::BufferAssignmentOptions::concurrent_temps): on for programs
  // compiled for several streams.
  bool concurrent_temps = false;
};

// `module` must outlive the result (KernelRequest points into it).
StatusOr<EmittedProgram> EmitThunkProgram(const hlo::HloModule& module, const EmitOptions& options = {});

// Operation kinds bef-compile turns into thunks, for error messages.
std::string SupportedOpsSummary();

}  // namespace kiln::emitter
