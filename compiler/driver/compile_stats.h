// CompileStats: the machine-readable summary of one compilation
// (`bef-compile --stats=FILE.json`), filled by the driver stage by stage.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::compiler {

struct CompileStats {
  int64_t instructions = 0;               // in the input module (all computations)
  int64_t instructions_after_passes = 0;  // after the middle-end, fused computations excluded
  int64_t fusions = 0;
  int64_t kernels = 0;           // kernel thunks' fused computations
  int64_t distinct_kernels = 0;  // kernels generated per target (kernel_dedup.h)
  int64_t thunks = 0;
  // The root's streams and events after stream assignment (CompileOptions::streams).
  int64_t streams = 1;
  int64_t stream_events = 0;
  // Bytes every instruction would read and write if each were its own
  // kernel (input module), and what the thunk program actually moves.
  int64_t bytes_accessed_unfused = 0;
  int64_t bytes_accessed_fused = 0;
  // Sum over the sequential computations of their temp arena, and of the
  // lower bound (max live bytes at any schedule point) of each.
  int64_t temp_peak_bytes = 0;
  int64_t temp_lower_bound_bytes = 0;
  double compile_seconds = 0;
  double passes_seconds = 0;
  double buffer_assignment_seconds = 0;
  double emit_seconds = 0;
  double codegen_seconds = 0;
  // The compile cache (compiler/cache): whether the artifact came from it
  // (a hit sets only these fields and compile_seconds) or was compiled
  // (a miss); both 0 without a cache.
  int64_t artifact_cache_hits = 0;
  int64_t artifact_cache_misses = 0;
  // Distinct kernels, summed over the targets, that codegen generated and
  // that came from the kernel cache.
  int64_t kernels_compiled = 0;
  int64_t kernels_from_cache = 0;
  // Host images' kernels that use a lower x86-64 level's object instead of
  // their own (codegen/host_level_policy.h).
  int64_t host_objects_shared = 0;
  // A cache entry that could not be stored (the compile itself succeeded).
  std::string cache_warning;
  // Pass name -> seconds, in pipeline order (a pass that runs twice
  // appears twice, with its occurrence number: "dce#2").
  std::vector<std::pair<std::string, double>> pass_seconds;
  // Code generation stage -> seconds (codegen::CodegenResult::stage_seconds:
  // per-kernel stages summed over kernels and threads, then the links).
  std::vector<std::pair<std::string, double>> codegen_stage_seconds;
};

// The stats as one JSON object (keys as in the struct; pass_seconds an
// object from pass name to seconds).
std::string CompileStatsToJson(const CompileStats& stats);

// Human-readable per-pass timing table, then the code generation stages
// (--time-passes).
std::string PassTimingTable(const CompileStats& stats);

}  // namespace kiln::compiler
