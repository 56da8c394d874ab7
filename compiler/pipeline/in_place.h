// Which instructions may write their result into the buffer of an operand
// that dies at them (XLA's CanShareOperandBufferWithUser).
//
// Buffer assignment colocates such an operand and result ("a shared pair")
// when the operand's last reader is that instruction; the emitter then needs
// no copy. The rules are structural and need no liveness:
//  - a fusion whose root is a dynamic-update-slice or scatter of fusion
//    parameters (passes::InPlaceOperandNumbers): the kernel writes only the
//    updated elements and expects each output (one per scatter operand) to
//    hold its operand already;
//  - a single-output fusion whose root is elementwise, for an operand whose
//    fused parameter is only ever read at the output element's own index
//    (every use of it, up to the root, is an elementwise op of the root's
//    dimensions): each element is read before the same element is written;
//  - a while loop, for leaf i of its init tuple and leaf i of its state (the
//    loop state then starts in the init value's buffer: no init copy);
//  - triangular-solve, for b and the result (trsm solves in place), and
//    the LAPACK custom calls (CholeskyRewriter's potrf, JAX's lapack_*_ffi),
//    for operand 0 and result 0.
#pragma once

#include <cstdint>
#include <optional>

#include "common/shape.h"
#include "compiler/hlo/instruction.h"

namespace kiln::pipeline {

// True if `user`'s output leaf `output_index` may take over the buffer of
// its operand `operand_number` at leaf `operand_index` (sizes and liveness
// are the caller's business).
bool CanShareOperandBuffer(const hlo::HloInstruction& user, int64_t operand_number,
                           const ShapeIndex& operand_index, const ShapeIndex& output_index);

// For a single-output fusion with an elementwise root: true if fused
// parameter `operand_number` has the root's dimensions and every path from
// it to the root goes through elementwise ops of those dimensions only, so
// output element i reads only element i of that operand.
bool ReadsOperandAtOutputIndexOnly(const hlo::HloInstruction& fusion, int64_t operand_number);

// Memory space (layout S(n)) of an array shape; 0 without a layout.
int64_t MemorySpaceOf(const Shape& shape);

}  // namespace kiln::pipeline
