// Internal interfaces between the stages of kiln_codegen. Kept free of MLIR
// and LLVM types so that the driver (kernel_codegen.cc) and the tool-running
// stages compile without the heavy MLIR headers; the MLIR module crosses
// stage boundaries as the opaque KernelModule.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/kernel_codegen.h"
#include "compiler/codegen/kernel_object.h"

namespace kiln::codegen::internal {

// Nanoseconds on a monotonic clock.
int64_t NowNs();

// Adds the seconds from its construction to its destruction to *into
// (nothing when into is null): the stages' share of KernelCompileTimes.
class StageTimer {
 public:
  explicit StageTimer(double* into);
  ~StageTimer();
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  double* into_;
  int64_t start_ns_;
};

// What later stages need to know about one emitted kernel.
struct KernelInfo {
  KernelInfo() = default;
  KernelInfo(std::string name, int num_args, int64_t num_elements,
             std::optional<LaunchDims> cuda_launch = std::nullopt)
      : name(std::move(name)), num_args(num_args), num_elements(num_elements),
        cuda_launch(cuda_launch) {}

  std::string name;
  int num_args = 0;          // parameters + result
  int64_t num_elements = 0;  // elements of the result (threads on CUDA)
  // The CUDA launch of a kernel with its own thread mapping (the tiled
  // transpose: one block per tile, shared memory for the tile). Unset: one
  // thread per result element, in blocks of a fixed size.
  std::optional<LaunchDims> cuda_launch;
  // CUDA, kernels without their own launch: consecutive elements of the
  // innermost dimension each thread computes (FlatLoopVectorWidth), so
  // that its loads and stores of them become one vector access.
  int64_t cuda_elements_per_thread = 1;
  // Host work splitting (kernel_codegen.h, CompiledKernel::launch): the
  // dimension of the kernel's top-level scf.parallel whose iterations are
  // the units the host entry's [begin, end) selects, and its extent. -1:
  // the kernel is one unit (nothing to split, or splitting would race) and
  // the host entry ignores begin/end.
  int host_split_dim = -1;
  int64_t host_units = 1;
  // Iterations of the whole loop nest, inner reduction loops included: an
  // estimate of the kernel's work. 0: num_elements.
  int64_t host_work = 0;
};

// The CUDA block of kernels without their own launch (one thread per
// result element or vector of them).
inline constexpr int64_t kCudaBlockSize = 256;

// Threads per block of the kernel's CUDA launch. The PTX says so
// (.maxntid), so that ptxas keeps registers within what a block of that
// size may hold; without it a register-hungry kernel (a sort with a long
// comparator) fails to launch with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES.
inline int64_t CudaBlockThreads(const KernelInfo& kernel) {
  if (!kernel.cuda_launch) return kCudaBlockSize;
  const int64_t* block = kernel.cuda_launch->block;
  return block[0] * block[1] * block[2];
}

// An MLIR context plus the kernel IR module (defined in kernel_module.h).
struct KernelModule;
struct KernelModuleDeleter {
  void operator()(KernelModule* module) const;
};
using KernelModulePtr = std::unique_ptr<KernelModule, KernelModuleDeleter>;

// Which lowering a kernel module is emitted for: most kernels have the same
// IR for both, but some take a target-specific structure (GPU reductions,
// reduction_emitter.h).
enum class KernelTarget { kHost, kCuda };

// HLO -> kernel IR (kernel_emitter.cc): one func.func per kernel.
StatusOr<KernelModulePtr> EmitKernelModule(const std::vector<KernelSpec>& kernels, KernelTarget target,
                                           std::vector<KernelInfo>* infos, KernelCompileTimes* times = nullptr);
// The kernel IR as MLIR text.
std::string PrintKernelModule(const KernelModule& module);

// Kernel IR -> x86-64 ELF relocatable object for `cpu` with
// `void name(void** args, int64_t begin, int64_t end)` entry points
// (mlir_lowering.cc + llvm_backend.cc). Does not modify `module`.
StatusOr<std::vector<uint8_t>> LowerToHostObject(const KernelModule& module,
                                                 const std::vector<KernelInfo>& kernels, const HostCpu& cpu,
                                                 KernelCompileTimes* times = nullptr);
// The same for several CPUs at once: the kernel IR is lowered to LLVM IR
// and simplified (O2's module simplification pipeline) once, since that
// part does not depend on the CPU, and only the vector-width dependent
// optimizations and code generation run per CPU, on a copy of the LLVM
// module each (llvm_backend.h). One object per entry of `cpus`, the same
// bytes LowerToHostObject gives.
StatusOr<std::vector<std::vector<uint8_t>>> LowerToHostObjects(const KernelModule& module,
                                                               const std::vector<KernelInfo>& kernels,
                                                               const std::vector<HostCpu>& cpus,
                                                               KernelCompileTimes* times = nullptr);
// Kernel IR -> PTX for `arch` (e.g. "sm_90"). Does not modify `module`.
// Module-level symbols other than the kernels are prefixed with
// `symbol_prefix` (kernel_object.h: "<kernel>$"), so that PTX modules
// compiled apart can be joined into one.
StatusOr<std::string> LowerToPtx(const KernelModule& module,
                                 const std::vector<KernelInfo>& kernels,
                                 const std::string& arch, const std::string& symbol_prefix,
                                 KernelCompileTimes* times = nullptr);

// Links relocatable objects into one shared object with lld, in process
// (elf_linker.cc).
StatusOr<std::vector<uint8_t>> LinkSharedObject(const std::vector<std::vector<uint8_t>>& objects);

// The ptxas and nvlink executables to use, or "" when not installed
// ($CUDA_HOME/bin, then /usr/local/cuda/bin).
std::string FindPtxas();
std::string FindNvlink();
// Assembles PTX into a cubin with ptxas (ptx_assembler.cc); `relocatable`:
// relocatable device code (-c) for nvlink.
StatusOr<std::vector<uint8_t>> AssemblePtx(const std::string& ptxas, const std::string& ptx,
                                           const std::string& arch, bool relocatable = false);
// Links relocatable cubins into one executable cubin with nvlink.
StatusOr<std::vector<uint8_t>> LinkCubins(const std::string& nvlink, const std::vector<std::vector<uint8_t>>& cubins,
                                          const std::string& arch);

// A private temporary file (mkstemps in $TMPDIR, else /tmp) that is deleted
// when this object is destroyed.
class TempFile {
 public:
  static StatusOr<TempFile> Create(const std::string& suffix);
  TempFile(TempFile&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempFile& operator=(TempFile&&) = delete;
  TempFile(const TempFile&) = delete;
  ~TempFile();
  const std::string& path() const { return path_; }
  Status Write(const void* data, size_t size) const;
  StatusOr<std::vector<uint8_t>> Read() const;

 private:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace kiln::codegen::internal
