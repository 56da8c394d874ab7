// In-place kernels: a kernel whose root is a dynamic-update-slice or a
// scatter updating one of its parameters (passes::InPlaceOperandNumber)
// writes only the elements the update touches. Its output buffer already
// holds that parameter's value on entry (the buffer assignment shares the
// buffer or the emitter copies it first), so the kernel iterates over the
// update's elements, never reads the parameter, and leaves every other
// element as it was: O(update) work instead of O(operand).
//
// Scatter updates may collide (duplicate indices), so on CUDA each combine
// is atomic: memref.atomic_rmw for add/max/min when the type allows, else
// memref.generic_atomic_rmw (a compare-and-swap loop around to_apply).
// Included only by kiln_codegen's MLIR translation units.
#pragma once

#include <optional>

#include "compiler/codegen/elemental_emitter.h"

namespace kiln::codegen::internal {

// The parameter `comp` (a kernel's computation) updates in place, if its
// root is a dynamic-update-slice or single-operand scatter whose operand 0
// is a parameter nothing else in `comp` reads.
std::optional<int64_t> InPlaceParameter(const hlo::HloComputation& comp);

// The output memref type of an in-place kernel with root `root`. A float
// scatter combined by a compare-and-swap loop sees its output as integers
// of the same width (LLVM's cmpxchg takes integers only, so the loop
// bitcasts around to_apply); with the bare-pointer calling convention the
// caller passes the same pointer either way.
mlir::MemRefType InPlaceOutputType(mlir::MLIRContext* ctx, const hlo::HloInstruction& root);

// The shape an in-place kernel iterates over: the update (DUS) or the
// updates (scatter).
const Shape& InPlaceIterationShape(const hlo::HloInstruction& root);

// For the update element at `update_index`, writes (DUS) or combines
// (scatter, skipped when its window is out of bounds) the element(s) of
// `out` it targets. `emitter` emits the kernel's other instructions.
Status EmitInPlaceUpdate(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                         const hlo::HloInstruction& root, const Index& update_index, mlir::Value out);

}  // namespace kiln::codegen::internal
