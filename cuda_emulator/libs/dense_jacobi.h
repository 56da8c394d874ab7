// The cuSOLVER double's own eigen- and singular value arithmetic: cyclic
// Jacobi for Hermitian (and real symmetric) eigenproblems (syevd / heevd)
// and one-sided (Hestenes) Jacobi for the SVD (gesvd), in double precision
// on column-major matrices (dense_factorizations.h's DenseMatrix), written
// independently of LAPACK for the reason dense_factorizations.h gives.
// Eigen- and singular vectors are unique only up to a phase, which callers
// compare by magnitude or after normalizing.
#pragma once

#include <vector>

#include "cuda_emulator/libs/dense_factorizations.h"

namespace kiln::emu::libs {

// Eigenvalues of the Hermitian matrix whose `lower` (else upper) triangle
// `a` holds (the diagonal's imaginary parts ignored), ascending; with
// `vectors`, a's columns become the matching orthonormal eigenvectors.
std::vector<double> HermitianEigen(DenseMatrix& a, bool lower, bool vectors);

// The SVD of `a` (rows >= cols): singular values descending; u gets
// `u_cols` (cols or rows; 0 for none) orthonormal left vectors, completed
// to an orthonormal basis where the matrix has none (rank deficiency,
// u_cols = rows); v gets the right vectors, cols x cols (a = u s v^H).
std::vector<double> JacobiSvd(DenseMatrix a, int64_t u_cols, DenseMatrix& u, DenseMatrix& v);

}  // namespace kiln::emu::libs
