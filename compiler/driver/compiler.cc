// CompileModule: passes, thunk emission, codegen and artifact assembly.
#include "compiler/driver/compiler.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <span>

#include "compiler/codegen/codegen_identity.h"
#include "compiler/codegen/kernel_codegen.h"
#include "compiler/codegen/kernel_object_cache.h"
#include "compiler/driver/artifact_cache_key.h"
#include "compiler/driver/fusion_report.h"
#include "compiler/driver/kernel_aliasing.h"
#include "compiler/driver/kernel_dedup.h"
#include "compiler/emitter/stream_assignment.h"
#include "compiler/emitter/thunk_emitter.h"
#include "compiler/evaluator/collective_groups.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/printer.h"
#include "compiler/passes/optimization_pipeline.h"
#include "compiler/passes/sequential_computations.h"
#include "compiler/pipeline/latency_hiding.h"
#include "compiler/pipeline/list_scheduler.h"
#include "thunks/initialization_analysis.h"
#include "thunks/program_text.h"
#include "thunks/streams.h"

namespace kiln::compiler {
namespace {

namespace th = ::kiln::thunks;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Status WriteDump(const CompileOptions& options, const std::string& name, const std::string& text) {
  if (options.dump_dir.empty()) return Status::Ok();
  std::error_code ec;
  std::filesystem::create_directories(options.dump_dir, ec);
  if (ec) return Error("cannot create dump directory " + options.dump_dir + ": " + ec.message());
  std::string path = options.dump_dir + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) return Error("cannot write " + path);
  return Status::Ok();
}

StatusOr<int32_t> SmArch(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5) return Error("invalid CUDA arch '" + arch + "' (expected sm_NN)");
  int32_t v = 0;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(arch[i])) || v > 10000)
      return Error("invalid CUDA arch '" + arch + "' (expected sm_NN)");
    v = v * 10 + (arch[i] - '0');
  }
  return v;
}

// Makes every Kernel thunk under `seq` launch its distinct kernel
// (`distinct_name`), with that kernel's CUDA launch when `dims` has one.
void LaunchDistinctKernels(th::SequenceThunk& seq, const std::map<std::string, std::string>& distinct_name,
                           const std::map<std::string, th::LaunchDims>& dims) {
  for (th::Thunk& t : seq.thunks) {
    if (auto* k = t.As<th::KernelThunk>()) {
      auto name = distinct_name.find(k->kernel_name);
      if (name != distinct_name.end()) k->kernel_name = name->second;
      auto it = dims.find(k->kernel_name);
      if (it != dims.end()) k->launch = it->second;
    }
    if (auto* s = t.As<th::SequenceThunk>()) LaunchDistinctKernels(*s, distinct_name, dims);
    if (auto* w = t.As<th::WhileThunk>()) {
      LaunchDistinctKernels(w->condition, distinct_name, dims);
      LaunchDistinctKernels(w->body, distinct_name, dims);
    }
    if (auto* c = t.As<th::ConditionalThunk>())
      for (th::SequenceThunk& b : c->branches) LaunchDistinctKernels(b, distinct_name, dims);
  }
}

th::LaunchDims ToThunkDims(const codegen::LaunchDims& d) {
  return th::LaunchDims{{d.grid[0], d.grid[1], d.grid[2]}, {d.block[0], d.block[1], d.block[2]}, d.shared_mem_bytes};
}

std::vector<bef::KernelEntry> Entries(const std::vector<codegen::CompiledKernel>& kernels) {
  std::vector<bef::KernelEntry> entries;
  for (const codegen::CompiledKernel& k : kernels) entries.push_back({k.name, ToThunkDims(k.launch)});
  return entries;
}

int64_t CountThunks(const th::SequenceThunk& root) {
  int64_t n = 0;
  th::ForEachThunk(root, [&](const th::Thunk&, int) { ++n; });
  return n;
}

// The host CPU levels lowest first, "native" last, each once: the order of
// the artifact's host images, the last one this CPU runs being the best
// (serialization/host_image.h). Errors name an unknown level.
StatusOr<std::vector<std::string>> OrderedHostCpus(const std::vector<std::string>& levels) {
  std::vector<std::string> order = DefaultX86Levels();
  order.push_back("native");
  std::vector<bool> chosen(order.size(), false);
  for (const std::string& level : levels) {
    auto it = std::find(order.begin(), order.end(), level);
    if (it == order.end())
      return Error("unknown host CPU level '" + level + "' (expected x86-64-v2, x86-64-v3, x86-64-v4, native)");
    chosen[it - order.begin()] = true;
  }
  std::vector<std::string> ordered;
  for (size_t i = 0; i < order.size(); ++i)
    if (chosen[i]) ordered.push_back(order[i]);
  return ordered;
}

// Adds the kernel images for the requested targets, each kernel once
// however many fusions share it (kernel_dedup.h; every Kernel thunk then
// launches its distinct kernel), and, when CUDA is a target, sets every
// KernelThunk's launch to its kernel's CUDA launch. The host entries' work
// units (grid.x, any int64) stay in the host image: they are no CUDA
// launch, and a host-only artifact's thunks keep the default one.
Status AddKernelImages(const emitter::EmittedProgram& emitted, const CompileOptions& options,
                       const codegen::KernelObjectCache* kernel_cache, bef::Artifact& artifact, CompileStats& stats) {
  DistinctKernels distinct = DeduplicateKernels(emitted.kernels, KernelAliasing(artifact.program));
  stats.kernels = static_cast<int64_t>(emitted.kernels.size());
  stats.distinct_kernels = static_cast<int64_t>(distinct.specs.size());
  const std::vector<codegen::KernelSpec>& specs = distinct.specs;
  codegen::CodegenOptions cg;
  cg.host = options.host;
  cg.cuda = options.cuda;
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> levels, OrderedHostCpus(options.host_cpus));
  for (const std::string& level : levels) {
    KILN_ASSIGN_OR_RETURN(codegen::HostCpu cpu, codegen::ResolveHostCpu(level));
    cg.host_cpus.push_back(std::move(cpu));
  }
  cg.cuda_arch = options.cuda_arch;
  cg.keep_kernel_ir = !options.dump_dir.empty();
  cg.jobs = options.jobs;
  cg.kernel_cache = kernel_cache;
  codegen::CodegenProgress progress;
  if (options.progress) {
    int targets = (options.host ? static_cast<int>(cg.host_cpus.size()) : 0) + options.cuda;
    progress = [&, targets](int64_t done, int64_t total) {
      options.progress("[codegen " + std::to_string(done) + "/" + std::to_string(total) + " (" +
                       std::to_string(stats.distinct_kernels) + " distinct kernels of " +
                       std::to_string(stats.kernels) + ", " + std::to_string(targets) + " target" +
                       (targets > 1 ? "s" : "") + ")]");
    };
  }
  KILN_ASSIGN_OR_RETURN(codegen::CodegenResult result, codegen::CompileKernels(specs, cg, progress));
  stats.kernels_compiled = result.kernels_compiled;
  stats.kernels_from_cache = result.kernels_from_cache;
  stats.host_objects_shared = result.host_objects_shared;
  if (!result.cache_warning.empty()) stats.cache_warning = result.cache_warning;
  KILN_RETURN_IF_ERROR(WriteDump(options, "kernels.mlir", result.mlir_text));
  stats.codegen_stage_seconds = result.stage_seconds;
  std::map<std::string, th::LaunchDims> dims;
  if (result.host) {
    artifact.targets.push_back("host-x86_64");
    result.more_host_images.insert(result.more_host_images.begin(), std::move(*result.host));
    // One image per CPU level, lowest first (ParseHostCpus' order).
    for (codegen::HostImage& host : result.more_host_images) {
      bef::KernelImage image;
      image.target = "host-x86_64";
      image.kind = bef::TargetKind::kHost;
      image.shared_object = std::move(host.shared_object);
      image.kernels = Entries(host.kernels);
      image.cpu_level = host.cpu.level;
      image.cpu_features = host.cpu.features;
      artifact.kernel_images.push_back(std::move(image));
    }
  }
  if (result.cuda) {
    KILN_RETURN_IF_ERROR(WriteDump(options, "kernels.ptx", result.cuda->ptx));
    bef::KernelImage image;
    image.target = "cuda";
    image.kind = bef::TargetKind::kCuda;
    image.ptx = std::move(result.cuda->ptx);
    if (!result.cuda->cubin.empty()) {
      KILN_ASSIGN_OR_RETURN(int32_t arch, SmArch(options.cuda_arch));
      image.cubins.push_back({arch, std::move(result.cuda->cubin)});
    }
    image.kernels = Entries(result.cuda->kernels);
    for (const bef::KernelEntry& e : image.kernels) dims[e.name] = e.launch;
    artifact.targets.push_back(image.target);
    artifact.kernel_images.push_back(std::move(image));
  }
  LaunchDistinctKernels(artifact.program.root, distinct.distinct_name, dims);
  return Status::Ok();
}

}  // namespace

Status ParseTargets(const std::string& list, CompileOptions& options) {
  options.host = options.cuda = false;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    std::string t = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (t == "host") options.host = true;
    else if (t == "cuda") options.cuda = true;
    else return Error("unknown target '" + t + "' (expected host, cuda)");
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return Status::Ok();
}

Status ParseHostCpus(const std::string& list, CompileOptions& options) {
  std::vector<std::string> levels;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    levels.push_back(list.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  KILN_ASSIGN_OR_RETURN(options.host_cpus, OrderedHostCpus(levels));
  return Status::Ok();
}

Status OptimizeModule(hlo::HloModule& module) { return passes::RunOptimizationPipeline(module); }

namespace {

int64_t ArrayBytes(const Shape& shape) {
  if (shape.IsArray()) return shape.ByteSize();
  int64_t total = 0;
  if (shape.IsTuple())
    for (int64_t i = 0; i < shape.tuple_size(); ++i) total += ArrayBytes(shape.tuple_shape(i));
  return total;
}

// Bytes read and written by the instructions of `c`, each counted as its
// own kernel. A fusion reads its operands and writes its result once, or,
// with `expand_fusions`, is counted as its fused instructions would be
// unfused.
int64_t BytesAccessed(const hlo::HloComputation& c, bool expand_fusions) {
  int64_t total = 0;
  for (const hlo::HloInstruction* inst : c.instructions()) {
    switch (inst->opcode()) {
      case hlo::HloOpcode::kParameter: case hlo::HloOpcode::kConstant: case hlo::HloOpcode::kTuple:
      case hlo::HloOpcode::kGetTupleElement: case hlo::HloOpcode::kBitcast: case hlo::HloOpcode::kWhile:
      case hlo::HloOpcode::kConditional: case hlo::HloOpcode::kCall: case hlo::HloOpcode::kAfterAll:
      case hlo::HloOpcode::kOptimizationBarrier:
        continue;  // no data moved (control flow: its computations count)
      default:
        break;
    }
    const hlo::HloComputation* fused = inst->opcode() == hlo::HloOpcode::kFusion ? inst->called_computation("calls") : nullptr;
    if (expand_fusions && fused) {
      total += BytesAccessed(*fused, true);
      // A loop kernel's loop (passes::WhileLoopKernelFusion): its condition
      // and body count as the loop's would.
      for (const hlo::HloInstruction* loop : fused->instructions())
        if (loop->opcode() == hlo::HloOpcode::kWhile)
          for (const hlo::HloComputation* called : loop->called_computations()) total += BytesAccessed(*called, true);
      continue;
    }
    for (const hlo::HloInstruction* op : inst->operands()) total += ArrayBytes(op->shape());
    total += ArrayBytes(inst->shape());
  }
  return total;
}

int64_t BytesAccessed(const hlo::HloModule& module, bool expand_fusions) {
  int64_t total = 0;
  for (const hlo::HloComputation* c : passes::SequentialComputations(module)) total += BytesAccessed(*c, expand_fusions);
  return total;
}

int64_t CountInstructions(const hlo::HloModule& module, bool skip_fused) {
  std::set<const hlo::HloComputation*> fused;
  if (skip_fused)
    for (const hlo::HloComputation* c : module.computations())
      for (const hlo::HloInstruction* inst : c->instructions())
        if (inst->opcode() == hlo::HloOpcode::kFusion)
          for (const hlo::HloComputation* callee : inst->called_computations()) fused.insert(callee);
  int64_t n = 0;
  for (const hlo::HloComputation* c : module.computations())
    if (!fused.count(c)) n += c->instruction_count();
  return n;
}

// Runs the pass pipeline on `module` (a private copy), with per-pass dumps
// and timings.
Status RunPasses(hlo::HloModule& module, const CompileOptions& options, CompileStats& s) {
  KILN_RETURN_IF_ERROR(WriteDump(options, "module.before_optimizations.hlo", hlo::PrintModule(module)));
  std::optional<std::regex> selected;
  if (!options.dump_passes.empty()) {
    try {
      selected.emplace(options.dump_passes, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Error("invalid --dump-passes regex '" + options.dump_passes + "': " + e.what());
    }
  }
  passes::PipelineOptions pipeline;
  if (options.verify_each_pass) pipeline.verify_each_pass = true;
  pipeline.bf16_gemm_operands = options.cuda;
  pipeline.int8_gemms = options.cuda;
  pipeline.fp8_gemms = options.cuda;
  pipeline.row_normalization = options.cuda;
  pipeline.dot_merger = options.cuda;
  pipeline.loop_kernels = !options.cuda;
  pipeline.tf32 = options.tf32;
  if (options.progress) {
    pipeline.before_pass = [&](int index, int count, std::string_view) {
      options.progress("[passes " + std::to_string(index + 1) + "/" + std::to_string(count) + "]");
    };
  }
  // Sorts CUDA runs as radix sorts; an artifact for the host alone keeps its
  // sort kernels, one for both runs the radix sort thunk on the host too
  // (kernels_lib/host_radix_sort).
#ifdef KILN_RADIX_SORT_KERNELS
  pipeline.radix_sort = options.cuda && options.radix_sort;
#endif
  if (!options.dump_dir.empty()) {
    pipeline.after_changed_pass = [&](int index, std::string_view pass, const hlo::HloModule& m) -> Status {
      if (selected && !std::regex_search(std::string(pass), *selected)) return Status::Ok();
      char prefix[32];
      std::snprintf(prefix, sizeof prefix, "module.%02d.", index);
      return WriteDump(options, prefix + std::string(pass) + ".hlo", hlo::PrintModule(m));
    };
  }
  std::vector<passes::PassRecord> records;
  s.instructions = CountInstructions(module, false);
  Clock::time_point start = Clock::now();
  KILN_RETURN_IF_ERROR(passes::RunOptimizationPipeline(module, pipeline, &records));
  s.passes_seconds = Since(start);
  std::map<std::string, int> seen;
  for (const passes::PassRecord& r : records) {
    int n = ++seen[r.name];
    s.pass_seconds.push_back({n == 1 ? r.name : r.name + "#" + std::to_string(n), r.seconds});
  }
  s.instructions_after_passes = CountInstructions(module, true);
  // Both after the passes, so they differ by fusion alone.
  s.bytes_accessed_unfused = BytesAccessed(module, /*expand_fusions=*/true);
  s.bytes_accessed_fused = BytesAccessed(module, /*expand_fusions=*/false);
  for (const hlo::HloComputation* c : passes::SequentialComputations(module))
    for (const hlo::HloInstruction* inst : c->instructions()) s.fusions += inst->opcode() == hlo::HloOpcode::kFusion;
  KILN_RETURN_IF_ERROR(WriteDump(options, "fusion_report.txt", FusionReport(module)));
  return WriteDump(options, "module.after_optimizations.hlo", hlo::PrintModule(module));
}

// The replicas a module that declares one device was written for: the
// most its replica groups name or its collectives' shapes imply.
int64_t ImpliedReplicaCount(const hlo::HloModule& module) {
  int64_t count = hlo::RequiredDeviceCount(module);
  for (const hlo::HloComputation* c : module.computations())
    for (const hlo::HloInstruction* inst : c->instructions())
      count = std::max(count, hlo::ShapeImpliedGroupSize(*inst).value_or(1));
  return count;
}

// CompileOptions::num_replicas / num_partitions, else the module's grid,
// widened to what its collectives need when it declares one device.
void SetDeviceGrid(const CompileOptions& options, hlo::HloModule& module) {
  hlo::ModuleConfig& config = module.config();
  if (config.replica_count <= 1 && config.num_partitions <= 1 && options.num_replicas <= 0 &&
      options.num_partitions <= 0)
    config.replica_count = ImpliedReplicaCount(module);
  if (options.num_replicas > 0) config.replica_count = options.num_replicas;
  if (options.num_partitions > 0) config.num_partitions = options.num_partitions;
}

}  // namespace

Status RunMiddleEnd(const hlo::HloModule& input, const CompileOptions& options, CompileStats* stats) {
  CompileStats local;
  CompileStats& s = stats ? *stats : local;
  Clock::time_point start = Clock::now();
  std::unique_ptr<hlo::HloModule> module = input.Clone();
  KILN_RETURN_IF_ERROR(RunPasses(*module, options, s));
  Clock::time_point ba_start = Clock::now();
  std::string report;
  for (const hlo::HloComputation* c : passes::SequentialComputations(*module)) {
    KILN_ASSIGN_OR_RETURN(pipeline::BufferAssignment ba, pipeline::AssignBuffersMinimizingMemory(*c));
    // The schedule the emitter uses: async collectives' latency hidden.
    KILN_ASSIGN_OR_RETURN(std::optional<pipeline::BufferAssignment> overlapped,
                          pipeline::AssignBuffersHidingLatency(*c, ba, {}));
    if (overlapped) ba = std::move(*overlapped);
    s.temp_peak_bytes += ba.peak_temp_bytes();
    s.temp_lower_bound_bytes += ba.temp_lower_bound();
    report += "computation " + c->name() + ":\n" + ba.ToString() + "\n";
  }
  s.buffer_assignment_seconds = Since(ba_start);
  KILN_RETURN_IF_ERROR(WriteDump(options, "buffer_assignment.txt", report));
  s.compile_seconds = Since(start);
  return Status::Ok();
}

namespace {

// The pipeline itself: passes, thunk program, kernels (through
// `kernel_cache` when set), validation.
StatusOr<bef::Artifact> CompileUncached(const hlo::HloModule& input, const CompileOptions& options,
                                        const codegen::KernelObjectCache* kernel_cache, CompileStats& s) {
  Clock::time_point compile_start = Clock::now();
  std::unique_ptr<hlo::HloModule> module = input.Clone();
  SetDeviceGrid(options, *module);
  KILN_RETURN_IF_ERROR(RunPasses(*module, options, s));
  std::string optimized = hlo::PrintModule(*module);

  Clock::time_point start = Clock::now();
  KILN_ASSIGN_OR_RETURN(emitter::EmittedProgram emitted, emitter::EmitThunkProgram(*module, {.tf32 = options.tf32, .concurrent_temps = options.streams > 1}));
  s.emit_seconds = Since(start);
  s.temp_peak_bytes = emitted.temp_peak_bytes;
  s.temp_lower_bound_bytes = emitted.temp_lower_bound_bytes;
  KILN_RETURN_IF_ERROR(WriteDump(options, "buffer_assignment.txt", emitted.buffer_assignment_text));

  bef::Artifact artifact;
  artifact.producer = options.producer;
  artifact.program = std::move(emitted.program);
  // Zero per execution only what may be read before it is written.
  th::MarkZeroInitializedAllocations(artifact.program);
  emitter::StreamAssignmentStats streams = emitter::AssignStreams(artifact.program, options.streams);
  s.streams = streams.streams;
  s.stream_events = streams.events;
  artifact.hlo_text = std::move(optimized);
  start = Clock::now();
  KILN_RETURN_IF_ERROR(AddKernelImages(emitted, options, kernel_cache, artifact, s));
  s.codegen_seconds = Since(start);
  s.thunks = CountThunks(artifact.program.root);
  KILN_RETURN_IF_ERROR(WriteDump(options, "thunk_program.txt", th::ProgramToText(artifact.program)));
  KILN_RETURN_IF_ERROR(bef::ValidateArtifact(artifact).WithContext("internal error: invalid artifact"));
  s.compile_seconds = Since(compile_start);
  return artifact;
}

Status CheckTargets(const CompileOptions& options) {
  if (!options.host && !options.cuda) return Error("no target selected (--targets=host,cuda)");
  if (options.host && options.host_cpus.empty()) return Error("no host CPU level selected (--host-cpu)");
  if (options.host)
    for (const std::string& level : options.host_cpus) KILN_RETURN_IF_ERROR(codegen::ResolveHostCpu(level).status());
  if (options.cuda) KILN_RETURN_IF_ERROR(SmArch(options.cuda_arch).status());
  if (options.streams < 1 || options.streams > th::kMaxStreams)
    return Error("--streams must be between 1 and " + std::to_string(th::kMaxStreams) + ", not " +
                 std::to_string(options.streams));
  return Status::Ok();
}

// Whether a compile with `options` goes through the compile cache: a dump
// needs every stage to run.
bool UsesCache(const CompileOptions& options) { return !options.cache_dir.empty() && options.dump_dir.empty(); }

// The compile cache for one compile: its artifact level (the module's key)
// and its kernel level (kernel_object_cache.h); all empty when the compile
// does not use the cache.
struct CompileCaches {
  std::unique_ptr<cache::CompileCache> cache;
  std::string artifact_key;
  std::unique_ptr<codegen::KernelObjectCache> kernels;

  static StatusOr<CompileCaches> Open(const hlo::HloModule& module, const CompileOptions& options) {
    CompileCaches c;
    if (!UsesCache(options)) return c;
    std::string codegen_identity = codegen::CodegenIdentity();
    if (codegen_identity.empty()) return c;
    KILN_ASSIGN_OR_RETURN(c.cache, cache::CompileCache::Open(options.cache_dir, options.cache_max_bytes));
    c.artifact_key = ArtifactCacheKey(module, options, codegen_identity);
    c.kernels = std::make_unique<codegen::KernelObjectCache>(*c.cache, std::move(codegen_identity));
    return c;
  }

  std::optional<std::vector<uint8_t>> LookupArtifact(CompileStats& s) {
    if (!cache) return std::nullopt;
    std::optional<std::vector<uint8_t>> bytes = cache->Lookup(artifact_key);
    (bytes ? s.artifact_cache_hits : s.artifact_cache_misses) += 1;
    return bytes;
  }

  // A failed store costs later compiles their hit, not this one its
  // result: it becomes a warning in the stats.
  void StoreArtifact(std::span<const uint8_t> bytes, CompileStats& s) {
    if (!cache) return;
    Status stored = cache->Store(artifact_key, bytes);
    if (!stored.ok()) s.cache_warning = stored.message();
  }
};

}  // namespace

StatusOr<std::vector<uint8_t>> CompileModuleToBef(const hlo::HloModule& input, const CompileOptions& options,
                                                  CompileStats* stats) {
  KILN_RETURN_IF_ERROR(CheckTargets(options));
  CompileStats local;
  CompileStats& s = stats ? *stats : local;
  Clock::time_point start = Clock::now();
  KILN_ASSIGN_OR_RETURN(CompileCaches caches, CompileCaches::Open(input, options));
  std::optional<std::vector<uint8_t>> bytes = caches.LookupArtifact(s);
  if (!bytes) {
    KILN_ASSIGN_OR_RETURN(bef::Artifact artifact, CompileUncached(input, options, caches.kernels.get(), s));
    KILN_ASSIGN_OR_RETURN(bytes, bef::SerializeArtifact(artifact));
    caches.StoreArtifact(*bytes, s);
  }
  s.compile_seconds = Since(start);
  return std::move(*bytes);
}

StatusOr<bef::Artifact> CompileModule(const hlo::HloModule& input, const CompileOptions& options,
                                      CompileStats* stats) {
  // Through the cache, the artifact is what its .bef bytes load as.
  if (UsesCache(options)) {
    KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, CompileModuleToBef(input, options, stats));
    return bef::LoadArtifact(bytes);
  }
  KILN_RETURN_IF_ERROR(CheckTargets(options));
  CompileStats local;
  return CompileUncached(input, options, /*kernel_cache=*/nullptr, stats ? *stats : local);
}

}  // namespace kiln::compiler
