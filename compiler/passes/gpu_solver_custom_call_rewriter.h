// GpuSolverCustomCallRewriter: JAX lowers jnp.linalg on GPU to cuSOLVER
// custom calls (jaxlib/gpu/solver_kernels_ffi.cc: cusolver_<op>_ffi, one
// target for every element type, attributes as an MLIR dictionary) and
// XLA GPU lowers its cholesky op to __cusolver$cholesky and its
// triangular-solve to __cublas$triangularSolve. Each becomes the
// lapack_<t><op>_ffi call that kiln already runs (a LinalgThunk or
// CholeskyThunk: LAPACK on the host, cuSOLVER on CUDA), plus the HLO that
// reconciles the two conventions. Layouts are dropped (kiln works on the
// logical matrices), so the GPU calls' column-major operands need nothing.
//   cusolver_potrf_ffi {lower}           -> lapack potrf {uplo}
//   __cusolver$cholesky {"lower"}        -> lapack potrf; the workspace
//                                           result is a zero array
//   cusolver_getrf_ffi, _geqrf_ffi       -> lapack getrf, geqrf (same results)
//   cusolver_orgqr_ffi                   -> lapack orgqr (ungqr for complex)
//   cusolver_syevd_ffi {lower, algorithm}-> lapack syevd {mode 'V', uplo}
//   cusolver_gesvd_ffi {full_matrices, compute_uv, transposed}
//                                        -> lapack gesdd; `transposed`
//                                           (wide matrices) returns vt in
//                                           result 2 and u in result 3
//   cusolver_gesvdj_ffi, cusolver_gesvdp_ffi {full_matrices, compute_uv}
//                                        -> lapack gesdd; result 3 is V
//                                           (not V^H): vt's conjugate
//                                           transpose
// Without compute_uv the vector results are zero arrays of their shapes.
//   __cublas$triangularSolve(a, b)      -> triangular-solve with the options
//                                           of its JSON backend_config; the
//                                           workspace result is zeros
//   cu_lu_pivots_to_permutation(pivots)  -> a while loop applying the
//                                           0-based row swaps to an iota, as
//                                           jaxlib's CUDA kernel does
//                                           (pivots outside [0, m) are
//                                           skipped)
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class GpuSolverCustomCallRewriter : public HloPass {
 public:
  std::string_view name() const override { return "gpu-solver-custom-call-rewriter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
