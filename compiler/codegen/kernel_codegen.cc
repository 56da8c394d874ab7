// CompileKernels: the driver of kiln_codegen. Each kernel is compiled on
// its own for each target and host CPU (CompileOneKernel; for the host,
// all CPUs of one kernel in one job that lowers it once), all of them as
// jobs of one thread pool, then the per-kernel results are linked into the
// targets' images in the order of the request, whichever thread compiled
// them, so the images are the same bytes for any number of threads. No MLIR
// or LLVM headers here.
#include "compiler/codegen/kernel_codegen.h"

#include <memory>
#include <mutex>

#include "compiler/codegen/codegen_internal.h"
#include "compiler/codegen/codegen_session.h"
#include "compiler/codegen/host_level_policy.h"
#include "compiler/codegen/kernel_image_linker.h"
#include "compiler/codegen/kernel_object.h"
#include "compiler/codegen/kernel_object_cache.h"
#include "compiler/codegen/parallel_tasks.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"

namespace kiln::codegen {
namespace {

struct Task {
  const KernelSpec* spec;
  CodegenTarget target;
  int host_cpu;  // index into the host CPUs; 0 for CUDA
};

// options.host_cpus, or the baseline alone.
std::vector<HostCpu> HostCpus(const CodegenOptions& options) {
  if (options.host_cpus.empty()) return {BaselineHostCpu()};
  return options.host_cpus;
}

// Per host CPU, then CUDA, every kernel in request order.
std::vector<Task> Tasks(const std::vector<KernelSpec>& kernels, const CodegenOptions& options, int host_cpus) {
  std::vector<Task> tasks;
  if (options.host)
    for (int c = 0; c < host_cpus; ++c)
      for (const KernelSpec& spec : kernels) tasks.push_back({&spec, CodegenTarget::kHost, c});
  if (options.cuda)
    for (const KernelSpec& spec : kernels) tasks.push_back({&spec, CodegenTarget::kCuda, 0});
  return tasks;
}

// A unit of the pool's work: one kernel for CUDA, or one kernel for every
// host CPU (lowered once, kernel_object.h), filling the results of its
// tasks.
struct Job {
  const KernelSpec* spec;
  CodegenTarget target;
  std::vector<int64_t> tasks;  // host: one per CPU, in the CPUs' order
};

std::vector<Job> Jobs(const std::vector<Task>& tasks, const std::vector<KernelSpec>& kernels) {
  std::vector<Job> jobs;
  std::vector<int64_t> host_job(kernels.size(), -1);
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    if (t.target == CodegenTarget::kHost) {
      int64_t& j = host_job[t.spec - kernels.data()];
      if (j < 0) {
        j = static_cast<int64_t>(jobs.size());
        jobs.push_back({t.spec, t.target, {}});
      }
      jobs[j].tasks.push_back(static_cast<int64_t>(i));
    } else {
      jobs.push_back({t.spec, t.target, {static_cast<int64_t>(i)}});
    }
  }
  return jobs;
}

// The instructions of `computation` and of those it calls.
int64_t InstructionCount(const hlo::HloComputation* computation) {
  if (computation == nullptr) return 1;
  int64_t count = 0;
  for (const hlo::HloInstruction* inst : computation->instructions()) {
    ++count;
    for (const hlo::HloComputation* called : inst->called_computations()) count += InstructionCount(called);
  }
  return count;
}

// An estimate of a job's compile time, for the order the jobs start in
// (parallel_tasks.h): its kernel's instructions times the objects it
// compiles (host: one per level that gets code of its own).
double JobCost(const Job& job, const std::vector<HostCpu>& host_cpus) {
  int64_t objects = 1;
  if (job.target == CodegenTarget::kHost) {
    std::vector<int> sources = HostObjectSources(host_cpus, WiderIsaGainOf(*job.spec));
    objects = 0;
    for (size_t c = 0; c < sources.size(); ++c) objects += sources[c] == static_cast<int>(c);
  }
  return static_cast<double>(objects * InstructionCount(job.spec->computation));
}

struct JobCounts {
  int64_t compiled = 0, from_cache = 0, shared = 0;
};

// The host objects of one kernel: a kernel that gains nothing from the
// wider levels is compiled once, for the lowest, and its object serves the
// levels above (host_level_policy.h).
void RunHostJob(const Job& job, const CodegenOptions& options, const std::vector<HostCpu>& host_cpus,
                std::vector<StatusOr<KernelObject>>& results, JobCounts& counts, internal::CodegenSession& session) {
  std::vector<int> sources = HostObjectSources(host_cpus, WiderIsaGainOf(*job.spec));
  std::vector<HostCpu> compiled_for;
  std::vector<int> slot(host_cpus.size());
  for (size_t c = 0; c < host_cpus.size(); ++c) {
    if (sources[c] == static_cast<int>(c)) {
      slot[c] = static_cast<int>(compiled_for.size());
      compiled_for.push_back(host_cpus[c]);
    } else {
      slot[c] = slot[sources[c]];
      ++counts.shared;
    }
  }
  StatusOr<std::vector<KernelObject>> objects =
      internal::CompileOneKernelForHostCpusCached(*job.spec, options, compiled_for, &counts.compiled,
                                                  &counts.from_cache, &session);
  for (size_t c = 0; c < host_cpus.size(); ++c) {
    if (!objects.ok()) {
      results[job.tasks[c]] = objects.status();
      continue;
    }
    KernelObject object = (*objects)[slot[c]];
    if (sources[c] != static_cast<int>(c)) object.times = {};  // counted once
    results[job.tasks[c]] = std::move(object);
  }
}

// Every task's result, at the task's index (compiled, or taken from the
// kernel cache: counted in `result`). Progress is reported as jobs finish,
// in whatever order they do.
std::vector<StatusOr<KernelObject>> CompileAll(const std::vector<Task>& tasks, const std::vector<KernelSpec>& kernels,
                                               const CodegenOptions& options, const std::vector<HostCpu>& host_cpus,
                                               const CodegenProgress& progress, CodegenResult& result) {
  std::vector<StatusOr<KernelObject>> results(tasks.size(), StatusOr<KernelObject>(Error("not compiled")));
  const std::vector<Job> jobs = Jobs(tasks, kernels);
  std::vector<JobCounts> counts(jobs.size());
  std::vector<double> costs;
  for (const Job& job : jobs) costs.push_back(JobCost(job, host_cpus));
  const std::vector<int64_t> order = LongestFirst(costs);
  std::mutex progress_mutex;
  int64_t done = 0;
  RunTasks(static_cast<int64_t>(jobs.size()), options.jobs, [&](int) {
    // One per thread (std::function wants a copyable closure).
    auto session = std::make_shared<internal::CodegenSession>();
    return [&, session](int64_t i) {
      const int64_t j = order[i];
      const Job& job = jobs[j];
      if (job.target == CodegenTarget::kHost) {
        RunHostJob(job, options, host_cpus, results, counts[j], *session);
      } else {
        bool cached = false;
        results[job.tasks.front()] =
            CompileOneKernelCached(*job.spec, job.target, options, host_cpus.front(), &cached);
        (cached ? counts[j].from_cache : counts[j].compiled) += 1;
      }
      if (!progress) return;
      std::lock_guard<std::mutex> lock(progress_mutex);
      progress(++done, static_cast<int64_t>(jobs.size()));
    };
  });
  for (const JobCounts& c : counts) {
    result.kernels_compiled += c.compiled;
    result.kernels_from_cache += c.from_cache;
    result.host_objects_shared += c.shared;
  }
  return results;
}

// The objects of `target`'s tasks (of host CPU `host_cpu`), in task order;
// the first failure in that order (not the first to happen) is the error,
// so that it too does not depend on the threads.
StatusOr<std::vector<KernelObject>> TargetObjects(const std::vector<Task>& tasks,
                                                  std::vector<StatusOr<KernelObject>>& results,
                                                  CodegenTarget target, int host_cpu = 0) {
  std::vector<KernelObject> objects;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].target != target || tasks[i].host_cpu != host_cpu) continue;
    if (!results[i].ok()) return results[i].status();
    objects.push_back(std::move(results[i]).value());
  }
  return objects;
}

std::vector<std::pair<std::string, double>> StageSeconds(const std::vector<StatusOr<KernelObject>>& results,
                                                         double link_seconds) {
  KernelCompileTimes sum;
  for (const StatusOr<KernelObject>& r : results)
    if (r.ok()) sum.Add(r->times);
  return {{"setup", sum.setup},     {"emit", sum.emit},   {"lower", sum.lower},
          {"optimize", sum.optimize}, {"machine-code", sum.machine_code}, {"ptxas", sum.ptxas},
          {"link", link_seconds}};
}

std::string JoinKernelIr(const std::vector<KernelObject>& objects) {
  std::string text;
  for (const KernelObject& o : objects) text += o.kernel_ir;
  return text;
}

}  // namespace

StatusOr<CodegenResult> CompileKernels(const std::vector<KernelSpec>& kernels, const CodegenOptions& options,
                                       const CodegenProgress& progress) {
  CodegenResult result;
  // Without targets, the host IR alone (for --dump-dir and tests).
  if (!options.host && !options.cuda) {
    for (const KernelSpec& spec : kernels) {
      KILN_ASSIGN_OR_RETURN(std::string ir, PrintKernelIr(spec));
      result.mlir_text += ir;
    }
    return result;
  }
  const std::vector<HostCpu> host_cpus = HostCpus(options);
  std::vector<Task> tasks = Tasks(kernels, options, static_cast<int>(host_cpus.size()));
  std::vector<StatusOr<KernelObject>> results =
      CompileAll(tasks, kernels, options, host_cpus, progress, result);
  result.stage_seconds = StageSeconds(results, 0);
  double link_seconds = 0;
  for (int c = 0; options.host && c < static_cast<int>(host_cpus.size()); ++c) {
    KILN_ASSIGN_OR_RETURN(std::vector<KernelObject> objects,
                          TargetObjects(tasks, results, CodegenTarget::kHost, c));
    // The kernel IR is the same for every CPU.
    if (c == 0) result.mlir_text = JoinKernelIr(objects);
    internal::StageTimer timer(&link_seconds);
    KILN_ASSIGN_OR_RETURN(HostImage image, LinkHostImage(objects));
    image.cpu = host_cpus[c];
    if (c == 0)
      result.host = std::move(image);
    else
      result.more_host_images.push_back(std::move(image));
  }
  if (options.cuda) {
    KILN_ASSIGN_OR_RETURN(std::vector<KernelObject> objects, TargetObjects(tasks, results, CodegenTarget::kCuda));
    std::string ir = JoinKernelIr(objects);
    if (!ir.empty()) result.mlir_text += (result.mlir_text.empty() ? "" : "\n// CUDA kernel IR\n") + ir;
    internal::StageTimer timer(&link_seconds);
    KILN_ASSIGN_OR_RETURN(CudaImage image, LinkCudaImage(objects, options.cuda_arch));
    result.cuda = std::move(image);
  }
  result.stage_seconds.back().second = link_seconds;
  if (options.kernel_cache) result.cache_warning = options.kernel_cache->store_error();
  return result;
}

}  // namespace kiln::codegen
