// One kernel compiled on its own for one target: the unit of kiln's code
// generation. Every distinct kernel is emitted, lowered and compiled in a
// module of its own (its own MLIR and LLVM modules, its own ptxas run), so
// kernels compile independently of each other (on a thread pool) and each
// result depends only on its inputs (so it can be cached per kernel);
// kernel_image_linker.h combines the results into a target's image.
//
// Free of MLIR/LLVM types, like kernel_codegen.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/kernel_codegen.h"

namespace kiln::codegen {

enum class CodegenTarget { kHost, kCuda };

// Seconds one kernel's compilation spent in each stage (summed over
// kernels, --time-passes shows where code generation goes).
struct KernelCompileTimes {
  double setup = 0;         // MLIR context and dialects, LLVM target machine
  double emit = 0;          // HLO -> kernel IR
  double lower = 0;         // kernel IR -> LLVM IR (MLIR passes, translation)
  double optimize = 0;      // LLVM IR optimization (libdevice linking included)
  double machine_code = 0;  // object file / PTX emission
  double ptxas = 0;
  void Add(const KernelCompileTimes& other);
};

struct KernelObject {
  // The kernel's entry name, arguments and launch for its target
  // (CompiledKernel: host work units, or the CUDA launch).
  CompiledKernel kernel;
  // Host: a PIC x86-64 ELF relocatable object defining the exported entry
  // `kernel.name` and nothing else global.
  std::vector<uint8_t> host_object;
  // CUDA: a complete PTX module holding the .entry `kernel.name`; its
  // module-level symbols other than the entry (libdevice's tables and
  // helpers) carry the prefix `<kernel.name>$`, so modules of different
  // kernels never define the same symbol.
  std::string ptx;
  // CUDA: the PTX assembled by ptxas as relocatable device code (-c), for
  // nvlink; empty when no ptxas is installed.
  std::vector<uint8_t> cubin;
  // The kernel IR (MLIR text) before lowering, when
  // CodegenOptions::keep_kernel_ir; it does not change the code.
  std::string kernel_ir;
  // Where this compilation's time went; not part of the result's content.
  KernelCompileTimes times;
};

// Emits, lowers and compiles `spec` for `target` (options.cuda_arch for
// CUDA, `host_cpu` for the host; options.host/cuda/host_cpus are ignored).
// A pure function of its inputs: the same spec (computation structure,
// name, aliasing), target, architecture or CPU and options give the same
// bytes. Thread-safe: concurrent calls share no mutable state (each has its
// own MLIR and LLVM contexts).
StatusOr<KernelObject> CompileOneKernel(const KernelSpec& spec, CodegenTarget target,
                                        const CodegenOptions& options,
                                        const HostCpu& host_cpu = BaselineHostCpu());

// CompileOneKernel for the host, once per CPU of `cpus`: the kernel is
// emitted and lowered to LLVM IR once, then optimized and compiled per CPU.
// The objects are those CompileOneKernel gives for each CPU alone; the
// first carries the stage times (and the kernel IR when wanted).
StatusOr<std::vector<KernelObject>> CompileOneKernelForHostCpus(const KernelSpec& spec,
                                                                const CodegenOptions& options,
                                                                const std::vector<HostCpu>& cpus);

// The kernel IR of `spec` as the host lowering receives it, alone (for
// dumps and tests when no target is selected).
StatusOr<std::string> PrintKernelIr(const KernelSpec& spec);

}  // namespace kiln::codegen
