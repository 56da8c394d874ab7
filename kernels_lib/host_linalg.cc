// Host Cholesky and triangular solve through OpenBLAS; see host_linalg.h.
#include "kernels_lib/host_linalg.h"
#include "kernels_lib/openblas_kernels.h"

#include <cblas.h>
#include <f77blas.h>

#include <complex>
#include <limits>
#include <string>

namespace kiln::kernels {
namespace {

namespace th = ::kiln::thunks;

bool FitsInt(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

Status CheckDims(const char* what, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims)
    if (!FitsInt(d)) return Error(std::string(what) + ": dimension " + std::to_string(d) + " is outside LAPACK's int range");
  return Status::Ok();
}

std::string Unsupported(const char* what, ElementType type) {
  return std::string("Unimplemented: host ") + what + " of " + std::string(ElementTypeName(type)) +
         " (f32, f64, c64 and c128)";
}

// potrf of one column-major n x n matrix with `uplo`; returns LAPACK's info.
template <typename T>
int Potrf(char uplo, int n, T* a) {
  int lda = n > 0 ? n : 1, info = 0;
  if constexpr (std::is_same_v<T, float>) {
    BLASFUNC(spotrf)(&uplo, &n, a, &lda, &info);
  } else if constexpr (std::is_same_v<T, double>) {
    BLASFUNC(dpotrf)(&uplo, &n, a, &lda, &info);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    BLASFUNC(cpotrf)(&uplo, &n, reinterpret_cast<float*>(a), &lda, &info);
  } else {
    BLASFUNC(zpotrf)(&uplo, &n, reinterpret_cast<double*>(a), &lda, &info);
  }
  return info;
}

template <typename T>
void CholeskyBatches(const th::CholeskyThunk& c, T* a, int32_t* info) {
  // Row-major lower is column-major upper.
  const char uplo = c.lower ? 'U' : 'L';
  const int64_t stride = c.n * c.n;
  for (int64_t b = 0; b < c.batch; ++b) info[b] = Potrf(uplo, static_cast<int>(c.n), a + b * stride);
}

CBLAS_TRANSPOSE Transpose(th::TriangularSolveTranspose t) {
  switch (t) {
    case th::TriangularSolveTranspose::kNoTranspose: return CblasNoTrans;
    case th::TriangularSolveTranspose::kTranspose: return CblasTrans;
    case th::TriangularSolveTranspose::kAdjoint: return CblasConjTrans;
  }
  return CblasNoTrans;
}

template <typename T>
void SolveBatches(const th::TriangularSolveThunk& t, const T* a, T* b) {
  const CBLAS_SIDE side = t.left_side ? CblasLeft : CblasRight;
  const CBLAS_UPLO uplo = t.lower ? CblasLower : CblasUpper;
  const CBLAS_TRANSPOSE trans = Transpose(t.transpose_a);
  const CBLAS_DIAG diag = t.unit_diagonal ? CblasUnit : CblasNonUnit;
  const int m = static_cast<int>(t.m), n = static_cast<int>(t.n), k = static_cast<int>(t.k());
  const int lda = k > 0 ? k : 1, ldb = n > 0 ? n : 1;
  const int64_t a_stride = t.k() * t.k(), b_stride = t.m * t.n;
  const T one = T(1);
  for (int64_t i = 0; i < t.batch; ++i) {
    const T* ai = a + i * a_stride;
    T* bi = b + i * b_stride;
    if constexpr (std::is_same_v<T, float>) {
      cblas_strsm(CblasRowMajor, side, uplo, trans, diag, m, n, one, ai, lda, bi, ldb);
    } else if constexpr (std::is_same_v<T, double>) {
      cblas_dtrsm(CblasRowMajor, side, uplo, trans, diag, m, n, one, ai, lda, bi, ldb);
    } else if constexpr (std::is_same_v<T, std::complex<float>>) {
      cblas_ctrsm(CblasRowMajor, side, uplo, trans, diag, m, n, &one, ai, lda, bi, ldb);
    } else {
      cblas_ztrsm(CblasRowMajor, side, uplo, trans, diag, m, n, &one, ai, lda, bi, ldb);
    }
  }
}

}  // namespace

Status HostCholesky(const th::CholeskyThunk& c, void* a, int32_t* info) {
  EnsureOpenBlasKernelsMatchCpu();
  KILN_RETURN_IF_ERROR(CheckDims("host cholesky", {c.n, c.batch}));
  if (c.batch == 0) return Status::Ok();
  switch (c.type) {
    case ElementType::kF32: CholeskyBatches(c, static_cast<float*>(a), info); break;
    case ElementType::kF64: CholeskyBatches(c, static_cast<double*>(a), info); break;
    case ElementType::kC64: CholeskyBatches(c, static_cast<std::complex<float>*>(a), info); break;
    case ElementType::kC128: CholeskyBatches(c, static_cast<std::complex<double>*>(a), info); break;
    default: return Error(Unsupported("cholesky", c.type));
  }
  return Status::Ok();
}

Status HostTriangularSolve(const th::TriangularSolveThunk& t, const void* a, void* b) {
  EnsureOpenBlasKernelsMatchCpu();
  KILN_RETURN_IF_ERROR(CheckDims("host triangular-solve", {t.m, t.n, t.batch}));
  if (t.m == 0 || t.n == 0 || t.batch == 0) return Status::Ok();
  switch (t.type) {
    case ElementType::kF32: SolveBatches(t, static_cast<const float*>(a), static_cast<float*>(b)); break;
    case ElementType::kF64: SolveBatches(t, static_cast<const double*>(a), static_cast<double*>(b)); break;
    case ElementType::kC64:
      SolveBatches(t, static_cast<const std::complex<float>*>(a), static_cast<std::complex<float>*>(b));
      break;
    case ElementType::kC128:
      SolveBatches(t, static_cast<const std::complex<double>*>(a), static_cast<std::complex<double>*>(b));
      break;
    default: return Error(Unsupported("triangular-solve", t.type));
  }
  return Status::Ok();
}

}  // namespace kiln::kernels
