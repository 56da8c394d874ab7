// What the kernel emitters can generate code for, as seen by the fusion
// passes and the buffer assignment: which instructions may become part of a
// loop/input kernel, which are cheap enough to recompute per element, which
// are duplicated into every consumer instead of being materialized, and
// which fusions update an operand's buffer in place.
//
// Kept apart from the passes so that fusion, the emitter and the buffer
// assignment agree on one definition, and free of MLIR so that none of them
// has to link the code generator.
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/hlo/instruction.h"

namespace kiln::passes {

// Instructions codegen turns into kernel code (loop and input kernels).
bool IsKernelOp(const hlo::HloInstruction& inst);

// Per-element recomputation is cheap: fine to repeat for every element a
// broadcast produces from one operand element.
bool IsCheapToRepeat(const hlo::HloInstruction& inst);

// Scalar constants, iotas and broadcasts/reshapes of them: copied into
// every kernel that reads them instead of being materialized.
bool IsDuplicable(const hlo::HloInstruction& inst);

// For a fusion (or a fused computation's root) that writes its result into
// the buffer of one of its operands, i.e. whose root is a
// dynamic-update-slice or scatter updating a fusion parameter that nothing
// else in the fusion reads: the number of that operand. The kernel then
// writes only the updated elements, and expects the output buffer to hold
// the operand's value on entry (the buffer assignment shares the operand's
// buffer, or the emitter copies it first).
std::optional<int64_t> InPlaceOperandNumber(const hlo::HloInstruction& fusion);

}  // namespace kiln::passes
