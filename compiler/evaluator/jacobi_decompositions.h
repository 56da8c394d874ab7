// Eigen- and singular value decompositions for the evaluator's syevd/heevd
// and gesdd custom calls, by Jacobi methods in double: cyclic Jacobi for
// symmetric matrices, one-sided Jacobi (Hestenes) for the SVD. Slow but
// simple and accurate, and independent of LAPACK, which kiln's thunks and
// XLA run.
//
// Complex matrices go through the real embedding [[Re, -Im], [Im, Re]]: a
// Hermitian (or general) complex matrix's eigen- (singular) values appear
// twice there, and any unit vector [x; y] of such a pair's invariant plane
// is e^{it} times a unit complex vector x + iy of the original, so the
// first vector of every pair is taken.
#pragma once

#include <vector>

#include "compiler/evaluator/dense_matrix.h"

namespace kiln::hlo {

// Eigenvalues of the Hermitian `a` (both triangles set) ascending in `w`;
// their unit eigenvectors are the result's columns.
template <typename T>
DenseMatrix<T> HermitianEigen(const DenseMatrix<T>& a, std::vector<double>& w);

template <typename T>
struct SingularValueDecomposition {
  std::vector<double> s;  // min(m, n), descending
  DenseMatrix<T> u, v;    // m x m and n x n unitary, a = u diag(s) v^H
};

template <typename T>
SingularValueDecomposition<T> FullSvd(const DenseMatrix<T>& a);

}  // namespace kiln::hlo
