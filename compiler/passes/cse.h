// Cse: common subexpression elimination (XLA's HloCSE).
//
// Two instructions of one computation that apply the same opcode with the
// same attributes to the same operands compute the same value, so every use
// of the second can read the first. Walking each computation in post-order
// makes whole duplicated chains collapse in one run: once a chain's first
// instructions are merged, their users have identical operands too.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

// Merges instructions with identical opcode, operands, shape (layout
// included) and attributes (metadata ignored); constants merge when their
// literals are equal. Instructions with side effects (parameters, rng,
// custom calls, send/recv, infeed/outfeed, collectives, tokens, or calls of
// computations containing such) and instructions with control edges are
// never merged. The first instruction in post-order is kept; the others are
// removed.
class Cse : public HloPass {
 public:
  std::string_view name() const override { return "cse"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
