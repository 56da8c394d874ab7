// JAX's LAPACK custom calls (lapack_<t><op>_ffi, compiler/hlo/
// custom_call_targets.h) for the reference evaluator: getrf, geqrf,
// orgqr/ungqr, syevd/heevd and gesdd of real and complex matrices, computed
// in double (complex<double>) by textbook algorithms of their own (not
// LAPACK's), so that they check kiln's LAPACK thunk and XLA independently,
// and rounded once to the result type.
//
// Every call works on the logical matrices of its operand's two minor
// dimensions, batched over the others (XLA's column-major layouts are
// dropped). What each returns, as XLA's FFI kernels do:
//   getrf(a)     -> (LU, ipiv, info): partial pivoting by the first largest
//                   |re| + |im| (LAPACK's i?amax); ipiv 1-based; info =
//                   first zero pivot (1-based)
//   geqrf(a)     -> (R and reflectors, tau): LAPACK's Householder
//                   convention (?larfg: beta = -sign(re alpha) * norm, v(0) = 1,
//                   H = I - tau v v^H, applied as H^H)
//   orgqr(a,tau) -> Q = H(0) ... H(k-1), its first n columns
//   syevd(a)     -> (V, w, info): eigenvalues ascending (cyclic Jacobi)
//   gesdd(a)     -> (a, s, u, vt, info): singular values descending
//                   (one-sided Jacobi); vt = v^H
// Eigen- and singular vectors are unique only up to sign (phase) and, for
// repeated values, rotation: callers compare invariants or normalized
// vectors.
//
// JAX's GPU targets (cusolver_<op>_ffi, one per routine for every type)
// run the same routines in their own conventions: attributes {lower,
// full_matrices, compute_uv, transposed} (GpuSolverAttributes), gesvdj
// and gesvdp returning V rather than V^H, gesvd `transposed` returning vt
// before u, and cu_lu_pivots_to_permutation turning getrf's (0-based)
// pivots into a row permutation; XLA's __cusolver$cholesky is potrf with a
// workspace result between the factor and info.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "compiler/evaluator/contraction_util.h"
#include "compiler/evaluator/dense_matrix.h"
#include "compiler/evaluator/jacobi_decompositions.h"
#include "compiler/hlo/custom_call_targets.h"

namespace kiln::hlo {
namespace {

// LAPACK's pivot magnitude: |x| for reals, |re| + |im| (cabs1) for complex.
double PivotMagnitude(double x) { return std::abs(x); }
double PivotMagnitude(Complex x) { return std::abs(x.real()) + std::abs(x.imag()); }

// ---- getrf -----------------------------------------------------------------

// LU with partial pivoting in place; ipiv receives 1-based pivot rows.
template <typename T>
int64_t Getrf(DenseMatrix<T>& a, std::vector<uint64_t>& ipiv) {
  const int64_t k = std::min(a.rows, a.cols);
  int64_t info = 0;
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < a.rows; ++i)
      if (PivotMagnitude(a.at(i, j)) > PivotMagnitude(a.at(p, j))) p = i;
    ipiv[j] = static_cast<uint64_t>(p + 1);
    for (int64_t c = 0; c < a.cols; ++c) std::swap(a.at(j, c), a.at(p, c));
    const T pivot = a.at(j, j);
    if (pivot == T(0)) {
      if (info == 0) info = j + 1;
      continue;
    }
    for (int64_t i = j + 1; i < a.rows; ++i) {
      const T l = a.at(i, j) /= pivot;
      for (int64_t c = j + 1; c < a.cols; ++c) a.at(i, c) -= l * a.at(j, c);
    }
  }
  return info;
}

// ---- geqrf / orgqr ---------------------------------------------------------

// Applies H = I - tau v v^H (v(0) = 1, v(i) = a(i, j) below row j) to the
// rows j.. of column c of `x`.
template <typename T>
void ApplyReflector(const DenseMatrix<T>& a, int64_t j, T tau, DenseMatrix<T>& x, int64_t c) {
  T w = x.at(j, c);
  for (int64_t i = j + 1; i < x.rows; ++i) w += Conj(a.at(i, j)) * x.at(i, c);
  x.at(j, c) -= tau * w;
  for (int64_t i = j + 1; i < x.rows; ++i) x.at(i, c) -= tau * w * a.at(i, j);
}

// Householder QR in place: R on and above the diagonal, reflector j's
// vector (implicit 1 first) below it; returns tau.
template <typename T>
std::vector<T> Geqrf(DenseMatrix<T>& a) {
  const int64_t k = std::min(a.rows, a.cols);
  std::vector<T> tau(k, T(0));
  for (int64_t j = 0; j < k; ++j) {
    double xnorm = 0;
    for (int64_t i = j + 1; i < a.rows; ++i) xnorm = std::hypot(xnorm, std::abs(a.at(i, j)));
    const T alpha = a.at(j, j);
    const double re = std::real(alpha), im = std::imag(alpha);
    if (xnorm == 0 && im == 0) continue;  // H = I, tau = 0
    const double beta = -std::copysign(std::hypot(std::hypot(re, im), xnorm), re);
    if constexpr (std::is_same_v<T, Complex>) tau[j] = Complex((beta - re) / beta, -im / beta);
    else tau[j] = (beta - re) / beta;
    const T scale = T(1) / (alpha - beta);
    for (int64_t i = j + 1; i < a.rows; ++i) a.at(i, j) *= scale;
    a.at(j, j) = beta;
    // The columns right of j get H^H.
    for (int64_t c = j + 1; c < a.cols; ++c) ApplyReflector(a, j, Conj(tau[j]), a, c);
  }
  return tau;
}

// Q = H(0) ... H(k-1), its first a.cols columns, from the reflectors in the
// first k columns of `a`.
template <typename T>
DenseMatrix<T> Orgqr(const DenseMatrix<T>& a, const std::vector<T>& tau) {
  DenseMatrix<T> q(a.rows, a.cols);
  for (int64_t i = 0; i < std::min(a.rows, a.cols); ++i) q.at(i, i) = 1;
  for (int64_t j = static_cast<int64_t>(tau.size()) - 1; j >= 0; --j)
    for (int64_t c = 0; c < q.cols; ++c) ApplyReflector(a, j, tau[j], q, c);
  return q;
}

// ---- the calls -------------------------------------------------------------

Status Malformed(const HloInstruction& call, const char* what) {
  return Error(call.DebugName() + ": malformed " + call.GetString("custom_call_target") + " call (" + what + ")");
}

// The i-th result's shape (the result itself when it is an array).
const Shape& ResultShape(const HloInstruction& call, int64_t i) {
  return call.shape().IsTuple() ? call.shape().tuple_shape(i) : call.shape();
}

// The call's results, each checked to hold what the routine computed (a
// malformed call is an error, not a store past a literal's end).
class Results {
 public:
  explicit Results(const HloInstruction& call) : call_(call) {}
  template <typename T>
  void Add(const Shape& shape, const std::vector<T>& values) {
    if (!status_.ok()) return;
    if (!shape.IsArray() || shape.ElementCount() != static_cast<int64_t>(values.size())) {
      status_ = Malformed(call_, "result sizes");
      return;
    }
    if constexpr (std::is_same_v<T, double>) literals_.push_back(StoreReal(shape, values));
    else if constexpr (std::is_same_v<T, Complex>) literals_.push_back(StoreComplex(shape, values));
    else literals_.push_back(StoreInteger(shape, values));
  }
  StatusOr<Literal> Tuple() {
    if (!status_.ok()) return status_;
    return Literal::MakeTuple(std::move(literals_));
  }
  StatusOr<Literal> Single() {
    if (!status_.ok()) return status_;
    return std::move(literals_.front());
  }

 private:
  const HloInstruction& call_;
  std::vector<Literal> literals_;
  Status status_ = Status::Ok();
};

template <typename T>
std::vector<T> ReadAs(const Literal& lit) {
  if constexpr (std::is_same_v<T, Complex>) return ReadAsComplex(lit, ElementType::kC128);
  else return ReadAsReal(lit, ElementType::kF64);
}

template <typename T>
StatusOr<Literal> EvalGetrf(const HloInstruction& call, const std::vector<T>& in, const MatrixBatchShape& b) {
  const int64_t k = std::min(b.rows, b.cols);
  std::vector<T> lu(in.size());
  std::vector<uint64_t> ipiv(b.batch * k), info(b.batch);
  for (int64_t i = 0; i < b.batch; ++i) {
    DenseMatrix<T> a = TakeMatrix(in, i, b.rows, b.cols);
    std::vector<uint64_t> piv(k);
    info[i] = static_cast<uint64_t>(Getrf(a, piv));
    std::copy(piv.begin(), piv.end(), ipiv.begin() + i * k);
    PutMatrix(lu, i, a);
  }
  Results r(call);
  r.Add(ResultShape(call, 0), lu);
  r.Add(ResultShape(call, 1), ipiv);
  r.Add(ResultShape(call, 2), info);
  return r.Tuple();
}

template <typename T>
StatusOr<Literal> EvalGeqrf(const HloInstruction& call, const std::vector<T>& in, const MatrixBatchShape& b) {
  const int64_t k = std::min(b.rows, b.cols);
  std::vector<T> qr(in.size()), taus(b.batch * k);
  for (int64_t i = 0; i < b.batch; ++i) {
    DenseMatrix<T> a = TakeMatrix(in, i, b.rows, b.cols);
    std::vector<T> tau = Geqrf(a);
    std::copy(tau.begin(), tau.end(), taus.begin() + i * k);
    PutMatrix(qr, i, a);
  }
  Results r(call);
  r.Add(ResultShape(call, 0), qr);
  r.Add(ResultShape(call, 1), taus);
  return r.Tuple();
}

template <typename T>
StatusOr<Literal> EvalOrgqr(const HloInstruction& call, const Operands& operands, const std::vector<T>& in,
                            const MatrixBatchShape& b) {
  const Shape& tau_shape = operands[1]->shape();
  if (tau_shape.rank() < 1) return Malformed(call, "tau");
  const int64_t k = tau_shape.dim(tau_shape.rank() - 1);
  if (k > b.cols || b.cols > b.rows || tau_shape.ElementCount() != b.batch * k)
    return Malformed(call, "tau must hold k <= n <= m values per matrix");
  std::vector<T> taus = ReadAs<T>(*operands[1]), q(in.size());
  for (int64_t i = 0; i < b.batch; ++i) {
    std::vector<T> tau(taus.begin() + i * k, taus.begin() + (i + 1) * k);
    PutMatrix(q, i, Orgqr(TakeMatrix(in, i, b.rows, b.cols), tau));
  }
  Results r(call);
  r.Add(call.shape(), q);
  return r.Single();
}

template <typename T>
StatusOr<Literal> EvalSyevd(const HloInstruction& call, const std::vector<T>& in, const MatrixBatchShape& b, char uplo) {
  if (b.rows != b.cols) return Malformed(call, "a must be square");
  const int64_t n = b.rows;
  std::vector<T> vectors(in.size());
  std::vector<double> values(b.batch * n);
  for (int64_t i = 0; i < b.batch; ++i) {
    DenseMatrix<T> a = TakeMatrix(in, i, n, n);
    // Only the uplo triangle is read; the diagonal's real part.
    for (int64_t r = 0; r < n; ++r) {
      a.at(r, r) = std::real(a.at(r, r));
      for (int64_t c = 0; c < r; ++c) {
        if (uplo == 'L') a.at(c, r) = Conj(a.at(r, c));
        else a.at(r, c) = Conj(a.at(c, r));
      }
    }
    std::vector<double> w;
    DenseMatrix<T> v = HermitianEigen(a, w);
    std::copy(w.begin(), w.end(), values.begin() + i * n);
    PutMatrix(vectors, i, v);
  }
  Results r(call);
  r.Add(ResultShape(call, 0), vectors);
  r.Add(ResultShape(call, 1), values);
  r.Add(ResultShape(call, 2), std::vector<uint64_t>(b.batch, 0));
  return r.Tuple();
}

template <typename T>
StatusOr<Literal> EvalGesdd(const HloInstruction& call, const std::vector<T>& in, const MatrixBatchShape& b) {
  KILN_ASSIGN_OR_RETURN(LapackAttributes attrs, ReadLapackAttributes(call));
  const int64_t m = b.rows, n = b.cols, k = std::min(m, n);
  const bool full = attrs.mode == 'A', vectors = attrs.mode != 'N';
  if (attrs.mode != 'A' && attrs.mode != 'S' && attrs.mode != 'N') return Malformed(call, "mode must be A, S or N");
  const Shape& u_shape = ResultShape(call, 2);
  const Shape& vt_shape = ResultShape(call, 3);
  const int64_t u_cols = full ? m : k, vt_rows = full ? n : k;
  if (vectors && (u_shape.ElementCount() != b.batch * m * u_cols || vt_shape.ElementCount() != b.batch * vt_rows * n))
    return Malformed(call, "u or vt");
  std::vector<double> s(b.batch * k);
  std::vector<T> u(u_shape.ElementCount(), T(0)), vt(vt_shape.ElementCount(), T(0));
  for (int64_t i = 0; i < b.batch; ++i) {
    SingularValueDecomposition<T> svd = FullSvd(TakeMatrix(in, i, m, n));
    std::copy(svd.s.begin(), svd.s.end(), s.begin() + i * k);
    if (!vectors) continue;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < u_cols; ++c) u[(i * m + r) * u_cols + c] = svd.u.at(r, c);
    for (int64_t r = 0; r < vt_rows; ++r)
      for (int64_t c = 0; c < n; ++c) vt[(i * vt_rows + r) * n + c] = Conj(svd.v.at(c, r));
  }
  Results r(call);
  r.Add(ResultShape(call, 0), in);  // LAPACK's scratch; kiln keeps a
  r.Add(ResultShape(call, 1), s);
  r.Add(u_shape, u);
  r.Add(vt_shape, vt);
  r.Add(ResultShape(call, 4), std::vector<uint64_t>(b.batch, 0));
  return r.Tuple();
}

template <typename T>
StatusOr<Literal> EvalRoutine(const HloInstruction& call, LapackOp op, const Operands& operands) {
  const MatrixBatchShape b(operands[0]->shape());
  const std::vector<T> in = ReadAs<T>(*operands[0]);
  switch (op) {
    case LapackOp::kGetrf: return EvalGetrf(call, in, b);
    case LapackOp::kGeqrf: return EvalGeqrf(call, in, b);
    case LapackOp::kOrgqr: return EvalOrgqr(call, operands, in, b);
    case LapackOp::kSyevd: {
      KILN_ASSIGN_OR_RETURN(LapackAttributes attrs, ReadLapackAttributes(call));
      return EvalSyevd(call, in, b, attrs.uplo);
    }
    case LapackOp::kGesdd: return EvalGesdd(call, in, b);
    case LapackOp::kPotrf: break;
  }
  return UnsupportedCustomCallTarget(call, "the reference evaluator");
}

// Result counts per routine (getrf 3, geqrf 2, orgqr 1 (an array), syevd 3, gesdd 5).
bool ResultCountMatches(const HloInstruction& call, LapackOp op) {
  const Shape& s = call.shape();
  switch (op) {
    case LapackOp::kOrgqr: return s.IsArray();
    case LapackOp::kGeqrf: return s.IsTuple() && s.tuple_size() == 2;
    case LapackOp::kGetrf:
    case LapackOp::kSyevd: return s.IsTuple() && s.tuple_size() == 3;
    case LapackOp::kGesdd: return s.IsTuple() && s.tuple_size() == 5;
    case LapackOp::kPotrf: return s.IsTuple() && s.tuple_size() == 2;
  }
  return false;
}

// ---- JAX's cuSOLVER targets --------------------------------------------------

// cusolver_gesvd_ffi, cusolver_gesvdj_ffi and cusolver_gesvdp_ffi: (a, s,
// u, v-or-vt, info). gesvd's result 3 is V^H, gesvdj's and gesvdp's V;
// gesvd `transposed` (a wide matrix, which cuSOLVER factors as A^T) swaps
// results 2 and 3 (vt first). Without compute_uv the vector results are
// zeros here (cuSOLVER leaves them unset).
template <typename T>
StatusOr<Literal> EvalGpuSvd(const HloInstruction& call, const std::vector<T>& in, const MatrixBatchShape& b,
                             const GpuSolverAttributes& attrs) {
  const std::string target = call.GetString("custom_call_target");
  const bool jacobi = target == "cusolver_gesvdj_ffi" || target == "cusolver_gesvdp_ffi";
  const int64_t m = b.rows, n = b.cols, k = std::min(m, n);
  const int64_t u_index = attrs.transposed && !jacobi ? 3 : 2, v_index = 5 - u_index;
  const Shape& u_shape = ResultShape(call, u_index);
  const Shape& v_shape = ResultShape(call, v_index);
  const int64_t u_cols = attrs.full_matrices ? m : k, v_count = attrs.full_matrices ? n : k;
  if (attrs.compute_uv &&
      (u_shape.ElementCount() != b.batch * m * u_cols || v_shape.ElementCount() != b.batch * v_count * n))
    return Malformed(call, "u or v");
  std::vector<double> s(b.batch * k);
  std::vector<T> u(u_shape.ElementCount(), T(0)), v(v_shape.ElementCount(), T(0));
  for (int64_t i = 0; i < b.batch; ++i) {
    SingularValueDecomposition<T> svd = FullSvd(TakeMatrix(in, i, m, n));
    std::copy(svd.s.begin(), svd.s.end(), s.begin() + i * k);
    if (!attrs.compute_uv) continue;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < u_cols; ++c) u[(i * m + r) * u_cols + c] = svd.u.at(r, c);
    for (int64_t j = 0; j < v_count; ++j)  // singular vector j of V
      for (int64_t c = 0; c < n; ++c) {
        if (jacobi) v[(i * n + c) * v_count + j] = svd.v.at(c, j);  // V: n x v_count
        else v[(i * v_count + j) * n + c] = Conj(svd.v.at(c, j));   // V^H: v_count x n
      }
  }
  Results r(call);
  r.Add(ResultShape(call, 0), in);  // cuSOLVER's scratch; kiln keeps a
  r.Add(ResultShape(call, 1), s);
  if (u_index == 2) r.Add(u_shape, u);
  r.Add(v_shape, v);
  if (u_index == 3) r.Add(u_shape, u);
  r.Add(ResultShape(call, 4), std::vector<uint64_t>(b.batch, 0));
  return r.Tuple();
}

// cu_lu_pivots_to_permutation: the identity permutation of each row's m
// entries with the 0-based swaps (i, pivots[i]) applied in order, those
// out of [0, m) skipped (jaxlib's LuPivotsToPermutationKernel).
StatusOr<Literal> EvalPivotsToPermutation(const HloInstruction& call, const Operands& operands) {
  const Shape& in = operands[0]->shape();
  const Shape& out = call.shape();
  if (operands.size() != 1 || !in.IsArray() || !out.IsArray() || in.rank() < 1 || in.rank() != out.rank())
    return Malformed(call, "pivots and permutation");
  const int64_t k = in.dim(in.rank() - 1), m = out.dim(out.rank() - 1);
  const int64_t rows = m == 0 ? 0 : out.ElementCount() / m;
  if (k * rows != in.ElementCount()) return Malformed(call, "batch dimensions");
  std::vector<uint64_t> perm(rows * m);
  for (int64_t r = 0; r < rows; ++r) {
    uint64_t* p = perm.data() + r * m;
    for (int64_t i = 0; i < m; ++i) p[i] = static_cast<uint64_t>(i);
    for (int64_t i = 0; i < k && i < m; ++i) {
      const int64_t j = operands[0]->GetS64(r * k + i);
      if (j >= 0 && j < m) std::swap(p[i], p[j]);
    }
  }
  return StoreInteger(out, perm);
}

StatusOr<Literal> EvalGpuSolverCall(const HloInstruction& call, LapackOp op, const Operands& operands) {
  const std::string target = call.GetString("custom_call_target");
  if (target == "cu_lu_pivots_to_permutation") return EvalPivotsToPermutation(call, operands);
  KILN_ASSIGN_OR_RETURN(GpuSolverAttributes attrs, ReadGpuSolverAttributes(call));
  const Shape& a = operands[0]->shape();
  if (op == LapackOp::kPotrf) {
    const Shape& s = call.shape();
    if (target != "__cusolver$cholesky") return EvalPotrf(call, operands, attrs.lower, s);
    if (!s.IsTuple() || s.tuple_size() != 3) return Malformed(call, "results");
    KILN_ASSIGN_OR_RETURN(Literal r,
                          EvalPotrf(call, operands, attrs.lower, Shape::Tuple({s.tuple_shape(0), s.tuple_shape(2)})));
    std::vector<Literal> parts;
    parts.push_back(std::move(r.mutable_elements()[0]));
    parts.push_back(Literal(s.tuple_shape(1)));  // the workspace: zeros
    parts.push_back(std::move(r.mutable_elements()[1]));
    return Literal::MakeTuple(std::move(parts));
  }
  if (op == LapackOp::kSyevd || op == LapackOp::kGesdd) {
    const MatrixBatchShape b(a);
    if (IsComplex(a.element_type())) {
      const std::vector<Complex> in = ReadAs<Complex>(*operands[0]);
      if (op == LapackOp::kSyevd) return EvalSyevd(call, in, b, attrs.lower ? 'L' : 'U');
      return EvalGpuSvd(call, in, b, attrs);
    }
    const std::vector<double> in = ReadAs<double>(*operands[0]);
    if (op == LapackOp::kSyevd) return EvalSyevd(call, in, b, attrs.lower ? 'L' : 'U');
    return EvalGpuSvd(call, in, b, attrs);
  }
  // getrf, geqrf, orgqr: LAPACK's results.
  if (IsComplex(a.element_type())) return EvalRoutine<Complex>(call, op, operands);
  return EvalRoutine<double>(call, op, operands);
}

}  // namespace

StatusOr<Literal> EvalLapackCall(const HloInstruction& call, const Operands& operands) {
  std::optional<CustomCallTarget> target = FindCustomCallTarget(call.GetString("custom_call_target"));
  if (!target || (target->handler != CustomCallHandler::kLapackEmitter &&
                  target->handler != CustomCallHandler::kCholeskyEmitter &&
                  target->handler != CustomCallHandler::kGpuSolverRewriter))
    return UnsupportedCustomCallTarget(call, "the reference evaluator");
  const size_t operand_count = target->lapack_op == LapackOp::kOrgqr ? 2 : 1;
  if (target->handler == CustomCallHandler::kGpuSolverRewriter) {
    const bool xla_cholesky = call.GetString("custom_call_target") == "__cusolver$cholesky";
    if (call.GetString("custom_call_target") != "cu_lu_pivots_to_permutation" &&
        (operands.size() != operand_count || operands[0]->shape().rank() < 2 ||
         !(xla_cholesky ? call.shape().IsTuple() && call.shape().tuple_size() == 3
                        : ResultCountMatches(call, target->lapack_op)) ||
         ResultShape(call, 0).dims() != operands[0]->shape().dims()))
      return Malformed(call, "operands or results");
    return EvalGpuSolverCall(call, target->lapack_op, operands);
  }
  if (operands.size() != operand_count || operands[0]->shape().rank() < 2 ||
      !ResultCountMatches(call, target->lapack_op) ||
      ResultShape(call, 0).dims() != operands[0]->shape().dims())
    return Malformed(call, "operands or results");
  if (target->lapack_op == LapackOp::kPotrf) {
    bool lower = call.GetBool("lower", false);  // CholeskyRewriter's form
    if (call.GetString("custom_call_target") != "__kiln$cholesky") {
      KILN_ASSIGN_OR_RETURN(LapackAttributes attrs, ReadLapackAttributes(call));
      lower = attrs.uplo == 'L';
    }
    return EvalPotrfCall(call, operands, lower);
  }
  if (IsComplex(operands[0]->shape().element_type())) return EvalRoutine<Complex>(call, target->lapack_op, operands);
  return EvalRoutine<double>(call, target->lapack_op, operands);
}

}  // namespace kiln::hlo
