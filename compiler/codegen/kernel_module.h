// KernelModule: the MLIR context and kernel IR module behind the opaque
// handle of codegen_internal.h. Included only by kiln_codegen's MLIR
// translation units.
#pragma once

#include "compiler/codegen/codegen_internal.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln::codegen::internal {

struct KernelModule {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

// Dialects the kernel IR uses (func, arith, math, memref, scf).
void LoadKernelDialects(mlir::MLIRContext& context);

}  // namespace kiln::codegen::internal
