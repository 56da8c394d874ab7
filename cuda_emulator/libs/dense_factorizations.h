// The cuSOLVER double's own LU and QR arithmetic: partial-pivot LU
// (getrf), Householder QR (geqrf) and the explicit Q (orgqr / ungqr) on one
// column-major matrix, in double precision (complex<double> for every
// type: a real matrix is one whose imaginary parts are zero), with
// LAPACK's conventions, so the results are what LAPACK's unblocked
// routines (getf2, geqr2, ung2r) return up to rounding.
//
// Written independently of LAPACK on purpose: the host runtime calls
// OpenBLAS' LAPACK, so a double that called it too could not catch a
// layout or convention mistake in the CUDA path that the host shares.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace kiln::emu::libs {

using Complex = std::complex<double>;

// A column-major rows x cols matrix (leading dimension rows).
struct DenseMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<Complex> values;
  Complex& at(int64_t i, int64_t j) { return values[static_cast<size_t>(j * rows + i)]; }
};

// LU with partial pivoting, in place: L (unit, below the diagonal) and U.
// `pivots` gets min(rows, cols) 1-based row indices (row i was swapped with
// pivots[i]); returns 0 or the 1-based index of the first exactly zero
// pivot (the factorization is still completed, as LAPACK's).
int LuFactor(DenseMatrix& a, std::vector<int>& pivots);

// Householder QR, in place: R on and above the diagonal, the reflectors'
// vectors (v[i] = 1 implied) below it; `tau` gets min(rows, cols) scalars.
// H(i) = I - tau[i] v v^H and A = H(0) ... H(k-1) R, as LAPACK's geqrf.
void HouseholderQr(DenseMatrix& a, std::vector<Complex>& tau);

// The first cols columns of Q = H(0) ... H(k-1) from geqrf's reflectors in
// the first k columns of `a` (k = tau.size() <= cols <= rows), in place.
void FormQ(DenseMatrix& a, const std::vector<Complex>& tau);

}  // namespace kiln::emu::libs
