// CUDA LinalgThunk through cuSOLVER; see cuda_lapack.h.
#include "kernels_lib/cuda_lapack.h"

#include <cuComplex.h>

#include <algorithm>
#include <limits>
#include <string>

#include "thunks/linalg_geometry.h"

namespace kiln::kernels {
namespace {

namespace th = ::kiln::thunks;

// The entry points of one element type T (R: its real type), called with
// the same arguments for all four.
template <typename T>
struct Api;

#define KILN_CUDA_LAPACK_API(T, R_, P, ORGQR, SYEVD, ONE)                                                          \
  template <>                                                                                                      \
  struct Api<T> {                                                                                                  \
    using R = R_;                                                                                                  \
    static constexpr const char* kGetrf = "cusolverDn" #P "getrf";                                                 \
    static constexpr const char* kGeqrf = "cusolverDn" #P "geqrf";                                                 \
    static constexpr const char* kOrgqr = "cusolverDn" #P #ORGQR;                                                  \
    static constexpr const char* kSyevd = "cusolverDn" #P #SYEVD;                                                  \
    static constexpr const char* kGesvd = "cusolverDn" #P "gesvd";                                                 \
    static constexpr const char* kGeam = "cublas" #P "geam";                                                       \
    static cusolverStatus_t GetrfSize(const CusolverLibrary& l, cusolverDnHandle_t h, int m, int n, T* a, int lda, \
                                      int* lwork) {                                                                \
      return l.cusolverDn##P##getrf_bufferSize(h, m, n, a, lda, lwork);                                            \
    }                                                                                                              \
    static cusolverStatus_t Getrf(const CusolverLibrary& l, cusolverDnHandle_t h, int m, int n, T* a, int lda,     \
                                  T* work, int* ipiv, int* info) {                                                 \
      return l.cusolverDn##P##getrf(h, m, n, a, lda, work, ipiv, info);                                            \
    }                                                                                                              \
    static cusolverStatus_t GeqrfSize(const CusolverLibrary& l, cusolverDnHandle_t h, int m, int n, T* a, int lda, \
                                      int* lwork) {                                                                \
      return l.cusolverDn##P##geqrf_bufferSize(h, m, n, a, lda, lwork);                                            \
    }                                                                                                              \
    static cusolverStatus_t Geqrf(const CusolverLibrary& l, cusolverDnHandle_t h, int m, int n, T* a, int lda,     \
                                  T* tau, T* work, int lwork, int* info) {                                         \
      return l.cusolverDn##P##geqrf(h, m, n, a, lda, tau, work, lwork, info);                                      \
    }                                                                                                              \
    static cusolverStatus_t OrgqrSize(const CusolverLibrary& l, cusolverDnHandle_t h, int m, int n, int k, T* a,   \
                                      int lda, const T* tau, int* lwork) {                                         \
      return l.cusolverDn##P##ORGQR##_bufferSize(h, m, n, k, a, lda, tau, lwork);                                  \
    }                                                                                                              \
    static cusolverStatus_t Orgqr(const CusolverLibrary& l, cusolverDnHandle_t h, int m, int n, int k, T* a,       \
                                  int lda, const T* tau, T* work, int lwork, int* info) {                          \
      return l.cusolverDn##P##ORGQR(h, m, n, k, a, lda, tau, work, lwork, info);                                   \
    }                                                                                                              \
    static cusolverStatus_t SyevdSize(const CusolverLibrary& l, cusolverDnHandle_t h, cusolverEigMode_t jobz,      \
                                      cublasFillMode_t uplo, int n, T* a, int lda, R* w, int* lwork) {             \
      return l.cusolverDn##P##SYEVD##_bufferSize(h, jobz, uplo, n, a, lda, w, lwork);                              \
    }                                                                                                              \
    static cusolverStatus_t Syevd(const CusolverLibrary& l, cusolverDnHandle_t h, cusolverEigMode_t jobz,          \
                                  cublasFillMode_t uplo, int n, T* a, int lda, R* w, T* work, int lwork,           \
                                  int* info) {                                                                     \
      return l.cusolverDn##P##SYEVD(h, jobz, uplo, n, a, lda, w, work, lwork, info);                               \
    }                                                                                                              \
    static cusolverStatus_t GesvdSize(const CusolverLibrary& l, cusolverDnHandle_t h, int m, int n, int* lwork) {  \
      return l.cusolverDn##P##gesvd_bufferSize(h, m, n, lwork);                                                    \
    }                                                                                                              \
    static cusolverStatus_t Gesvd(const CusolverLibrary& l, cusolverDnHandle_t h, signed char job, int m, int n,   \
                                  T* a, int lda, R* s, T* u, int ldu, T* vt, int ldvt, T* work, int lwork,         \
                                  R* rwork, int* info) {                                                           \
      return l.cusolverDn##P##gesvd(h, job, job, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info);     \
    }                                                                                                              \
    /* c (rows x cols, ldc) = the transpose of x (cols x rows, ldx); beta = 0, so B (x again) is not read. */      \
    static cublasStatus_t Transpose(const CublasLibrary& l, cublasHandle_t h, int rows, int cols, const T* x,      \
                                    int ldx, T* c, int ldc) {                                                      \
      const T one = ONE, zero{};                                                                                   \
      return l.cublas##P##geam(h, CUBLAS_OP_T, CUBLAS_OP_T, rows, cols, &one, x, ldx, &zero, x, ldx, c, ldc);      \
    }                                                                                                              \
  };

KILN_CUDA_LAPACK_API(float, float, S, orgqr, syevd, 1.0f)
KILN_CUDA_LAPACK_API(double, double, D, orgqr, syevd, 1.0)
KILN_CUDA_LAPACK_API(cuComplex, float, C, ungqr, heevd, make_cuComplex(1, 0))
KILN_CUDA_LAPACK_API(cuDoubleComplex, double, Z, ungqr, heevd, make_cuDoubleComplex(1, 0))
#undef KILN_CUDA_LAPACK_API

constexpr uint64_t kScratchAlignment = 256;

uint64_t AlignUp(uint64_t bytes) { return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment; }

// One thunk's call on element type T. Every routine but a wide gesvd works
// on a column-major copy of each matrix; gesvd (cuSOLVER's takes m >= n
// only) factors a tall matrix's copy and transposes u and vt out, and a
// wide one's row-major buffer as it is: that is the column-major n x m
// A^T = conj(V) S U^T, whose U' and V'^H are the row-major vt and u.
template <typename T>
class Call {
 public:
  using R = typename Api<T>::R;

  Call(const CudaLinalgLibraries& libs, const th::LinalgThunk& l, const th::LinalgGeometry& g,
       const CudaLinalgBuffers& buffers)
      : libs_(libs), l_(l), g_(g), buffers_(buffers), m_(static_cast<int>(l.m)), n_(static_cast<int>(l.n)),
        k_(std::min(m_, n_)), ld_(std::max(1, m_)) {}

  Status Run(const DeviceScratchFn& scratch) {
    KILN_ASSIGN_OR_RETURN(int lwork, WorkspaceElements());
    lwork_ = std::max(lwork, 1);
    const bool svd = l_.op == th::LinalgOp::kGesdd;
    // The scratch regions, in order: the column-major copy, gesvd's u and
    // vt, the workspace, gesvd's rwork, devInfo (geqrf, orgqr).
    const uint64_t sizes[] = {AlignUp(CopiesMatrix() ? uint64_t(m_) * n_ * sizeof(T) : 0),
                              AlignUp(svd && Tall() ? uint64_t(g_.u_rows * g_.u_cols) * sizeof(T) : 0),
                              AlignUp(svd && Tall() ? uint64_t(g_.vt_rows * g_.vt_cols) * sizeof(T) : 0),
                              AlignUp(uint64_t(lwork_) * sizeof(T)), AlignUp(uint64_t(std::max(k_, 1)) * sizeof(R)),
                              sizeof(int)};
    uint64_t total = 0;
    for (uint64_t s : sizes) total += s;
    KILN_ASSIGN_OR_RETURN(uint64_t at, scratch(total));
    column_major_ = reinterpret_cast<T*>(at), at += sizes[0];
    u_ = reinterpret_cast<T*>(at), at += sizes[1];
    vt_ = reinterpret_cast<T*>(at), at += sizes[2];
    workspace_ = reinterpret_cast<T*>(at), at += sizes[3];
    rwork_ = reinterpret_cast<R*>(at), at += sizes[4];
    info_ = reinterpret_cast<int*>(at);
    for (int64_t b = 0; b < l_.batch; ++b) {
      T* a = reinterpret_cast<T*>(buffers_.a) + b * l_.m * l_.n;
      const bool copy = CopiesMatrix() && m_ > 0 && n_ > 0;
      if (copy) KILN_RETURN_IF_ERROR(Transpose(m_, n_, a, std::max(1, n_), column_major_, ld_));
      KILN_RETURN_IF_ERROR(svd ? Svd(b, a) : Factor(b));
      // gesdd's a is scratch on return: nothing to copy back.
      if (copy && !svd) KILN_RETURN_IF_ERROR(Transpose(n_, m_, column_major_, ld_, a, std::max(1, n_)));
    }
    if (svd && l_.mode == 'N') {  // XLA's placeholders: defined values rather than stale memory
      for (size_t i : {size_t{1}, size_t{2}})
        KILN_RETURN_IF_ERROR(libs_.zero(buffers_.results[i], uint64_t(l_.batch * g_.results[i].elements) * sizeof(T)));
    }
    return Status::Ok();
  }

 private:
  bool Tall() const { return m_ >= n_; }
  bool CopiesMatrix() const { return l_.op != th::LinalgOp::kGesdd || Tall(); }
  cusolverEigMode_t Jobz() const { return l_.mode == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR; }
  cublasFillMode_t Uplo() const { return l_.lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }
  template <typename U>
  U* Result(size_t i, int64_t b) const {
    return reinterpret_cast<U*>(buffers_.results[i]) + b * g_.results[i].elements;
  }

  StatusOr<int> WorkspaceElements() const {
    const CusolverLibrary& lib = libs_.cusolver;
    T* a = reinterpret_cast<T*>(buffers_.a);
    int lwork = 0;
    cusolverStatus_t s = CUSOLVER_STATUS_SUCCESS;
    const char* name = "";
    switch (l_.op) {
      case th::LinalgOp::kGetrf:
        name = Api<T>::kGetrf, s = Api<T>::GetrfSize(lib, libs_.solver, m_, n_, a, ld_, &lwork);
        break;
      case th::LinalgOp::kGeqrf:
        name = Api<T>::kGeqrf, s = Api<T>::GeqrfSize(lib, libs_.solver, m_, n_, a, ld_, &lwork);
        break;
      case th::LinalgOp::kOrgqr:
        name = Api<T>::kOrgqr, s = Api<T>::OrgqrSize(lib, libs_.solver, m_, n_, static_cast<int>(l_.k), a, ld_,
                                                      reinterpret_cast<const T*>(buffers_.tau), &lwork);
        break;
      case th::LinalgOp::kSyevd:
        name = Api<T>::kSyevd,
        s = Api<T>::SyevdSize(lib, libs_.solver, Jobz(), Uplo(), n_, a, ld_, Result<R>(0, 0), &lwork);
        break;
      case th::LinalgOp::kGesdd:
        name = Api<T>::kGesvd,
        s = Api<T>::GesvdSize(lib, libs_.solver, std::max(m_, n_), std::min(m_, n_), &lwork);
        break;
    }
    KILN_RETURN_IF_ERROR(lib.Check(s, std::string(name) + "_bufferSize"));
    if (lwork < 0) return Error(std::string(name) + "_bufferSize returned a negative size");
    return lwork;
  }

  Status Factor(int64_t b) {
    const CusolverLibrary& lib = libs_.cusolver;
    cusolverDnHandle_t h = libs_.solver;
    T* a = column_major_;
    switch (l_.op) {
      case th::LinalgOp::kGetrf:
        return lib.Check(Api<T>::Getrf(lib, h, m_, n_, a, ld_, workspace_, Result<int>(0, b), Result<int>(1, b)),
                         Api<T>::kGetrf);
      case th::LinalgOp::kGeqrf:
        return lib.Check(Api<T>::Geqrf(lib, h, m_, n_, a, ld_, Result<T>(0, b), workspace_, lwork_, info_),
                         Api<T>::kGeqrf);
      case th::LinalgOp::kOrgqr: {
        const T* tau = reinterpret_cast<const T*>(buffers_.tau) + b * l_.k;
        return lib.Check(
            Api<T>::Orgqr(lib, h, m_, n_, static_cast<int>(l_.k), a, ld_, tau, workspace_, lwork_, info_),
            Api<T>::kOrgqr);
      }
      default:  // kSyevd
        return lib.Check(Api<T>::Syevd(lib, h, Jobz(), Uplo(), n_, a, ld_, Result<R>(0, b), workspace_, lwork_,
                                       Result<int>(1, b)),
                         Api<T>::kSyevd);
    }
  }

  // gesdd's s, u, vt and info for matrix b (the row-major matrix at `a`).
  Status Svd(int64_t b, T* a) {
    const CusolverLibrary& lib = libs_.cusolver;
    const signed char job = static_cast<signed char>(l_.mode);
    R* s = Result<R>(0, b);
    T* u = Result<T>(1, b);
    T* vt = Result<T>(2, b);
    int* info = Result<int>(3, b);
    if (!Tall()) {  // the wide matrix's transpose (see Call): u and vt swap
      return lib.Check(Api<T>::Gesvd(lib, libs_.solver, job, n_, m_, a, std::max(1, n_), s, vt, std::max(1, n_), u,
                                     std::max(1, m_), workspace_, lwork_, rwork_, info),
                       Api<T>::kGesvd);
    }
    const int u_cols = static_cast<int>(g_.u_cols), vt_rows = static_cast<int>(g_.vt_rows);
    KILN_RETURN_IF_ERROR(lib.Check(Api<T>::Gesvd(lib, libs_.solver, job, m_, n_, column_major_, ld_, s, u_, ld_, vt_,
                                                 std::max(1, vt_rows), workspace_, lwork_, rwork_, info),
                                   Api<T>::kGesvd));
    if (job == 'N' || m_ == 0 || n_ == 0) return Status::Ok();
    KILN_RETURN_IF_ERROR(Transpose(u_cols, m_, u_, ld_, u, std::max(1, u_cols)));
    return Transpose(n_, vt_rows, vt_, std::max(1, vt_rows), vt, std::max(1, n_));
  }

  Status Transpose(int rows, int cols, const T* x, int ldx, T* c, int ldc) const {
    return libs_.cublas.Check(Api<T>::Transpose(libs_.cublas, libs_.blas, rows, cols, x, ldx, c, ldc), Api<T>::kGeam);
  }

  const CudaLinalgLibraries& libs_;
  const th::LinalgThunk& l_;
  const th::LinalgGeometry& g_;
  const CudaLinalgBuffers& buffers_;
  const int m_, n_, k_, ld_;
  T *column_major_ = nullptr, *u_ = nullptr, *vt_ = nullptr, *workspace_ = nullptr;
  R* rwork_ = nullptr;
  int* info_ = nullptr;
  int lwork_ = 1;
};

}  // namespace

Status CudaLinalg(const CudaLinalgLibraries& libs, const th::LinalgThunk& l, const CudaLinalgBuffers& buffers,
                  const DeviceScratchFn& scratch) {
  KILN_ASSIGN_OR_RETURN(th::LinalgGeometry g, th::GetLinalgGeometry(l));
  const std::string op(th::LinalgOpName(l.op));
  if (buffers.results.size() != g.results.size() || (l.op == th::LinalgOp::kOrgqr && !buffers.tau))
    return Error("cuda " + op + ": wrong number of buffers");
  for (int64_t d : {l.m, l.n, l.k, g.a_elements, g.u_rows * g.u_cols, g.vt_rows * g.vt_cols})
    if (d > std::numeric_limits<int>::max())
      return Error("Unimplemented: cuda " + op + " dimension " + std::to_string(d) + " exceeds cuSOLVER's int range");
  if (l.batch == 0) return Status::Ok();
  switch (l.type) {
    case ElementType::kF32: return Call<float>(libs, l, g, buffers).Run(scratch);
    case ElementType::kF64: return Call<double>(libs, l, g, buffers).Run(scratch);
    case ElementType::kC64: return Call<cuComplex>(libs, l, g, buffers).Run(scratch);
    default: return Call<cuDoubleComplex>(libs, l, g, buffers).Run(scratch);
  }
}

}  // namespace kiln::kernels
