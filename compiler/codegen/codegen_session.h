// CodegenSession: what one codegen thread keeps from one kernel to the next.
// Every kernel is still emitted and lowered in modules of its own
// (kernel_object.h), but the MLIR context they live in (with its dialects
// loaded) and the LLVM target machines (with the subtargets they create on
// first use) are made once per thread instead of once per kernel and CPU
// level: building them costs milliseconds, as much as compiling a small
// kernel. Neither carries anything from one kernel into the next one's
// code: a kernel's objects are the same bytes whichever thread compiled it
// and whatever it compiled before (tests/e2e/parallel_codegen_test.cc).
//
// Free of MLIR/LLVM types; not thread-safe (one session per thread).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/codegen_internal.h"

namespace mlir {
class MLIRContext;
}
namespace llvm {
class TargetMachine;
}

namespace kiln::codegen::internal {

class CodegenSession {
 public:
  CodegenSession();
  ~CodegenSession();
  CodegenSession(const CodegenSession&) = delete;
  CodegenSession& operator=(const CodegenSession&) = delete;

  // A context with the kernel IR's dialects and those of its lowering
  // loaded, single-threaded.
  mlir::MLIRContext& mlir_context() { return *mlir_context_; }

  // The target machine for host objects of `cpu` (llvm_backend.h), made
  // on first use.
  StatusOr<llvm::TargetMachine*> HostTargetMachine(const HostCpu& cpu);

 private:
  std::unique_ptr<mlir::MLIRContext> mlir_context_;
  std::map<std::string, std::unique_ptr<llvm::TargetMachine>> host_machines_;  // by HostCpu::Key()
};

// EmitKernelModule and LowerToHostObjects (codegen_internal.h) in
// `session`'s context and with its target machines; a null session makes
// its own of each, as the overloads without one do.
StatusOr<KernelModulePtr> EmitKernelModule(const std::vector<KernelSpec>& kernels, KernelTarget target,
                                           std::vector<KernelInfo>* infos, KernelCompileTimes* times,
                                           CodegenSession* session);
StatusOr<std::vector<std::vector<uint8_t>>> LowerToHostObjects(const KernelModule& module,
                                                               const std::vector<KernelInfo>& kernels,
                                                               const std::vector<HostCpu>& cpus,
                                                               KernelCompileTimes* times, CodegenSession* session);

// CompileOneKernelForHostCpus (kernel_object.h) on `session`'s context and
// target machines; the same objects.
StatusOr<std::vector<KernelObject>> CompileOneKernelForHostCpus(const KernelSpec& spec, const CodegenOptions& options,
                                                                const std::vector<HostCpu>& cpus,
                                                                CodegenSession* session);

// CompileOneKernelForHostCpusCached (kernel_object_cache.h) on `session`.
StatusOr<std::vector<KernelObject>> CompileOneKernelForHostCpusCached(const KernelSpec& spec,
                                                                      const CodegenOptions& options,
                                                                      const std::vector<HostCpu>& cpus,
                                                                      int64_t* compiled, int64_t* from_cache,
                                                                      CodegenSession* session);

}  // namespace kiln::codegen::internal
