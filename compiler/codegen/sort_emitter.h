// The sort and topk kernels (sort_emitter.cc): a kernel whose root is a
// sort (any number of operands, any comparator, any sort dimension) or a
// topk, its operands the kernel's parameters (passes::SortFusion builds
// such kernels). Included only by kiln_codegen's MLIR translation units.
#pragma once

#include "common/status.h"
#include "compiler/codegen/codegen_internal.h"
#include "compiler/hlo/computation.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::codegen::internal {

// Whether `comp` is a sort or topk kernel (its root a sort or topk).
bool IsSortKernel(const hlo::HloComputation& comp);

// Emits the kernel for `target`: the host and CUDA kernels differ in
// structure (see sort_emitter.cc), not in their arguments.
StatusOr<KernelInfo> EmitSortKernel(mlir::ModuleOp module, const KernelSpec& spec, KernelTarget target);

}  // namespace kiln::codegen::internal
