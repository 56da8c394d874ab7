// CodegenSession (codegen_session.h): the per-thread MLIR context and host
// target machines.
#include "compiler/codegen/codegen_session.h"

#include "compiler/codegen/kernel_module.h"
#include "compiler/codegen/llvm_backend.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Target/TargetMachine.h"

namespace kiln::codegen::internal {

CodegenSession::CodegenSession() : mlir_context_(std::make_unique<mlir::MLIRContext>()) {
  mlir_context_->disableMultithreading();
  LoadKernelDialects(*mlir_context_);
  // The host lowering's dialects (mlir_lowering.cc), loaded once here.
  mlir_context_->loadDialect<mlir::LLVM::LLVMDialect, mlir::cf::ControlFlowDialect>();
}

CodegenSession::~CodegenSession() = default;

StatusOr<llvm::TargetMachine*> CodegenSession::HostTargetMachine(const HostCpu& cpu) {
  std::unique_ptr<llvm::TargetMachine>& tm = host_machines_[cpu.Key()];
  if (!tm) {
    KILN_ASSIGN_OR_RETURN(tm, CreateHostTargetMachine(cpu));
  }
  return tm.get();
}

}  // namespace kiln::codegen::internal
