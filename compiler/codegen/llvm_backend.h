// LLVM-IR stage of kiln_codegen: target machines, optimization and machine
// code emission for the translated kernel modules. No MLIR here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/codegen_internal.h"
#include "compiler/codegen/codegen_session.h"

namespace llvm {
class Module;
class TargetMachine;
}

namespace kiln::codegen::internal {

// Host, in two steps so that one module serves several x86-64 levels.
// SimplifyHostModule renames each kernel `name` to an internal `name.impl`
// taking one pointer per buffer then the i64 begin/end of its unit range,
// adds the exported `void name(void** args, int64_t begin, int64_t end)`
// entry that unpacks args and calls it, and runs O2's module simplification
// pipeline (inlining, SROA, instcombine, GVN, loop canonicalization: what
// does not depend on the vector width). EmitHostObject then runs O2's module
// optimization pipeline (vectorizers, unrolling, late cleanup) for `cpu` on
// a simplified module and returns a PIC ELF relocatable object; the two in a
// row are LLVM's O2 pipeline.
// Both run on `session`'s target machines when one is given (else on
// target machines of their own).
Status SimplifyHostModule(llvm::Module& module, const std::vector<KernelInfo>& kernels, KernelCompileTimes* times,
                          CodegenSession* session = nullptr);
StatusOr<std::vector<uint8_t>> EmitHostObject(llvm::Module& module, const HostCpu& cpu, KernelCompileTimes* times,
                                              CodegenSession* session = nullptr);

// The target machine host objects for `cpu` are compiled with (PIC, the
// default codegen optimization level).
StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateHostTargetMachine(const HostCpu& cpu);

// CUDA: gives the kernels the PTX kernel calling convention, links
// libdevice when the module calls __nv_* functions, optimizes at O3 (which
// also resolves libdevice's __nvvm_reflect queries: no flush-to-zero,
// IEEE division and sqrt) and returns PTX text for `arch` ("sm_90").
// Every module-level definition but the kernels is renamed
// `symbol_prefix + name` (LowerToPtx).
StatusOr<std::string> EmitPtx(llvm::Module& module, const std::vector<KernelInfo>& kernels,
                              const std::string& arch, const std::string& symbol_prefix,
                              KernelCompileTimes* times);

// libdevice.10.bc ($CUDA_HOME/nvvm/libdevice, then /usr/local/cuda/...),
// or "" when not installed.
std::string FindLibdevice();

}  // namespace kiln::codegen::internal
