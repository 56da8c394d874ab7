// cholesky and triangular-solve for the reference evaluator
// (operation_semantics "Cholesky" and "TriangularSolve").
//
// Both act on the two minor dimensions, batched over the others, and run in
// double (real types) or complex<double>, rounding once to the result type.
//
// cholesky(a), lower=L reads only the lower (L) or upper triangle of each
// matrix and returns L with a = L L^H (upper: U with a = U^H U). What XLA
// returns beyond that, and kiln matches on every target: the other triangle
// is zero (XLA CPU's CholeskyExpander starts from zeros), and a matrix that
// is not positive definite (a pivot that is not > 0, NaN included: where
// potrf stops) becomes all NaN, as XLA GPU's select on potrf's info does.
//
// triangular-solve(a, b) solves op(a) x = b (left_side) or x op(a) = b,
// op being a, a^T or a^H (transpose_a), reading only the lower or upper
// triangle of a, with ones on its diagonal when unit_diagonal.
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/evaluator/contraction_util.h"
#include "compiler/hlo/custom_call_targets.h"

namespace kiln::hlo {

namespace {

using Complex = std::complex<double>;

double Conj(double x) { return x; }
Complex Conj(Complex x) { return std::conj(x); }
double Real(double x) { return x; }
double Real(Complex x) { return x.real(); }

// The operand's elements in T (double or complex<double>).
template <typename T>
std::vector<T> Read(const Literal& lit) {
  if constexpr (std::is_same_v<T, Complex>) {
    return ReadAsComplex(lit, ElementType::kC128);
  } else {
    return ReadAsReal(lit, ElementType::kF64);
  }
}

template <typename T>
Literal Store(const Shape& shape, const std::vector<T>& values) {
  if constexpr (std::is_same_v<T, Complex>) {
    return StoreComplex(shape, values);
  } else {
    return StoreReal(shape, values);
  }
}

template <typename T>
T NaN() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if constexpr (std::is_same_v<T, Complex>) {
    return Complex(nan, nan);
  } else {
    return nan;
  }
}

// The batch of square or rectangular matrices of a row-major buffer.
struct MatrixBatch {
  int64_t batch = 1, rows = 0, cols = 0;
};

MatrixBatch BatchOf(const Shape& shape) {
  const int64_t rank = shape.rank();
  MatrixBatch m;
  m.rows = shape.dim(rank - 2);
  m.cols = shape.dim(rank - 1);
  for (int64_t i = 0; i + 2 < rank; ++i) m.batch *= shape.dim(i);
  return m;
}

// Factors the n x n matrix at `a` (lower triangle read) into L, written to
// `l` (zero above the diagonal). Returns 0, or j + 1 when pivot j is not
// positive (potrf's info).
template <typename T>
int64_t CholeskyLower(const T* a, int64_t n, T* l) {
  for (int64_t i = 0; i < n * n; ++i) l[i] = 0;
  for (int64_t j = 0; j < n; ++j) {
    // Only the diagonal's real part counts (a Hermitian matrix's is real).
    double pivot = Real(a[j * n + j]);
    for (int64_t k = 0; k < j; ++k) pivot -= std::norm(l[j * n + k]);
    if (!(pivot > 0)) return j + 1;
    const double d = std::sqrt(pivot);
    l[j * n + j] = d;
    for (int64_t i = j + 1; i < n; ++i) {
      T sum = a[i * n + j];
      for (int64_t k = 0; k < j; ++k) sum -= l[i * n + k] * Conj(l[j * n + k]);
      l[i * n + j] = sum / d;
    }
  }
  return 0;
}

template <typename T>
Literal Cholesky(const Shape& shape, const Literal& operand, bool lower) {
  const MatrixBatch m = BatchOf(shape);
  const int64_t n = m.rows;
  std::vector<T> a = Read<T>(operand);
  std::vector<T> out(a.size()), lower_a(n * n), l(n * n);
  for (int64_t b = 0; b < m.batch; ++b) {
    const T* matrix = a.data() + b * n * n;
    // The upper case is the lower one of a^H: U = L^H.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) lower_a[i * n + j] = lower ? matrix[i * n + j] : Conj(matrix[j * n + i]);
    T* result = out.data() + b * n * n;
    if (CholeskyLower(lower_a.data(), n, l.data()) != 0) {
      for (int64_t i = 0; i < n * n; ++i) result[i] = NaN<T>();
      continue;
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) result[i * n + j] = lower ? l[i * n + j] : Conj(l[j * n + i]);
  }
  return Store(shape, out);
}

StatusOr<Literal> EvalCholesky(const HloInstruction& inst, const Operands& operands) {
  const Shape& shape = inst.shape();
  if (operands.size() != 1 || !shape.IsArray() || shape.rank() < 2 ||
      operands[0]->shape().dims() != shape.dims() || shape.dim(shape.rank() - 1) != shape.dim(shape.rank() - 2))
    return Error(inst.DebugName() + ": cholesky takes one batch of square matrices of its result's shape");
  const bool lower = inst.GetBool("lower", false);
  if (IsComplex(shape.element_type())) return Cholesky<Complex>(shape, *operands[0], lower);
  return Cholesky<double>(shape, *operands[0], lower);
}

// Solves t x = rhs in place for the k x cols block `x` (row-major), t being
// the k x k triangular matrix `t` (lower or upper, dense with zeros).
template <typename T>
void SolveLeft(const std::vector<T>& t, bool lower, int64_t k, T* x, int64_t cols) {
  for (int64_t step = 0; step < k; ++step) {
    const int64_t i = lower ? step : k - 1 - step;
    for (int64_t c = 0; c < cols; ++c) {
      T sum = x[i * cols + c];
      if (lower) {
        for (int64_t j = 0; j < i; ++j) sum -= t[i * k + j] * x[j * cols + c];
      } else {
        for (int64_t j = i + 1; j < k; ++j) sum -= t[i * k + j] * x[j * cols + c];
      }
      x[i * cols + c] = sum / t[i * k + i];
    }
  }
}

struct SolveOptions {
  bool left = false, lower = false, unit = false, transposed = false, adjoint = false;
};

template <typename T>
Literal TriangularSolve(const Shape& shape, const Literal& a_lit, const Literal& b_lit, const SolveOptions& o) {
  const MatrixBatch mb = BatchOf(shape);
  const int64_t rows = mb.rows, cols = mb.cols, k = o.left ? rows : cols;
  std::vector<T> a = Read<T>(a_lit);
  std::vector<T> x = Read<T>(b_lit);
  // op(a) as a dense triangular matrix t; a transpose moves the triangle.
  const bool t_lower = o.lower != o.transposed;
  std::vector<T> t(k * k), tt(k * k), xt(rows * cols);
  for (int64_t b = 0; b < mb.batch; ++b) {
    const T* matrix = a.data() + b * k * k;
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        // t[i][j] = op(a)[i][j], from a[j][i] when transposed.
        const int64_t ai = o.transposed ? j : i, aj = o.transposed ? i : j;
        const bool in_triangle = o.lower ? ai >= aj : ai <= aj;
        T v = in_triangle ? matrix[ai * k + aj] : T(0);
        if (o.adjoint) v = Conj(v);
        if (i == j && o.unit) v = 1;
        t[i * k + j] = v;
      }
    }
    T* xb = x.data() + b * rows * cols;
    if (o.left) {
      SolveLeft(t, t_lower, k, xb, cols);
      continue;
    }
    // x t = rhs  <=>  t^T x^T = rhs^T, t^T of the other triangle.
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j) tt[i * k + j] = t[j * k + i];
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) xt[j * rows + i] = xb[i * cols + j];
    SolveLeft(tt, !t_lower, k, xt.data(), rows);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) xb[i * cols + j] = xt[j * rows + i];
  }
  return Store(shape, x);
}

// The solve of `shape` (an array) with options `o`, checked first.
StatusOr<Literal> Solve(const HloInstruction& inst, const Shape& shape, const Operands& operands, SolveOptions o,
                        const std::string& transpose) {
  if (operands.size() != 2 || !shape.IsArray() || shape.rank() < 2 ||
      operands[1]->shape().dims() != shape.dims())
    return Error(inst.DebugName() + ": triangular-solve takes a and b, b of its result's shape");
  if (transpose != "NO_TRANSPOSE" && transpose != "TRANSPOSE" && transpose != "ADJOINT")
    return Error(inst.DebugName() + ": transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT");
  o.transposed = transpose != "NO_TRANSPOSE";
  o.adjoint = transpose == "ADJOINT";
  const MatrixBatch mb = BatchOf(shape), ma = BatchOf(operands[0]->shape());
  const int64_t k = o.left ? mb.rows : mb.cols;
  if (ma.rows != k || ma.cols != k || ma.batch != mb.batch)
    return Error(inst.DebugName() + ": a must be a batch of " + std::to_string(k) + " x " + std::to_string(k) +
                 " matrices");
  if (IsComplex(shape.element_type())) return TriangularSolve<Complex>(shape, *operands[0], *operands[1], o);
  return TriangularSolve<double>(shape, *operands[0], *operands[1], o);
}

StatusOr<Literal> EvalTriangularSolve(const HloInstruction& inst, const Operands& operands) {
  SolveOptions o;
  o.left = inst.GetBool("left_side", false);
  o.lower = inst.GetBool("lower", false);
  o.unit = inst.GetBool("unit_diagonal", false);
  return Solve(inst, inst.shape(), operands, o, inst.GetString("transpose_a"));
}

}  // namespace

// potrf as JAX's lapack_?potrf_ffi returns it: the `lower` (else upper)
// triangle holds the factor, the other keeps the operand's values, and info
// is 0 or, for a matrix that is not positive definite, the order of the
// first failing leading minor (that matrix's factor triangle is then NaN
// here; LAPACK leaves it partly factored, which JAX replaces by NaN).
StatusOr<Literal> EvalTriangularSolveCall(const HloInstruction& call, const Operands& operands) {
  KILN_ASSIGN_OR_RETURN(TriangularSolveOptions options, ReadTriangularSolveOptions(call));
  SolveOptions o;
  o.left = options.left_side;
  o.lower = options.lower;
  o.unit = options.unit_diagonal;
  const Shape& s = call.shape();
  const bool tuple = s.IsTuple() && s.tuple_size() == 2 && s.tuple_shape(1).IsArray();
  KILN_ASSIGN_OR_RETURN(Literal x, Solve(call, tuple ? s.tuple_shape(0) : s, operands, o, options.transpose_a));
  if (!tuple) return x;
  std::vector<Literal> parts;
  parts.push_back(std::move(x));
  parts.push_back(Literal(s.tuple_shape(1)));  // the workspace: zeros
  return Literal::MakeTuple(std::move(parts));
}

StatusOr<Literal> EvalPotrfCall(const HloInstruction& inst, const Operands& operands, bool lower) {
  return EvalPotrf(inst, operands, lower, inst.shape());
}

StatusOr<Literal> EvalPotrf(const HloInstruction& inst, const Operands& operands, bool lower, const Shape& out) {
  if (operands.size() != 1 || !out.IsTuple() || out.tuple_size() != 2)
    return Error(inst.DebugName() + ": potrf takes one operand and returns (factor, info)");
  const Shape& shape = operands[0]->shape();
  const MatrixBatch m = BatchOf(shape);
  if (shape.rank() < 2 || m.rows != m.cols || out.tuple_shape(0).dims() != shape.dims() ||
      out.tuple_shape(1).element_type() != ElementType::kS32 || out.tuple_shape(1).ElementCount() != m.batch)
    return Error(inst.DebugName() +
                 ": potrf takes a batch of square matrices and returns (factor, s32 info per matrix)");
  auto run = [&](auto zero) -> Literal {
    using T = decltype(zero);
    const int64_t n = m.rows;
    std::vector<T> a = Read<T>(*operands[0]);
    std::vector<T> lower_a(n * n), l(n * n);
    std::vector<uint64_t> info(m.batch, 0);
    for (int64_t b = 0; b < m.batch; ++b) {
      T* matrix = a.data() + b * n * n;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j) lower_a[i * n + j] = lower ? matrix[i * n + j] : Conj(matrix[j * n + i]);
      info[b] = static_cast<uint64_t>(CholeskyLower(lower_a.data(), n, l.data()));
      const bool ok = info[b] == 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j) {
          const T v = ok ? l[i * n + j] : NaN<T>();
          if (lower) matrix[i * n + j] = v;
          else matrix[j * n + i] = Conj(v);
        }
    }
    std::vector<Literal> results;
    results.push_back(Store(out.tuple_shape(0), a));
    results.push_back(StoreInteger(out.tuple_shape(1), info));
    return Literal::MakeTuple(std::move(results));
  };
  if (IsComplex(shape.element_type())) return run(Complex());
  return run(0.0);
}

StatusOr<Literal> EvalLinalgOp(const HloInstruction& inst, const Operands& operands) {
  switch (inst.opcode()) {
    case HloOpcode::kCholesky:
      return EvalCholesky(inst, operands);
    case HloOpcode::kTriangularSolve:
      return EvalTriangularSolve(inst, operands);
    default:
      return UnsupportedOp(inst);
  }
}

}  // namespace kiln::hlo
