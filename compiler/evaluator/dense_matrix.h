// DenseMatrix: a row-major matrix of double or complex<double> for the
// evaluator's LAPACK custom calls (lapack_ops.cc, jacobi_decompositions.cc),
// and the batches of such matrices that a literal's minor two dimensions
// hold.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "common/shape.h"

namespace kiln::hlo {

using Complex = std::complex<double>;

inline double Conj(double x) { return x; }
inline Complex Conj(Complex x) { return std::conj(x); }

template <typename T>
struct DenseMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<T> v;
  DenseMatrix(int64_t r, int64_t c) : rows(r), cols(c), v(r * c, T(0)) {}
  T& at(int64_t i, int64_t j) { return v[i * cols + j]; }
  const T& at(int64_t i, int64_t j) const { return v[i * cols + j]; }
};

// The matrices of a shape's two minor dimensions, batched over the others.
struct MatrixBatchShape {
  int64_t batch = 1, rows = 0, cols = 0;
  explicit MatrixBatchShape(const Shape& s) : rows(s.dim(s.rank() - 2)), cols(s.dim(s.rank() - 1)) {
    for (int64_t i = 0; i + 2 < s.rank(); ++i) batch *= s.dim(i);
  }
};

// Matrix `index` (rows x cols) of the flat row-major batch `all`.
template <typename T>
DenseMatrix<T> TakeMatrix(const std::vector<T>& all, int64_t index, int64_t rows, int64_t cols) {
  DenseMatrix<T> m(rows, cols);
  std::copy_n(all.begin() + index * rows * cols, rows * cols, m.v.begin());
  return m;
}

template <typename T>
void PutMatrix(std::vector<T>& all, int64_t index, const DenseMatrix<T>& m) {
  std::copy(m.v.begin(), m.v.end(), all.begin() + index * m.rows * m.cols);
}

}  // namespace kiln::hlo
