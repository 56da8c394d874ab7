// kiln's compiler driver: HLO module -> .bef artifact.
//
//   1. HLO passes (compiler/passes): call inlining, bitcast -> reshape, dot
//      canonicalization into GEMMs, kernel fusion, dead code elimination;
//   2. a sequential schedule and buffer assignment per computation, and the
//      thunk program (compiler/emitter);
//   3. kernel codegen through MLIR for the requested targets, each distinct
//      kernel once (kernel_dedup.h; compiler/codegen: host shared object,
//      CUDA PTX + cubin);
//   4. the artifact (serialization/artifact.h), deterministic byte for byte.
// With a dump directory, every stage's output is written there.
//
// With a compile cache (CompileOptions::cache_dir, compiler/cache), a
// module compiled before with the same options by the same build of kiln
// comes back from the cache byte for byte (artifact_cache_key.h), and a
// changed module regenerates only the kernels the cache does not hold.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/x86_cpu.h"
#include "compiler/cache/compile_cache.h"
#include "compiler/driver/compile_stats.h"
#include "compiler/hlo/module.h"
#include "serialization/artifact.h"

namespace kiln::compiler {

struct CompileOptions {
  bool host = true;
  bool cuda = false;
  std::string cuda_arch = "sm_90";
  // The x86-64 levels host kernels are compiled for, one image each, lowest
  // first: "x86-64-v2", "x86-64-v3", "x86-64-v4", "native" (the compiling
  // machine's CPU; codegen::ResolveHostCpu). The runtime runs the best one
  // the CPU supports (serialization/host_image.h).
  std::vector<std::string> host_cpus = DefaultX86Levels();
  // When set: module.before_optimizations.hlo, module.NN.<pass>.hlo after
  // every pass that changed the module (those matching dump_passes),
  // module.after_optimizations.hlo, fusion_report.txt (each fusion's
  // instructions and the bytes and roofline time it saves),
  // buffer_assignment.txt, kernels.mlir,
  // kernels.ptx, thunk_program.txt.
  std::string dump_dir;
  // ECMAScript regex over pass names selecting the per-pass dumps; empty:
  // every pass.
  std::string dump_passes;
  // Run the verifier after every pass that changes the module (always in
  // debug builds; release builds otherwise verify once after the passes).
  bool verify_each_pass = false;
  // Compiling for CUDA: sorts a radix sort computes run as kiln's radix
  // sort kernels (passes::RadixSortRewriter) when the build has them, and
  // as kernels_lib's HostRadixSort when the artifact also targets the host;
  // false keeps every sort a kernel-IR kernel.
  bool radix_sort = true;
  // f32 dots at DEFAULT operand precision may round their operands to TF32
  // on CUDA's tensor cores, as XLA GPU's do (passes/dot_precision.h);
  // false keeps every f32 GEMM at f32 precision.
  bool tf32 = true;
  // Streams the root's independent thunks may run on
  // (emitter/stream_assignment.h), 1 to thunks::kMaxStreams; 1 runs every
  // thunk in order on one stream.
  int streams = 1;
  // The device grid collectives are resolved on (0: the module's
  // replica_count / num_partitions). A module that declares one device but
  // whose replica groups name more (collective tests are often dumped
  // without replica_count) gets the fewest replicas its groups need.
  int64_t num_replicas = 0;
  int64_t num_partitions = 0;
  // Threads generating kernels (codegen::CodegenOptions::jobs); <= 0: one
  // per core. The artifact is the same bytes for any count.
  int jobs = 0;
  // Called with a one-line status as the compile advances ("[passes
  // 12/31]", "[codegen 40/72 (36 distinct kernels of 939, 2 targets)]");
  // bef-compile shows it on a terminal.
  std::function<void(const std::string&)> progress;
  std::string producer = "kiln 0.1 (bef-compile)";
  // The persistent compile cache's directory (compiler/cache); empty: no
  // cache (the API's --no-cache; bef-compile defaults it to
  // cache::DefaultCacheDir()). A compile with a dump_dir bypasses the cache,
  // since every stage must run to write its dump.
  std::string cache_dir;
  // Bound on the cache directory's entries, least recently used evicted.
  int64_t cache_max_bytes = cache::kDefaultCacheMaxBytes;
};

// Compiles a copy of `module` (the caller's module is not modified).
StatusOr<bef::Artifact> CompileModule(const hlo::HloModule& module, const CompileOptions& options,
                                      CompileStats* stats = nullptr);

// The same compile as the .bef file's bytes (bef::SerializeArtifact of
// CompileModule's artifact); an artifact cache hit returns the stored bytes
// without deserializing them.
StatusOr<std::vector<uint8_t>> CompileModuleToBef(const hlo::HloModule& module, const CompileOptions& options,
                                                  CompileStats* stats = nullptr);

// The middle-end alone on a copy of `module`: the passes, then a schedule
// and buffer assignment for every computation that runs as a thunk
// sequence. Fills `stats` and writes the dumps, but needs no codegen, so it
// works for modules whose ops have no kernels yet (--stop-after).
Status RunMiddleEnd(const hlo::HloModule& module, const CompileOptions& options, CompileStats* stats);

// Runs only the HLO pass pipeline on `module`, in place.
Status OptimizeModule(hlo::HloModule& module);

// "host,cuda" -> options.host/options.cuda; errors name an unknown target.
Status ParseTargets(const std::string& list, CompileOptions& options);

// "x86-64-v2,x86-64-v4,native" -> options.host_cpus, in the order lowest
// level first whatever the list's order, each once; errors name an unknown
// level.
Status ParseHostCpus(const std::string& list, CompileOptions& options);

}  // namespace kiln::compiler
