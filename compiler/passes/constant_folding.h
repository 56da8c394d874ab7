// ConstantFolding: evaluates instructions whose operands are all constants
// (XLA's HloConstantFolding).
//
// JAX programs compute shape-derived scalars, masks and small tables from
// literals; folding them at compile time removes kernels and exposes
// constant operands to the algebraic simplifier. The reference evaluator
// computes the values, so folding follows XLA's semantics exactly.
#pragma once

#include <cstdint>

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

struct ConstantFoldingOptions {
  // Results with more elements are not folded: a large constant costs
  // artifact size and load time that computing it at run time does not.
  int64_t max_result_elements = int64_t{1} << 16;
  // Instructions reading more constant bytes than this are not folded.
  int64_t max_input_bytes = int64_t{1} << 20;
  // Estimated scalar operations (result elements times per-element work for
  // dot, convolution and windowed ops) beyond which folding would slow the
  // compile down more than it helps.
  int64_t max_work = int64_t{1} << 24;
};

// Replaces each foldable instruction with a constant holding its value.
// Foldable: at least one operand, every operand a constant (with its data:
// not elided), an array result within the limits above, no side effects,
// and no called computation other than the scalar computations of reduce,
// reduce-window, map, sort, scatter and select-and-scatter. Broadcast and
// iota are never folded (cheap to compute, big to store); neither are
// while, conditional, call, fusion, custom-call, rng, collectives, I/O.
// Walks post-order, so chains fold in one run; the folded constant takes the
// folded instruction's name, and operand constants left unused are removed.
// An instruction the evaluator rejects is left as it is.
class ConstantFolding : public HloPass {
 public:
  explicit ConstantFolding(ConstantFoldingOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "constant-folding"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  ConstantFoldingOptions options_;
};

}  // namespace kiln::passes
