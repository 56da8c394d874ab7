// TriangularSolveUpcast: BLAS' and cuBLAS' trsm take f32, f64, c64 and
// c128, so a triangular-solve of f16 or bf16 operands is solved in f32
// between converts: convert(triangular-solve(convert(a), convert(b))) with
// the same attributes, rounded once to the narrow type (as CholeskyRewriter
// factors narrow matrices). XLA's own expansion works in the narrow type
// with f32 accumulation in its dots; the reference evaluator solves in
// double and rounds once, which the f32 solve matches to the narrow type's
// precision.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class TriangularSolveUpcast : public HloPass {
 public:
  std::string_view name() const override { return "triangular-solve-upcast"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
