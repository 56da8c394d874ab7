// KernelModule: the MLIR context and kernel IR module behind the opaque
// handle of codegen_internal.h. Included only by kiln_codegen's MLIR
// translation units.
#pragma once

#include <memory>

#include "compiler/codegen/codegen_internal.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln::codegen::internal {

// The context is the module's own, or a CodegenSession's that outlives it
// (codegen_session.h): `owned_context` is then null.
struct KernelModule {
  std::unique_ptr<mlir::MLIRContext> owned_context;
  mlir::MLIRContext* context = nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module;  // destroyed before owned_context
};

// Dialects the kernel IR uses (func, arith, math, memref, scf).
void LoadKernelDialects(mlir::MLIRContext& context);

}  // namespace kiln::codegen::internal
