// Which instructions a simplification pass must not merge, fold or drop:
// those whose execution matters beyond their result (parameters, I/O,
// random numbers, collectives, custom calls other than kiln's radix sort,
// tokens), and instructions that call computations containing such
// instructions.
#pragma once

#include <unordered_map>

#include "compiler/hlo/module.h"

namespace kiln::passes {

// True for opcodes whose execution has an effect besides computing a value,
// or whose value is not a function of the operands alone.
bool IsSideEffectingOpcode(hlo::HloOpcode opcode);

// IsSideEffectingOpcode, except for kiln's own pure custom calls (the
// radix sort).
bool IsSideEffectingInstruction(const hlo::HloInstruction& inst);

// True for cross-device communication (all-reduce, all-gather, ...).
bool IsCollectiveOpcode(hlo::HloOpcode opcode);

// True when `shape` is or contains a token.
bool ContainsToken(const Shape& shape);

// Answers "does this instruction, or anything it calls (transitively), have a
// side effect?", memoizing per computation so a pass stays linear.
class SideEffectAnalysis {
 public:
  bool HasSideEffect(const hlo::HloInstruction& inst);

 private:
  bool ComputationHasSideEffect(const hlo::HloComputation* computation);
  std::unordered_map<const hlo::HloComputation*, bool> computations_;
};

}  // namespace kiln::passes
