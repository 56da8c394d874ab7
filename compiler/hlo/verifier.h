// Verifier: structural checks and shape inference for HLO modules.
//
// Every violation is reported with the instruction's name and source
// location: "%add.3 (m.hlo:12:5): operand 1 has shape f32[3], expected f32[4]".
#pragma once

#include "common/status.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

// Checks the whole module: computations well formed (root, parameters,
// operands inside the computation, no cycles), operand counts, called
// computation signatures, tuple indices, dimension numbers, window
// attributes, and that each instruction's declared shape matches the
// inferred one (ignoring layouts).
Status VerifyModule(const HloModule& module);

// The shape XLA's shape inference gives `instruction` from its operands'
// shapes and attributes (no layout). Errors for malformed attributes;
// "shape inference not implemented for <op>" for opcodes kiln does not
// execute, which the verifier then accepts as declared.
StatusOr<Shape> InferShape(const HloInstruction& instruction);

}  // namespace kiln::hlo
