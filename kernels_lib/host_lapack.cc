// Host LAPACK for LinalgThunk; see host_lapack.h.
#include "kernels_lib/host_lapack.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "thunks/linalg_geometry.h"
#include "kernels_lib/openblas_kernels.h"

// LAPACK's Fortran entry points in libopenblas (reference LAPACK's
// signatures; trailing size_t arguments are gfortran's hidden lengths of
// the character arguments). Complex arguments are std::complex, whose
// layout is Fortran's COMPLEX.
using C64 = std::complex<float>;
using C128 = std::complex<double>;
extern "C" {
#define KILN_GETRF(p, T) void p##getrf_(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
#define KILN_GEQRF(p, T) \
  void p##geqrf_(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info);
#define KILN_ORGQR(name, T)                                                                                  \
  void name(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work, const int* lwork, \
            int* info);
KILN_GETRF(s, float) KILN_GETRF(d, double) KILN_GETRF(c, C64) KILN_GETRF(z, C128)
KILN_GEQRF(s, float) KILN_GEQRF(d, double) KILN_GEQRF(c, C64) KILN_GEQRF(z, C128)
KILN_ORGQR(sorgqr_, float) KILN_ORGQR(dorgqr_, double) KILN_ORGQR(cungqr_, C64) KILN_ORGQR(zungqr_, C128)
#undef KILN_GETRF
#undef KILN_GEQRF
#undef KILN_ORGQR
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void cheevd_(const char* jobz, const char* uplo, const int* n, C64* a, const int* lda, float* w, C64* work,
             const int* lwork, float* rwork, const int* lrwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void zheevd_(const char* jobz, const char* uplo, const int* n, C128* a, const int* lda, double* w, C128* work,
             const int* lwork, double* rwork, const int* lrwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             size_t);
void cgesdd_(const char* jobz, const int* m, const int* n, C64* a, const int* lda, float* s, C64* u, const int* ldu,
             C64* vt, const int* ldvt, C64* work, const int* lwork, float* rwork, int* iwork, int* info, size_t);
void zgesdd_(const char* jobz, const int* m, const int* n, C128* a, const int* lda, double* s, C128* u,
             const int* ldu, C128* vt, const int* ldvt, C128* work, const int* lwork, double* rwork, int* iwork,
             int* info, size_t);
}

namespace kiln::kernels {
namespace {

namespace th = ::kiln::thunks;

// The LAPACK routines of element type T, with one signature for real and
// complex types (the real eigen- and singular value routines take no rwork).
template <typename T>
struct Lapack;

template <typename T, typename R>
struct RealLapack {
  using Real = R;
  static constexpr bool kSingle = std::is_same_v<R, float>;
  static void Getrf(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info) {
    if constexpr (kSingle) sgetrf_(m, n, a, lda, ipiv, info);
    else dgetrf_(m, n, a, lda, ipiv, info);
  }
  static void Geqrf(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info) {
    if constexpr (kSingle) sgeqrf_(m, n, a, lda, tau, work, lwork, info);
    else dgeqrf_(m, n, a, lda, tau, work, lwork, info);
  }
  static void Orgqr(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work,
                    const int* lwork, int* info) {
    if constexpr (kSingle) sorgqr_(m, n, k, a, lda, tau, work, lwork, info);
    else dorgqr_(m, n, k, a, lda, tau, work, lwork, info);
  }
  static void Eig(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, R* w, T* work,
                  const int* lwork, R*, const int*, int* iwork, const int* liwork, int* info) {
    if constexpr (kSingle) ssyevd_(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, 1, 1);
    else dsyevd_(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, 1, 1);
  }
  static void Gesdd(const char* jobz, const int* m, const int* n, T* a, const int* lda, R* s, T* u, const int* ldu,
                    T* vt, const int* ldvt, T* work, const int* lwork, R*, int* iwork, int* info) {
    if constexpr (kSingle) sgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, 1);
    else dgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, 1);
  }
};

template <typename T, typename R>
struct ComplexLapack {
  using Real = R;
  static constexpr bool kSingle = std::is_same_v<R, float>;
  static void Getrf(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info) {
    if constexpr (kSingle) cgetrf_(m, n, a, lda, ipiv, info);
    else zgetrf_(m, n, a, lda, ipiv, info);
  }
  static void Geqrf(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info) {
    if constexpr (kSingle) cgeqrf_(m, n, a, lda, tau, work, lwork, info);
    else zgeqrf_(m, n, a, lda, tau, work, lwork, info);
  }
  static void Orgqr(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work,
                    const int* lwork, int* info) {
    if constexpr (kSingle) cungqr_(m, n, k, a, lda, tau, work, lwork, info);
    else zungqr_(m, n, k, a, lda, tau, work, lwork, info);
  }
  static void Eig(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, R* w, T* work,
                  const int* lwork, R* rwork, const int* lrwork, int* iwork, const int* liwork, int* info) {
    if constexpr (kSingle) cheevd_(jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, info, 1, 1);
    else zheevd_(jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, info, 1, 1);
  }
  static void Gesdd(const char* jobz, const int* m, const int* n, T* a, const int* lda, R* s, T* u, const int* ldu,
                    T* vt, const int* ldvt, T* work, const int* lwork, R* rwork, int* iwork, int* info) {
    if constexpr (kSingle) cgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, 1);
    else zgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, 1);
  }
};

template <> struct Lapack<float> : RealLapack<float, float> {};
template <> struct Lapack<double> : RealLapack<double, double> {};
template <> struct Lapack<C64> : ComplexLapack<C64, float> {};
template <> struct Lapack<C128> : ComplexLapack<C128, double> {};

// Row-major rows x cols at `src` -> column-major (leading dimension rows).
template <typename T>
void ToColumnMajor(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
}

template <typename T>
void ToRowMajor(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[j * rows + i];
}

// LAPACK's workspace query answer (the real part of work[0] after an
// lwork = -1 call).
template <typename T>
int WorkSize(T answer) {
  return std::max(1, static_cast<int>(std::real(answer)));
}

// One batch's matrices and the per-matrix slices of every result.
template <typename T>
struct Call {
  const th::LinalgThunk& l;
  const th::LinalgGeometry& g;
  const LinalgBuffers& buffers;
  int m, n, k;

  T* A(int64_t b) const { return static_cast<T*>(buffers.a) + b * g.a_elements; }
  template <typename R>
  R* Result(size_t i, int64_t b) const {
    return static_cast<R*>(buffers.results[i]) + b * g.results[i].elements;
  }
};

template <typename T>
void Getrf(const Call<T>& c, int64_t b, std::vector<T>& work) {
  const int lda = std::max(1, c.m);
  Lapack<T>::Getrf(&c.m, &c.n, work.data(), &lda, c.template Result<int>(0, b), c.template Result<int>(1, b));
}

template <typename T>
void Geqrf(const Call<T>& c, int64_t b, std::vector<T>& work) {
  const int lda = std::max(1, c.m);
  T* tau = c.template Result<T>(0, b);
  int info = 0, query = -1;
  T size = 0;
  Lapack<T>::Geqrf(&c.m, &c.n, work.data(), &lda, tau, &size, &query, &info);
  const int lwork = WorkSize(size);
  std::vector<T> scratch(lwork);
  Lapack<T>::Geqrf(&c.m, &c.n, work.data(), &lda, tau, scratch.data(), &lwork, &info);
}

template <typename T>
void Orgqr(const Call<T>& c, int64_t b, std::vector<T>& work) {
  const int lda = std::max(1, c.m), reflectors = static_cast<int>(c.l.k);
  const T* tau = static_cast<const T*>(c.buffers.tau) + b * c.l.k;
  int info = 0, query = -1;
  T size = 0;
  Lapack<T>::Orgqr(&c.m, &c.n, &reflectors, work.data(), &lda, tau, &size, &query, &info);
  const int lwork = WorkSize(size);
  std::vector<T> scratch(lwork);
  Lapack<T>::Orgqr(&c.m, &c.n, &reflectors, work.data(), &lda, tau, scratch.data(), &lwork, &info);
}

template <typename T>
void Syevd(const Call<T>& c, int64_t b, std::vector<T>& work) {
  using R = typename Lapack<T>::Real;
  // The work matrix is the logical one, so the logical triangle is LAPACK's.
  const char jobz = c.l.mode, uplo = c.l.lower ? 'L' : 'U';
  const int lda = std::max(1, c.n);
  R* w = c.template Result<R>(0, b);
  int* info = c.template Result<int>(1, b);
  int query = -1, isize = 0;
  T size = 0;
  R rsize = 0;
  Lapack<T>::Eig(&jobz, &uplo, &c.n, work.data(), &lda, w, &size, &query, &rsize, &query, &isize, &query, info);
  const int lwork = WorkSize(size), lrwork = WorkSize(rsize), liwork = std::max(1, isize);
  std::vector<T> scratch(lwork);
  std::vector<R> rwork(lrwork);
  std::vector<int> iwork(liwork);
  Lapack<T>::Eig(&jobz, &uplo, &c.n, work.data(), &lda, w, scratch.data(), &lwork, rwork.data(), &lrwork,
                 iwork.data(), &liwork, info);
}

// gesdd's rwork (complex types): LAPACK documents the size, it has no query.
int64_t GesddRealWork(char jobz, int64_t m, int64_t n) {
  const int64_t mn = std::min(m, n), mx = std::max(m, n);
  if (jobz == 'N') return std::max<int64_t>(1, 7 * mn);
  return std::max<int64_t>(1, std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn));
}

template <typename T>
void Gesdd(const Call<T>& c, int64_t b, std::vector<T>& work) {
  using R = typename Lapack<T>::Real;
  const char jobz = c.l.mode;
  const bool vectors = jobz != 'N';
  const int lda = std::max(1, c.m);
  const int ldu = std::max<int>(1, static_cast<int>(c.g.u_rows));
  const int ldvt = std::max<int>(1, static_cast<int>(c.g.vt_rows));
  R* s = c.template Result<R>(0, b);
  int* info = c.template Result<int>(3, b);
  std::vector<T> u(vectors ? c.g.u_rows * c.g.u_cols : 1), vt(vectors ? c.g.vt_rows * c.g.vt_cols : 1);
  std::vector<int> iwork(std::max(1, 8 * c.k));
  std::vector<R> rwork(std::is_same_v<T, R> ? 1 : GesddRealWork(jobz, c.m, c.n));
  int query = -1;
  T size = 0;
  Lapack<T>::Gesdd(&jobz, &c.m, &c.n, work.data(), &lda, s, u.data(), &ldu, vt.data(), &ldvt, &size, &query,
                   rwork.data(), iwork.data(), info);
  const int lwork = WorkSize(size);
  std::vector<T> scratch(lwork);
  Lapack<T>::Gesdd(&jobz, &c.m, &c.n, work.data(), &lda, s, u.data(), &ldu, vt.data(), &ldvt, scratch.data(), &lwork,
                   rwork.data(), iwork.data(), info);
  T* u_out = c.template Result<T>(1, b);
  T* vt_out = c.template Result<T>(2, b);
  if (!vectors) {
    // XLA's placeholders: defined values rather than stale memory.
    std::fill_n(u_out, c.g.results[1].elements, T(0));
    std::fill_n(vt_out, c.g.results[2].elements, T(0));
    return;
  }
  ToRowMajor(u.data(), c.g.u_rows, c.g.u_cols, u_out);
  ToRowMajor(vt.data(), c.g.vt_rows, c.g.vt_cols, vt_out);
}

template <typename T>
void RunBatches(const Call<T>& c) {
  std::vector<T> work(std::max<int64_t>(1, c.g.a_elements));
  for (int64_t b = 0; b < c.l.batch; ++b) {
    ToColumnMajor(c.A(b), c.m, c.n, work.data());
    switch (c.l.op) {
      case th::LinalgOp::kGetrf: Getrf(c, b, work); break;
      case th::LinalgOp::kGeqrf: Geqrf(c, b, work); break;
      case th::LinalgOp::kOrgqr: Orgqr(c, b, work); break;
      case th::LinalgOp::kSyevd: Syevd(c, b, work); break;
      case th::LinalgOp::kGesdd: Gesdd(c, b, work); break;
    }
    ToRowMajor(work.data(), c.m, c.n, c.A(b));
  }
}

bool FitsInt(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max() / 8; }

}  // namespace

Status HostLinalg(const th::LinalgThunk& l, const LinalgBuffers& buffers) {
  EnsureOpenBlasKernelsMatchCpu();
  KILN_ASSIGN_OR_RETURN(th::LinalgGeometry g, th::GetLinalgGeometry(l));
  if (buffers.results.size() != g.results.size() || (l.op == th::LinalgOp::kOrgqr && !buffers.tau))
    return Error("host " + std::string(th::LinalgOpName(l.op)) + ": wrong number of buffers");
  for (int64_t d : {l.m, l.n, l.k, g.a_elements, g.u_rows * g.u_cols, g.vt_rows * g.vt_cols})
    if (!FitsInt(d))
      return Error("host " + std::string(th::LinalgOpName(l.op)) + ": dimension " + std::to_string(d) +
                   " is outside LAPACK's int range");
  if (l.batch == 0) return Status::Ok();
  const int m = static_cast<int>(l.m), n = static_cast<int>(l.n), k = std::min(m, n);
  switch (l.type) {
    case ElementType::kF32: RunBatches(Call<float>{l, g, buffers, m, n, k}); break;
    case ElementType::kF64: RunBatches(Call<double>{l, g, buffers, m, n, k}); break;
    case ElementType::kC64: RunBatches(Call<C64>{l, g, buffers, m, n, k}); break;
    default: RunBatches(Call<C128>{l, g, buffers, m, n, k}); break;
  }
  return Status::Ok();
}

}  // namespace kiln::kernels
