// Jacobi eigen- and singular value decompositions; see
// jacobi_decompositions.h.
#include "compiler/evaluator/jacobi_decompositions.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <type_traits>

namespace kiln::hlo {
namespace {

using RealMatrix = DenseMatrix<double>;

// Rotates columns p and q of `m` by (c, s): p' = c p - s q, q' = s p + c q.
void RotateColumns(RealMatrix& m, int64_t p, int64_t q, double c, double s) {
  for (int64_t i = 0; i < m.rows; ++i) {
    const double x = m.at(i, p), y = m.at(i, q);
    m.at(i, p) = c * x - s * y;
    m.at(i, q) = s * x + c * y;
  }
}

std::vector<int64_t> Order(int64_t n, const std::function<bool(int64_t, int64_t)>& before) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), before);
  return order;
}

// Cyclic Jacobi on the symmetric `a` (Numerical Recipes' rotation, which
// zeroes a(p, q)): eigenvalues ascending in w, vectors as columns.
RealMatrix SymmetricEigen(RealMatrix a, std::vector<double>& w) {
  const int64_t n = a.rows;
  RealMatrix v(n, n);
  for (int64_t i = 0; i < n; ++i) v.at(i, i) = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, total = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) (i == j ? total : off) += a.at(i, j) * a.at(i, j);
    if (off <= 1e-32 * (total + off)) break;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        if (a.at(p, q) == 0) continue;
        const double theta = (a.at(q, q) - a.at(p, p)) / (2 * a.at(p, q));
        const double t = std::copysign(1.0, theta) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        RotateColumns(a, p, q, c, s);  // a <- a J, then J^T a
        for (int64_t j = 0; j < n; ++j) {
          const double x = a.at(p, j), y = a.at(q, j);
          a.at(p, j) = c * x - s * y;
          a.at(q, j) = s * x + c * y;
        }
        RotateColumns(v, p, q, c, s);
      }
    }
  }
  const std::vector<int64_t> order = Order(n, [&](int64_t x, int64_t y) { return a.at(x, x) < a.at(y, y); });
  RealMatrix sorted(n, n);
  w.assign(n, 0);
  for (int64_t j = 0; j < n; ++j) {
    w[j] = a.at(order[j], order[j]);
    for (int64_t i = 0; i < n; ++i) sorted.at(i, j) = v.at(i, order[j]);
  }
  return sorted;
}

// One-sided Jacobi on a (any shape): rotates column pairs until orthogonal,
// accumulating the rotations in v; then a's columns are u_j s_j.
void OrthogonalizeColumns(RealMatrix& a, RealMatrix& v) {
  const int64_t m = a.rows, n = a.cols;
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        double alpha = 0, beta = 0, gamma = 0;
        for (int64_t i = 0; i < m; ++i) {
          alpha += a.at(i, p) * a.at(i, p);
          beta += a.at(i, q) * a.at(i, q);
          gamma += a.at(i, p) * a.at(i, q);
        }
        if (std::abs(gamma) <= 1e-15 * std::sqrt(alpha * beta)) continue;
        rotated = true;
        const double zeta = (beta - alpha) / (2 * gamma);
        const double t = std::copysign(1.0, zeta) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const double c = 1 / std::sqrt(1 + t * t), s = c * t;
        RotateColumns(a, p, q, c, s);  // makes columns p and q orthogonal
        RotateColumns(v, p, q, c, s);
      }
    }
    if (!rotated) break;
  }
}

// Completes the columns of `u` flagged in `missing` to an orthonormal set
// from the identity's columns, by Gram-Schmidt (twice) against the others.
template <typename T>
void CompleteBasis(DenseMatrix<T>& u, std::vector<bool> missing) {
  for (int64_t j = 0; j < u.cols; ++j) {
    if (!missing[j]) continue;
    for (int64_t e = 0; e < u.rows; ++e) {
      std::vector<T> x(u.rows, T(0));
      x[e] = 1;
      for (int pass = 0; pass < 2; ++pass)
        for (int64_t c = 0; c < u.cols; ++c) {
          if (missing[c]) continue;
          T dot = 0;
          for (int64_t i = 0; i < u.rows; ++i) dot += Conj(u.at(i, c)) * x[i];
          for (int64_t i = 0; i < u.rows; ++i) x[i] -= dot * u.at(i, c);
        }
      double norm = 0;
      for (const T& xi : x) norm = std::hypot(norm, std::abs(xi));
      if (norm < 1e-6) continue;
      for (int64_t i = 0; i < u.rows; ++i) u.at(i, j) = x[i] / norm;
      missing[j] = false;
      break;
    }
  }
}

// The real embedding of a complex matrix: [[Re, -Im], [Im, Re]].
RealMatrix Embed(const DenseMatrix<Complex>& a) {
  RealMatrix r(2 * a.rows, 2 * a.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) {
      const Complex z = a.at(i, j);
      r.at(i, j) = r.at(a.rows + i, a.cols + j) = z.real();
      r.at(a.rows + i, j) = z.imag();
      r.at(i, a.cols + j) = -z.imag();
    }
  return r;
}

// Column j of the embedding's `m` (2 rows per complex row) as a complex vector.
template <typename T>
void Unembed(const RealMatrix& m, int64_t j, DenseMatrix<T>& out, int64_t out_col) {
  const int64_t rows = out.rows;
  for (int64_t i = 0; i < rows; ++i) {
    if constexpr (std::is_same_v<T, Complex>) out.at(i, out_col) = Complex(m.at(i, j), m.at(rows + i, j));
    else out.at(i, out_col) = m.at(i, j);
  }
}

}  // namespace

template <>
DenseMatrix<double> HermitianEigen(const DenseMatrix<double>& a, std::vector<double>& w) {
  return SymmetricEigen(a, w);
}

template <>
DenseMatrix<Complex> HermitianEigen(const DenseMatrix<Complex>& a, std::vector<double>& w) {
  std::vector<double> doubled;
  const RealMatrix v = SymmetricEigen(Embed(a), doubled);
  DenseMatrix<Complex> out(a.rows, a.rows);
  w.assign(a.rows, 0);
  for (int64_t j = 0; j < a.rows; ++j) {
    w[j] = doubled[2 * j];
    Unembed(v, 2 * j, out, j);
  }
  return out;
}

template <typename T>
SingularValueDecomposition<T> FullSvd(const DenseMatrix<T>& a) {
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  constexpr int64_t kCopies = std::is_same_v<T, Complex> ? 2 : 1;
  // Work on the tall one of a and a^H: a^H = u s v^H gives a = v s u^H.
  const bool wide = m < n;
  DenseMatrix<T> tall(wide ? n : m, wide ? m : n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) (wide ? tall.at(j, i) : tall.at(i, j)) = wide ? Conj(a.at(i, j)) : a.at(i, j);
  RealMatrix x(0, 0);
  if constexpr (std::is_same_v<T, Complex>) x = Embed(tall);
  else x = tall;
  RealMatrix rot(x.cols, x.cols);
  for (int64_t i = 0; i < x.cols; ++i) rot.at(i, i) = 1;
  OrthogonalizeColumns(x, rot);
  std::vector<double> norms(x.cols, 0.0);
  for (int64_t j = 0; j < x.cols; ++j)
    for (int64_t i = 0; i < x.rows; ++i) norms[j] = std::hypot(norms[j], x.at(i, j));
  const std::vector<int64_t> order = Order(x.cols, [&](int64_t p, int64_t q) { return norms[p] > norms[q]; });
  // Each value appears kCopies times: take every kCopies-th.
  SingularValueDecomposition<T> out{std::vector<double>(k), DenseMatrix<T>(tall.rows, tall.rows),
                                    DenseMatrix<T>(tall.cols, tall.cols)};
  std::vector<bool> missing_u(tall.rows, true), missing_v(tall.cols, true);
  const double tiny = (x.cols ? norms[order[0]] : 0) * 1e-300;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t src = order[kCopies * j];
    out.s[j] = norms[src];
    Unembed(rot, src, out.v, j);
    missing_v[j] = false;
    if (norms[src] <= tiny) continue;
    for (int64_t i = 0; i < x.rows; ++i) x.at(i, src) /= norms[src];
    Unembed(x, src, out.u, j);
    missing_u[j] = false;
  }
  CompleteBasis(out.u, missing_u);
  CompleteBasis(out.v, missing_v);
  if (wide) std::swap(out.u, out.v);
  return out;
}

template SingularValueDecomposition<double> FullSvd(const DenseMatrix<double>&);
template SingularValueDecomposition<Complex> FullSvd(const DenseMatrix<Complex>&);

}  // namespace kiln::hlo
