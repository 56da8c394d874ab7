// In-place kernels: a kernel whose root is a dynamic-update-slice or a
// scatter updating some of its parameters (passes::InPlaceParameterNumbers)
// writes only the elements the update touches. Each output buffer already
// holds its parameter's value on entry (the buffer assignment shares the
// buffer or the emitter copies it first), so the kernel iterates over the
// update's elements, never reads those parameters, and leaves every other
// element as it was: O(update) work instead of O(operand).
//
// Scatter updates may collide (duplicate indices). A single-operand
// scatter, and a scatter of N operands whose combiner updates each output
// from its own operand and update alone by add/max/min (so that every
// order gives the same result), combine each element atomically:
// memref.atomic_rmw for add/max/min when the type allows, an atomic
// exchange for "replace", else memref.generic_atomic_rmw (a
// compare-and-swap loop around to_apply). Any other scatter of N operands
// combines N values at once, which no atomic can: it runs sequentially, one
// iteration (one CUDA thread) applying the updates in XLA's order (scatter
// positions in row-major order), as XLA's GPU backend expands such a
// scatter into a loop.
// Included only by kiln_codegen's MLIR translation units.
#pragma once

#include <vector>

#include "compiler/codegen/elemental_emitter.h"

namespace kiln::codegen::internal {

// Whether `comp` (a kernel's computation) updates parameters in place: its
// root is a dynamic-update-slice or scatter whose targets are parameters
// nothing else in `comp` reads.
bool IsInPlaceKernel(const hlo::HloComputation& comp);

// The output memref types of an in-place kernel with root `root`, one per
// output. A float output combined by a compare-and-swap loop is seen as
// integers of the same width (LLVM's cmpxchg takes integers only, so the
// loop bitcasts around to_apply); with the bare-pointer calling convention
// the caller passes the same pointer either way.
std::vector<mlir::MemRefType> InPlaceOutputTypes(mlir::MLIRContext* ctx, const hlo::HloInstruction& root);

// The shape an in-place kernel iterates over: the update (DUS) or the
// updates (scatter); a scalar for a sequential scatter, whose one iteration
// loops over the updates itself.
Shape InPlaceIterationShape(const hlo::HloInstruction& root);

// For the iteration at `index`, writes (DUS) or combines (scatter, skipped
// when its window is out of bounds) the element(s) of `outs` it targets.
// `emitter` emits the kernel's other instructions.
Status EmitInPlaceUpdate(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                         const hlo::HloInstruction& root, const Index& index, const std::vector<mlir::Value>& outs);

// The value of single-operand `scatter` at output `index`, computed where
// no in-place kernel holds it (a scatter inside a kernel's while loop):
// the operand's element, combined with every update that targets `index`,
// in XLA's order. O(updates) per element, for small scatters only.
StatusOr<mlir::Value> EmitScatterElement(mlir::OpBuilder& b, mlir::Location loc, ElementalEmitter& emitter,
                                         const hlo::HloInstruction& scatter, const Index& index);

}  // namespace kiln::codegen::internal
