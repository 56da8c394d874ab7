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
#include <vector>

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

// A transpose with its operand's dimensions collapsed into groups that stay
// adjacent and in order: operand [g0, g1, ...] (group sizes) becomes result
// [g_perm[0], g_perm[1], ...].
struct NormalizedTranspose {
  std::vector<int64_t> operand_dims;  // group sizes, operand order
  std::vector<int64_t> permutation;   // result group i is operand group permutation[i]
};
NormalizedTranspose NormalizeTranspose(const hlo::HloInstruction& transpose);

// Groups at least this large on both sides of a transpose are worth tiling.
inline constexpr int64_t kMinTiledTransposeDim = 16;

// A transpose that moves the operand's minor-most dimension, normalized to
// [1,0], [0,2,1] or [2,1,0], with the two swapped groups at least
// kMinTiledTransposeDim each. Reading and writing it with one thread per
// output element would make one side uncoalesced, so codegen tiles it
// through shared memory (on the host: cache-sized tiles). Fusion keeps such
// a transpose as its kernel's root: producers fuse into it, it does not fuse
// into consumers.
bool IsTiledTransposeHero(const hlo::HloInstruction& inst);

}  // namespace kiln::passes
