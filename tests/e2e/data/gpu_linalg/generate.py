#!/usr/bin/env python3
"""Generates tests/e2e/data/gpu_linalg: jnp.linalg as JAX lowers it for CUDA.

  .venv/bin/python tests/e2e/data/gpu_linalg/generate.py

Why: JAX's GPU lowerings call cuSOLVER through custom calls
(cusolver_{getrf,geqrf,orgqr,syevd,gesvd,gesvdj,gesvdp,potrf}_ffi and
cu_lu_pivots_to_permutation) whose operand layouts, attributes and results
differ from the CPU LAPACK targets. kiln must compile the HLO a user dumps
from a GPU program, so tests/e2e/gpu_linalg_e2e_test.cc compiles these
modules (no GPU is needed to make them: the lowering is traced for the
'cuda' platform on any machine) and checks the results by the
decompositions' defining properties and against the reference evaluator.

Each <case>.hlo is jax.jit(f).trace(*args).lower(lowering_platforms=
('cuda',)).compiler_ir('hlo') printed with full constants and no metadata,
for the shapes in CASES below (made with jax/jaxlib 0.10.2).
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

jax.config.update("jax_enable_x64", True)
HERE = os.path.dirname(os.path.abspath(__file__))
QR_SVD = lax.linalg.SvdAlgorithm.QR
POLAR_SVD = lax.linalg.SvdAlgorithm.POLAR

# name -> (function, argument shape, dtype)
CASES = {
    "lu_f32_4x4": (lambda a: lax.linalg.lu(a), (4, 4), np.float32),
    "lu_f64_batch_tall_2x5x3": (lambda a: lax.linalg.lu(a), (2, 5, 3), np.float64),
    "lu_f64_wide_3x5": (lambda a: lax.linalg.lu(a), (3, 5), np.float64),
    "qr_f32_reduced_5x3": (lambda a: jnp.linalg.qr(a, mode="reduced"), (5, 3), np.float32),
    "qr_c64_complete_3x3": (lambda a: jnp.linalg.qr(a, mode="complete"), (3, 3), np.complex64),
    "qr_f64_batch_wide_2x3x4": (jnp.linalg.qr, (2, 3, 4), np.float64),
    "eigh_f64_lower_4x4": (lambda a: jnp.linalg.eigh(a, UPLO="L"), (4, 4), np.float64),
    "eigh_f32_upper_batch_2x3x3": (lambda a: jnp.linalg.eigh(a, UPLO="U"), (2, 3, 3), np.float32),
    "eigh_c128_3x3": (jnp.linalg.eigh, (3, 3), np.complex128),
    "svd_f32_jacobi_full_4x3": (lambda a: jnp.linalg.svd(a, full_matrices=True), (4, 3), np.float32),
    "svd_f64_jacobi_reduced_3x5": (lambda a: jnp.linalg.svd(a, full_matrices=False), (3, 5), np.float64),
    "svd_c64_jacobi_3x2": (lambda a: jnp.linalg.svd(a, full_matrices=True), (3, 2), np.complex64),
    "svd_f64_jacobi_values_4x3": (lambda a: jnp.linalg.svd(a, compute_uv=False), (4, 3), np.float64),
    "svd_f64_qr_full_tall_5x3": (lambda a: lax.linalg.svd(a, full_matrices=True, algorithm=QR_SVD), (5, 3),
                                 np.float64),
    "svd_f32_qr_reduced_wide_2x3x5": (lambda a: lax.linalg.svd(a, full_matrices=False, algorithm=QR_SVD),
                                      (2, 3, 5), np.float32),
    "svd_f64_qr_values_wide_3x4": (lambda a: lax.linalg.svd(a, compute_uv=False, algorithm=QR_SVD), (3, 4),
                                   np.float64),
    "svd_f64_polar_4x3": (lambda a: lax.linalg.svd(a, full_matrices=True, algorithm=POLAR_SVD), (4, 3), np.float64),
    "cholesky_f32_4x4": (jnp.linalg.cholesky, (4, 4), np.float32),
    "cholesky_f64_upper_batch_2x3x3": (lambda a: jnp.linalg.cholesky(a, upper=True), (2, 3, 3), np.float64),
}


def hlo_text(fn, arg):
    lowered = jax.jit(fn).trace(arg).lower(lowering_platforms=("cuda",))
    options = xc.hlo.HloPrintOptions.short_parsable()
    options.print_large_constants = True
    options.print_metadata = False
    return lowered.compiler_ir("hlo").get_hlo_module().to_string(options)


def main():
    for name, (fn, shape, dtype) in CASES.items():
        text = hlo_text(fn, np.zeros(shape, dtype))
        with open(os.path.join(HERE, name + ".hlo"), "w") as f:
            f.write(text)
        targets = sorted({t.split('"')[1] for t in text.split("custom_call_target=")[1:]})
        print(name, targets)


if __name__ == "__main__":
    main()
