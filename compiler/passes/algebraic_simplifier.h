// AlgebraicSimplifier: local algebraic rewrites of HLO (XLA's
// AlgebraicSimplifier, restricted to the rules that matter on real modules).
//
// Why: frontends emit many trivial ops (x*1, reshapes to the same shape,
// transpose chains, converts through wider types, exp of a broadcast
// constant); removing or merging them shrinks what fusion, scheduling and
// codegen see, and sinking unary ops below scalar broadcasts lets constant
// folding work on scalars instead of whole arrays.
//
// kiln runs this pass after LayoutNormalization: shapes carry no layouts and
// buffers are dense row-major, so every rule reasons about logical shapes
// only (a copy is an identity, a reshape never moves data).
//
// Every rule is exact (bit for bit, integers included, NaN and inf kept)
// except the two documented below that follow XLA:
//   * add(x, +0.0) -> x for floats (fold_float_add_positive_zero): exact for
//     every x except x = -0.0, where the fold gives -0.0 instead of +0.0
//     (they compare equal). add(x, -0.0) and subtract(x, +0.0) are exact
//     and always folded.
//   * multiply(exp(a), exp(b)) -> exp(add(a, b)) (allow_inexact): one
//     rounding instead of three, so the result may differ in the last bits.
// Rules that are never applied because they are not exact: x*0 -> 0 for
// floats (NaN, inf, -0), converts through a narrowing step, divide(x, c) ->
// multiply(x, 1/c) unless 1/c is exactly representable, compare(x, x) for
// floats. Not implemented: dot(broadcast(s), y) -> s * reduce(y) (a
// reassociation of the sum for floats, and it needs a new reduction
// computation and the dot's accumulation type handled exactly).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

struct AlgebraicSimplifierOptions {
  // Fold add(x, +0.0) and subtract(x, -0.0) to x for real floats (XLA does).
  bool fold_float_add_positive_zero = true;
  // Apply rewrites that change float rounding (exp(a)*exp(b) -> exp(a+b)).
  bool allow_inexact = true;
  // Rounds over a computation before giving up on a fixed point.
  int max_iterations = 16;
};

// Rewrites every computation of the module to a fixed point (bounded by
// max_iterations rounds per computation). Instructions a rewrite makes dead
// are removed; other dead code is left for DeadCodeElimination.
class AlgebraicSimplifier : public HloPass {
 public:
  explicit AlgebraicSimplifier(AlgebraicSimplifierOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "algsimp"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

  // Rewrites per rule name ("add-zero", "reshape-reshape", ...), summed over
  // every Run of this object: for statistics and tests.
  const std::map<std::string, int64_t>& rewrite_counts() const { return counts_; }

 private:
  AlgebraicSimplifierOptions options_;
  std::map<std::string, int64_t> counts_;
};

}  // namespace kiln::passes
