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

#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"

namespace kiln::passes {

// Instructions codegen turns into kernel code (loop and input kernels):
// elementwise ops, broadcast, reshape, transpose, slice, concatenate, iota,
// reverse, constant, pad, gather, dynamic-slice and dynamic-update-slice
// (scalar start indices), reduce and reduce-window (also variadic: a tuple
// of N arrays), scatter (also of N operands) and the convolutions the
// libraries do not take (IsLibraryConvolution: integer, pred and mixed
// types, computed per output element).
//
// Contract with the fusion pass for the ops codegen emits only as a
// kernel's root:
//  * scatter is emitted only in place (InPlaceOperandNumbers): it must be
//    its kernel's root, its operands 0..N-1 must stay outside the kernel
//    (fusion parameters; never fuse their producers into it), and nothing
//    else in the kernel may read those parameters. Other producers
//    (indices, updates) may fuse into it.
//  * a variadic reduce or reduce-window (tuple-shaped) must be its
//    kernel's root, as a single reduce is; its get-tuple-elements stay
//    outside.
//  * a dynamic-update-slice is emitted in place when it is the root and
//    its operand 0 is such a parameter, otherwise elementally (any
//    position in a kernel is fine).
bool IsKernelOp(const hlo::HloInstruction& inst);

// Per-element recomputation is cheap: fine to repeat for every element a
// broadcast produces from one operand element.
bool IsCheapToRepeat(const hlo::HloInstruction& inst);

// Scalar constants, iotas and broadcasts/reshapes of them: copied into
// every kernel that reads them instead of being materialized.
bool IsDuplicable(const hlo::HloInstruction& inst);

// A convolution the library thunks run (cuDNN on CUDA, im2col + GEMM on
// the host): f16, bf16, f32 or f64 operands and result. Every other
// non-complex convolution is a kernel op.
bool IsLibraryConvolution(const hlo::HloInstruction& conv);

// The operands a dynamic-update-slice (operand 0) or a scatter (operands
// 0..N-1) updates: its result starts as their values. Empty for other ops.
std::vector<int64_t> InPlaceTargetOperands(const hlo::HloInstruction& inst);

// For a fusion that writes its results into the buffers of some of its
// operands, i.e. whose root is a dynamic-update-slice or scatter updating
// fusion parameters that nothing else in the fusion reads: per output leaf
// in order (one for an array result, N for a scatter of N operands), the
// number of the operand whose value that output starts from. The kernel
// then writes only the updated elements, and expects each output buffer to
// hold its operand's value on entry (the buffer assignment shares the
// operand's buffer, or the emitter copies it first). Empty when the fusion
// is not in place.
std::vector<int64_t> InPlaceOperandNumbers(const hlo::HloInstruction& fusion);
// The same for a fused computation: per output, the number of the
// parameter its root updates in place.
std::vector<int64_t> InPlaceParameterNumbers(const hlo::HloComputation& body);

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
// a transpose as its kernel's hero: producers fuse into it, and it fuses
// into consumers only as the start of an epilogue (below).
bool IsTiledTransposeHero(const hlo::HloInstruction& inst);

// The sizes of a transpose's normalized groups in result order.
std::vector<int64_t> TransposeResultGroups(const hlo::HloInstruction& transpose);

// Whether the dimensions of `shape` larger than 1 form, in order,
// consecutive runs whose sizes are `groups` (each run one group): then a
// position in each group names one element of `shape`, as of the
// transpose's result.
bool SplitsIntoGroups(const Shape& shape, const std::vector<int64_t>& groups);

// Whether `inst` may follow a tiled transpose hero whose result groups are
// `hero_groups` in its kernel (the epilogue): an elementwise op, or a
// reshape (a bitcast in row-major order), whose shape splits into those
// groups. Its element at given group positions is then computed from its
// operands' elements at the same group positions, so the store phase
// evaluates it where it writes the output.
bool IsTransposeEpilogueOp(const hlo::HloInstruction& inst, const std::vector<int64_t>& hero_groups);

// The tiled transpose hero of a fused computation: its root when that is a
// hero, or else the single hero the array-shaped root reaches through
// elementwise ops and reshapes, provided every instruction that uses the
// hero, directly or not, is an epilogue op (IsTransposeEpilogueOp). Other
// operands of the epilogue (parameters, broadcasts, any fused expression
// not using the hero) are read at the same group positions. nullptr when
// there is none, or more than one. Fusion builds kernels this accepts;
// codegen tiles exactly those.
const hlo::HloInstruction* FindTiledTransposeHero(const hlo::HloComputation& comp);

// A reduce's operand viewed as [A, K, M]: K the product of the reduced
// dimensions, A and M of the kept ones before and after them (size-1
// dimensions ignored; A or M may be 1). nullopt when the reduced
// dimensions larger than 1 are not one run among the dimensions larger
// than 1. Row reductions have M == 1; the GPU reduction emitter and the
// reduction splitter both work on this view.
// Whether `fn` computes param0 + param1 (in either order): a sum, which
// kernels accumulate in f32 for f16/bf16 and round once (codegen), and
// whose split halves keep f32 partial results (ReductionSplitter).
bool IsScalarAdd(const hlo::HloComputation& fn);
// Whether `fn` is (a, b) -> opcode(a, b) of its two parameters.
bool IsScalarBinary(const hlo::HloComputation& fn, hlo::HloOpcode opcode);

struct ReductionGroups {
  int64_t a = 1, k = 1, m = 1;
};
std::optional<ReductionGroups> GroupReduction(const hlo::HloInstruction& reduce);

}  // namespace kiln::passes
