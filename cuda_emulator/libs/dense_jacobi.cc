// The cuSOLVER double's Jacobi eigen- and singular value decompositions;
// see dense_jacobi.h.
#include "cuda_emulator/libs/dense_jacobi.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln::emu::libs {
namespace {

constexpr int kMaxSweeps = 100;
constexpr double kTolerance = 1e-15;

// The rotation that zeroes a real 2 x 2 problem with off-diagonal g > 0:
// t = tan of the angle, the smaller root of t^2 + 2 zeta t - 1 = 0.
void Rotation(double zeta, double* c, double* s) {
  const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
  *c = 1 / std::sqrt(1 + t * t);
  *s = *c * t;
}

// Columns p and q of `m` := (c x_p - s conj(e) x_q, s x_p + c conj(e) x_q):
// the right factor of one rotation, unitary.
void RotateColumns(DenseMatrix& m, int64_t p, int64_t q, double c, double s, Complex e) {
  for (int64_t r = 0; r < m.rows; ++r) {
    const Complex x = m.at(r, p), y = std::conj(e) * m.at(r, q);
    m.at(r, p) = c * x - s * y;
    m.at(r, q) = s * x + c * y;
  }
}

// The left factor J^H of the same rotation, on rows p and q.
void RotateRows(DenseMatrix& m, int64_t p, int64_t q, double c, double s, Complex e) {
  for (int64_t j = 0; j < m.cols; ++j) {
    const Complex x = m.at(p, j), y = e * m.at(q, j);
    m.at(p, j) = c * x - s * y;
    m.at(q, j) = s * x + c * y;
  }
}

double OffDiagonalNorm2(DenseMatrix& a) {
  double off = 0;
  for (int64_t j = 0; j < a.cols; ++j)
    for (int64_t i = 0; i < a.rows; ++i)
      if (i != j) off += std::norm(a.at(i, j));
  return off;
}

DenseMatrix Identity(int64_t rows, int64_t cols) {
  DenseMatrix d{rows, cols, std::vector<Complex>(static_cast<size_t>(rows * cols), 0)};
  for (int64_t i = 0; i < std::min(rows, cols); ++i) d.at(i, i) = 1;
  return d;
}

// Orders `values` (with the matching columns of `vectors`, when it has any)
// ascending or descending.
std::vector<int64_t> Order(const std::vector<double>& values, bool ascending) {
  std::vector<int64_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return ascending ? values[static_cast<size_t>(x)] < values[static_cast<size_t>(y)]
                     : values[static_cast<size_t>(x)] > values[static_cast<size_t>(y)];
  });
  return order;
}

DenseMatrix PermuteColumns(DenseMatrix& m, const std::vector<int64_t>& order, int64_t cols) {
  DenseMatrix out{m.rows, cols, std::vector<Complex>(static_cast<size_t>(m.rows * cols), 0)};
  for (int64_t j = 0; j < std::min<int64_t>(cols, static_cast<int64_t>(order.size())); ++j)
    for (int64_t r = 0; r < m.rows; ++r) out.at(r, j) = m.at(r, order[static_cast<size_t>(j)]);
  return out;
}

// Removes from column j its components along columns [0, j) (twice, for
// stability) and normalizes it; false when nothing independent is left.
bool Orthonormalize(DenseMatrix& u, int64_t j) {
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t i = 0; i < j; ++i) {
      Complex dot = 0;
      for (int64_t r = 0; r < u.rows; ++r) dot += std::conj(u.at(r, i)) * u.at(r, j);
      for (int64_t r = 0; r < u.rows; ++r) u.at(r, j) -= dot * u.at(r, i);
    }
  double norm = 0;
  for (int64_t r = 0; r < u.rows; ++r) norm += std::norm(u.at(r, j));
  norm = std::sqrt(norm);
  if (norm < 1e-8) return false;
  for (int64_t r = 0; r < u.rows; ++r) u.at(r, j) /= norm;
  return true;
}

// Fills columns [first, cols) of u with unit vectors orthogonalized
// against the columns before them.
void CompleteBasis(DenseMatrix& u, int64_t first) {
  int64_t candidate = 0;
  for (int64_t j = first; j < u.cols; ++j) {
    do {
      for (int64_t r = 0; r < u.rows; ++r) u.at(r, j) = r == candidate ? 1 : 0;
      ++candidate;
    } while (!Orthonormalize(u, j) && candidate < u.rows);
  }
}

}  // namespace

std::vector<double> HermitianEigen(DenseMatrix& a, bool lower, bool vectors) {
  const int64_t n = a.rows;
  for (int64_t j = 0; j < n; ++j) {  // the full matrix from the stored triangle
    a.at(j, j) = a.at(j, j).real();
    for (int64_t i = j + 1; i < n; ++i) {
      if (lower) a.at(j, i) = std::conj(a.at(i, j));
      else a.at(i, j) = std::conj(a.at(j, i));
    }
  }
  double total = 0;
  for (const Complex& z : a.values) total += std::norm(z);
  DenseMatrix v = Identity(n, n);
  for (int sweep = 0; sweep < kMaxSweeps && OffDiagonalNorm2(a) > kTolerance * kTolerance * total; ++sweep) {
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const double g = std::abs(a.at(p, q));
        if (g == 0) continue;
        const Complex e = a.at(p, q) / g;
        double c, s;
        Rotation((a.at(q, q).real() - a.at(p, p).real()) / (2 * g), &c, &s);
        RotateColumns(a, p, q, c, s, e);
        RotateRows(a, p, q, c, s, e);
        RotateColumns(v, p, q, c, s, e);
      }
  }
  std::vector<double> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[static_cast<size_t>(i)] = a.at(i, i).real();
  const std::vector<int64_t> order = Order(w, true);
  std::vector<double> sorted;
  for (int64_t i : order) sorted.push_back(w[static_cast<size_t>(i)]);
  if (vectors) a = PermuteColumns(v, order, n);
  return sorted;
}

std::vector<double> JacobiSvd(DenseMatrix a, int64_t u_cols, DenseMatrix& u, DenseMatrix& v) {
  const int64_t n = a.cols;
  v = Identity(n, n);
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        double alpha = 0, beta = 0;
        Complex gamma = 0;
        for (int64_t r = 0; r < a.rows; ++r) {
          alpha += std::norm(a.at(r, p));
          beta += std::norm(a.at(r, q));
          gamma += std::conj(a.at(r, p)) * a.at(r, q);
        }
        const double g = std::abs(gamma);
        if (g <= kTolerance * std::sqrt(alpha * beta)) continue;
        rotated = true;
        double c, s;
        Rotation((beta - alpha) / (2 * g), &c, &s);
        RotateColumns(a, p, q, c, s, gamma / g);
        RotateColumns(v, p, q, c, s, gamma / g);
      }
    if (!rotated) break;
  }
  std::vector<double> sigma(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    double norm = 0;
    for (int64_t r = 0; r < a.rows; ++r) norm += std::norm(a.at(r, j));
    sigma[static_cast<size_t>(j)] = std::sqrt(norm);
  }
  const std::vector<int64_t> order = Order(sigma, false);
  std::vector<double> sorted;
  for (int64_t j : order) sorted.push_back(sigma[static_cast<size_t>(j)]);
  v = PermuteColumns(v, order, n);
  if (u_cols == 0) return sorted;
  u = PermuteColumns(a, order, u_cols);
  const double largest = sorted.empty() ? 0 : sorted[0];
  int64_t independent = 0;
  for (int64_t j = 0; j < n; ++j, ++independent) {
    const double sj = sorted[static_cast<size_t>(j)];
    if (sj <= largest * 1e-13 || sj == 0) break;
    for (int64_t r = 0; r < u.rows; ++r) u.at(r, j) /= sj;
  }
  CompleteBasis(u, independent);
  return sorted;
}

}  // namespace kiln::emu::libs
