// CompileOneKernel: one kernel's own MLIR module, lowered for one target
// and compiled to machine code (kernel_object.h). Includes no MLIR or LLVM
// headers: the stages live behind codegen_internal.h.
#include "compiler/codegen/kernel_object.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "compiler/codegen/codegen_internal.h"
#include "compiler/codegen/codegen_session.h"

namespace kiln::codegen {
namespace {

using internal::KernelInfo;
using internal::kCudaBlockSize;

// A loop kernel's grid is at most 4 waves of full occupancy on an H100
// (132 SMs x 8 blocks of 256 threads); its threads stride over the rest
// (MapFlatLoop), so a huge output does not become millions of threads.
constexpr int64_t kMaxLoopBlocks = 132 * 8 * 4;

// grid.x: the units the entry's [begin, end) ranges over; block.x: the
// iterations of the whole loop nest (reductions' inner loops included) per
// unit, rounded up.
CompiledKernel HostKernel(const KernelInfo& info) {
  int64_t units = info.host_split_dim >= 0 ? std::max<int64_t>(1, info.host_units) : 1;
  int64_t work = info.host_work > 0 ? info.host_work : info.num_elements;
  int64_t per_unit = (work + units - 1) / units;
  return {info.name, LaunchDims{{units, 1, 1}, {per_unit, 1, 1}, 0}, info.num_args};
}

// One thread per cuda_elements_per_thread result elements (the kernel
// guards the ragged last block), unless the kernel brings its own launch
// (tiled kernels: one block per tile).
CompiledKernel CudaKernel(const KernelInfo& info) {
  if (info.cuda_launch) return {info.name, *info.cuda_launch, info.num_args};
  int64_t threads = info.num_elements / std::max<int64_t>(1, info.cuda_elements_per_thread);
  int64_t blocks = std::clamp<int64_t>((threads + kCudaBlockSize - 1) / kCudaBlockSize, 1, kMaxLoopBlocks);
  return {info.name, LaunchDims{{blocks, 1, 1}, {kCudaBlockSize, 1, 1}, 0}, info.num_args};
}

Status CompileForCuda(const internal::KernelModule& module, const KernelInfo& info, const CodegenOptions& options,
                      KernelObject& object) {
  KILN_ASSIGN_OR_RETURN(object.ptx,
                        internal::LowerToPtx(module, {info}, options.cuda_arch, info.name + "$", &object.times));
  std::string ptxas = internal::FindPtxas();
  if (!ptxas.empty()) {
    internal::StageTimer timer(&object.times.ptxas);
    KILN_ASSIGN_OR_RETURN(object.cubin,
                          internal::AssemblePtx(ptxas, object.ptx, options.cuda_arch, /*relocatable=*/true));
  }
  object.kernel = CudaKernel(info);
  return Status::Ok();
}

}  // namespace

void KernelCompileTimes::Add(const KernelCompileTimes& other) {
  setup += other.setup;
  emit += other.emit;
  lower += other.lower;
  optimize += other.optimize;
  machine_code += other.machine_code;
  ptxas += other.ptxas;
}

namespace internal {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

// CPU time of the calling thread: a stage's cost whatever else the machine
// runs (on a loaded machine, or with more jobs than cores, wall time would
// count the waits for a core).
int64_t ThreadCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

}  // namespace

StageTimer::StageTimer(double* into)
    : into_(into), start_ns_(ThreadCpuNs()) {}

StageTimer::~StageTimer() {
  if (into_) *into_ += static_cast<double>(ThreadCpuNs() - start_ns_) * 1e-9;
}

}  // namespace internal

StatusOr<KernelObject> CompileOneKernel(const KernelSpec& spec, CodegenTarget target,
                                        const CodegenOptions& options, const HostCpu& host_cpu) {
  if (target == CodegenTarget::kHost) {
    KILN_ASSIGN_OR_RETURN(std::vector<KernelObject> objects, CompileOneKernelForHostCpus(spec, options, {host_cpu}));
    return std::move(objects.front());
  }
  // The CUDA IR differs from the host's in its reduction kernels.
  std::vector<KernelInfo> infos;
  KernelObject object;
  KILN_ASSIGN_OR_RETURN(internal::KernelModulePtr module,
                        internal::EmitKernelModule({spec}, internal::KernelTarget::kCuda, &infos, &object.times));
  if (options.keep_kernel_ir) object.kernel_ir = internal::PrintKernelModule(*module);
  KILN_RETURN_IF_ERROR(CompileForCuda(*module, infos.front(), options, object));
  return object;
}

StatusOr<std::vector<KernelObject>> CompileOneKernelForHostCpus(const KernelSpec& spec,
                                                                const CodegenOptions& options,
                                                                const std::vector<HostCpu>& cpus) {
  return internal::CompileOneKernelForHostCpus(spec, options, cpus, nullptr);
}

namespace internal {

StatusOr<std::vector<KernelObject>> CompileOneKernelForHostCpus(const KernelSpec& spec, const CodegenOptions& options,
                                                                const std::vector<HostCpu>& cpus,
                                                                CodegenSession* session) {
  std::vector<KernelInfo> infos;
  std::vector<KernelObject> objects(cpus.size());
  KernelObject& first = objects.front();
  KILN_ASSIGN_OR_RETURN(KernelModulePtr module,
                        EmitKernelModule({spec}, KernelTarget::kHost, &infos, &first.times, session));
  if (options.keep_kernel_ir) first.kernel_ir = PrintKernelModule(*module);
  KILN_ASSIGN_OR_RETURN(std::vector<std::vector<uint8_t>> code,
                        LowerToHostObjects(*module, {infos.front()}, cpus, &first.times, session));
  for (size_t i = 0; i < cpus.size(); ++i) {
    objects[i].host_object = std::move(code[i]);
    objects[i].kernel = HostKernel(infos.front());
  }
  return objects;
}

}  // namespace internal

StatusOr<std::string> PrintKernelIr(const KernelSpec& spec) {
  std::vector<KernelInfo> infos;
  KILN_ASSIGN_OR_RETURN(internal::KernelModulePtr module,
                        internal::EmitKernelModule({spec}, internal::KernelTarget::kHost, &infos));
  return internal::PrintKernelModule(*module);
}

}  // namespace kiln::codegen
