// The cuSOLVER double's LU and QR arithmetic; see dense_factorizations.h.
#include "cuda_emulator/libs/dense_factorizations.h"

#include <cmath>

namespace kiln::emu::libs {
namespace {

// LAPACK's pivot measure (i?amax): |re| + |im|.
double Abs1(Complex z) { return std::abs(z.real()) + std::abs(z.imag()); }

// Applies H = I - tau v v^H from the left to columns [first_col, cols) of
// rows [first_row, rows) of `a` (v is zero above first_row).
void ApplyReflector(DenseMatrix& a, int64_t first_row, Complex tau, int64_t first_col,
                    const std::vector<Complex>& v) {
  if (tau == Complex(0)) return;
  for (int64_t j = first_col; j < a.cols; ++j) {
    Complex w = 0;
    for (int64_t r = first_row; r < a.rows; ++r) w += std::conj(v[static_cast<size_t>(r)]) * a.at(r, j);
    for (int64_t r = first_row; r < a.rows; ++r) a.at(r, j) -= tau * v[static_cast<size_t>(r)] * w;
  }
}

// LAPACK's larfg on column i from row i: turns (alpha, x) into (beta, 0)
// with H^H (alpha, x) = (beta, 0), beta real; x is replaced by v's tail.
Complex Reflector(DenseMatrix& a, int64_t i) {
  double xnorm2 = 0;
  for (int64_t r = i + 1; r < a.rows; ++r) xnorm2 += std::norm(a.at(r, i));
  const Complex alpha = a.at(i, i);
  if (xnorm2 == 0 && alpha.imag() == 0) return 0;
  const double norm = std::sqrt(std::norm(alpha) + xnorm2);
  const double beta = alpha.real() >= 0 ? -norm : norm;
  const Complex tau((beta - alpha.real()) / beta, -alpha.imag() / beta);
  const Complex scale = 1.0 / (alpha - beta);
  for (int64_t r = i + 1; r < a.rows; ++r) a.at(r, i) *= scale;
  a.at(i, i) = beta;
  return tau;
}

// Column i's reflector vector, full length (zeros above row i).
std::vector<Complex> ReflectorVector(DenseMatrix& a, int64_t i) {
  std::vector<Complex> v(static_cast<size_t>(a.rows), 0);
  v[static_cast<size_t>(i)] = 1;
  for (int64_t r = i + 1; r < a.rows; ++r) v[static_cast<size_t>(r)] = a.at(r, i);
  return v;
}

}  // namespace

int LuFactor(DenseMatrix& a, std::vector<int>& pivots) {
  const int64_t k = std::min(a.rows, a.cols);
  pivots.assign(static_cast<size_t>(k), 0);
  int info = 0;
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    for (int64_t r = j + 1; r < a.rows; ++r)
      if (Abs1(a.at(r, j)) > Abs1(a.at(p, j))) p = r;
    pivots[static_cast<size_t>(j)] = static_cast<int>(p + 1);
    if (a.at(p, j) == Complex(0)) {
      if (info == 0) info = static_cast<int>(j + 1);
      continue;  // the column below is zero too: nothing to eliminate
    }
    if (p != j)
      for (int64_t c = 0; c < a.cols; ++c) std::swap(a.at(j, c), a.at(p, c));
    const Complex inverse = 1.0 / a.at(j, j);
    for (int64_t r = j + 1; r < a.rows; ++r) a.at(r, j) *= inverse;
    for (int64_t c = j + 1; c < a.cols; ++c)
      for (int64_t r = j + 1; r < a.rows; ++r) a.at(r, c) -= a.at(r, j) * a.at(j, c);
  }
  return info;
}

void HouseholderQr(DenseMatrix& a, std::vector<Complex>& tau) {
  const int64_t k = std::min(a.rows, a.cols);
  tau.assign(static_cast<size_t>(k), 0);
  for (int64_t i = 0; i < k; ++i) {
    const Complex t = Reflector(a, i);
    tau[static_cast<size_t>(i)] = t;
    // geqrf applies H(i)^H = I - conj(tau) v v^H to the trailing columns.
    ApplyReflector(a, i, std::conj(t), i + 1, ReflectorVector(a, i));
  }
}

void FormQ(DenseMatrix& a, const std::vector<Complex>& tau) {
  const int64_t k = static_cast<int64_t>(tau.size());
  std::vector<std::vector<Complex>> vectors;
  for (int64_t i = 0; i < k; ++i) vectors.push_back(ReflectorVector(a, i));
  for (int64_t j = 0; j < a.cols; ++j)
    for (int64_t r = 0; r < a.rows; ++r) a.at(r, j) = r == j ? 1 : 0;
  // Q = H(0) (H(1) (... H(k-1) I)): the last reflector first.
  for (int64_t i = k - 1; i >= 0; --i)
    ApplyReflector(a, i, tau[static_cast<size_t>(i)], 0, vectors[static_cast<size_t>(i)]);
}

}  // namespace kiln::emu::libs
