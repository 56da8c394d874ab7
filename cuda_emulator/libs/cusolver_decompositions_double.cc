// The cuSOLVER double's decompositions besides potrf: getrf, geqrf,
// orgqr / ungqr, syevd / heevd and gesvd of the four types with their
// workspace queries, computed by the double's own algorithms
// (dense_factorizations.h, dense_jacobi.h) in double precision over the
// emulated device's memory.
//
// As potrf (cusolver_double.cc): arguments are checked by cuSOLVER's
// documented rules (CUSOLVER_STATUS_INVALID_VALUE), every matrix, vector,
// workspace and devInfo must lie in live allocations (else
// CUSOLVER_STATUS_EXECUTION_FAILED, reported and sticky like a kernel's
// illegal address), with initcheck what is read must have been written,
// the workspace must be at least what the query answered (n elements, the
// double's choice), and devInfo lands in device memory (getrf: the first
// zero pivot, 1-based; the others: 0, Jacobi always converging). syevd
// reads only A's `uplo` triangle. gesvd takes m >= n only, as cuSOLVER's,
// and returns V^H; its jobu / jobvt 'O' and getrf without devIpiv (no
// pivoting) are CUSOLVER_STATUS_NOT_SUPPORTED. Each call is one launch on
// the handle's stream, modeled as a blocked factorization
// (model::ModelSolver) with LAPACK's flop counts.
#include <cuComplex.h>
#include <cusolverDn.h>

#include <algorithm>
#include <string>

#include "cuda_emulator/driver/exports.h"
#include "cuda_emulator/libs/cusolver_context.h"
#include "cuda_emulator/libs/dense_factorizations.h"
#include "cuda_emulator/libs/dense_jacobi.h"
#include "cuda_emulator/libs/matrix_operand.h"
#include "cuda_emulator/model/call_models.h"
#include "cuda_emulator/model/h100_figures.h"

namespace {

using kiln::emu::driver::EmulatedDevice;
using kiln::emu::libs::Complex;
using kiln::emu::libs::DenseMatrix;
using kiln::emu::libs::MatrixOperand;
using kiln::emu::libs::RejectSolverCall;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

int WorkspaceElements(int n) { return std::max(1, n); }

Complex ToComplex(float x) { return x; }
Complex ToComplex(double x) { return x; }
Complex ToComplex(cuComplex x) { return {x.x, x.y}; }
Complex ToComplex(cuDoubleComplex x) { return {x.x, x.y}; }
void Store(Complex z, float* x) { *x = static_cast<float>(z.real()); }
void Store(Complex z, double* x) { *x = z.real(); }
void Store(Complex z, cuComplex* x) { *x = make_cuComplex(static_cast<float>(z.real()), static_cast<float>(z.imag())); }
void Store(Complex z, cuDoubleComplex* x) { *x = make_cuDoubleComplex(z.real(), z.imag()); }

template <typename T>
DenseMatrix Load(const T* a, int m, int n, int lda) {
  DenseMatrix d{m, n, std::vector<Complex>(static_cast<size_t>(m) * static_cast<size_t>(n))};
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) d.at(i, j) = ToComplex(a[static_cast<int64_t>(j) * lda + i]);
  return d;
}

template <typename T>
void StoreMatrix(DenseMatrix& d, T* a, int lda) {
  for (int64_t j = 0; j < d.cols; ++j)
    for (int64_t i = 0; i < d.rows; ++i) Store(d.at(i, j), a + j * lda + i);
}

// cuSOLVER's checks of m, n, (orgqr's) k and lda; "" when valid.
std::string ShapeError(int m, int n, int lda, int k = 0, bool orgqr = false) {
  if (m < 0 || n < 0 || k < 0) return "m, n and k must not be negative";
  if (orgqr && (n > m || k > n)) return "orgqr needs k <= n <= m";
  if (lda < std::max(1, m)) return "lda " + std::to_string(lda) + " < max(1, " + std::to_string(m) + ")";
  return "";
}

std::string SyevdError(cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, int lda) {
  if (jobz != CUSOLVER_EIG_MODE_NOVECTOR && jobz != CUSOLVER_EIG_MODE_VECTOR)
    return "jobz must be CUSOLVER_EIG_MODE_NOVECTOR or _VECTOR";
  if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)
    return "uplo must be CUBLAS_FILL_MODE_LOWER or _UPPER";
  return ShapeError(n, n, lda);
}

std::string GesvdError(signed char jobu, signed char jobvt, int m, int n, int lda, int ldu, int ldvt) {
  auto valid = [](signed char job) { return job == 'A' || job == 'S' || job == 'N' || job == 'O'; };
  if (!valid(jobu) || !valid(jobvt)) return "jobu and jobvt must be 'A', 'S', 'O' or 'N'";
  if (m < n) return "gesvd only supports m >= n (m " + std::to_string(m) + ", n " + std::to_string(n) + ")";
  std::string invalid = ShapeError(m, n, lda);
  if (!invalid.empty()) return invalid;
  if (jobu != 'N' && ldu < std::max(1, m)) return "ldu " + std::to_string(ldu) + " < max(1, m)";
  if (jobvt != 'N' && ldvt < std::max(1, n)) return "ldvt " + std::to_string(ldvt) + " < max(1, n)";
  return "";
}

cusolverStatus_t BufferSize(const char* call, cusolverDnHandle_t handle, const std::string& shape_error, int n,
                            int* lwork) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return RejectSolverCall(CUSOLVER_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  std::string invalid = shape_error;
  if (invalid.empty() && !lwork) invalid = "Lwork must not be null";
  if (!invalid.empty()) return RejectSolverCall(CUSOLVER_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  *lwork = WorkspaceElements(n);
  return CUSOLVER_STATUS_SUCCESS;
}

// What one call reads and writes besides devInfo, for the memory checks.
struct WrittenRange {
  const char* name;
  uint64_t address, bytes;
};
struct Access {
  std::vector<MatrixOperand> read, written;  // matrices (and vectors as n x 1)
  std::vector<WrittenRange> ranges;          // the workspace, pivots, tau, values
  uint64_t info = 0;
};

std::string CheckAccess(const char* call, const Access& access, size_t element) {
  for (const MatrixOperand& m : access.read) {
    std::string fault = kiln::emu::libs::CheckMatrix(call, m, 1, element, false);
    if (!fault.empty()) return fault;
  }
  for (const MatrixOperand& m : access.written) {
    std::string fault = kiln::emu::libs::CheckMatrix(call, m, 1, element, true);
    if (!fault.empty()) return fault;
  }
  for (const WrittenRange& r : access.ranges) {
    if (r.bytes == 0) continue;
    std::string fault = kiln::emu::libs::CheckWrittenRange(call, r.name, r.address, r.bytes);
    if (!fault.empty()) return fault;
  }
  return kiln::emu::libs::CheckWrittenRange(call, "devInfo", access.info, sizeof(int));
}

// Checks the accesses, then runs `compute` (which returns devInfo) under
// the memory's read lock and models the call; the common part of all.
template <typename T, typename Compute>
cusolverStatus_t Run(const char* call, cusolverDnHandle_t handle, const Access& access,
                     kiln::emu::model::SolverShape shape, Compute compute) {
  cusolverStatus_t entered = CUSOLVER_STATUS_SUCCESS;
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline =
      kiln::emu::libs::EnterSolverStream(call, handle, &entered);
  if (!timeline) return entered;
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();  // no cuMemFree while the factorization runs
      std::string fault = CheckAccess(call, access, sizeof(T));
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      *reinterpret_cast<int*>(access.info) = compute();
    }
    kiln::emu::model::SolverShape modeled = shape;
    modeled.launches_per_panel = kiln::emu::model::h100::kLuQrLaunchesPerPanel;
    kiln::emu::model::GemmTime time = kiln::emu::libs::ModelSolverCall<T>(modeled);
    timeline.AddLibraryCall(time.total, time.optimal);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, handle->stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUSOLVER_STATUS_EXECUTION_FAILED;
  return CUSOLVER_STATUS_SUCCESS;
}

// LAPACK's flop counts for m x n with k = min(m, n) (real; x4 for complex
// in ModelSolverCall), and the matrix read and written once.
kiln::emu::model::SolverShape Shape(double flops, int m, int n, int k, size_t element) {
  kiln::emu::model::SolverShape s;
  s.flops = flops;
  s.bytes = 2.0 * double(element) * double(m) * double(n);
  s.columns = k;
  return s;
}

double FactorFlops(double m, double n, double k) { return m * n * k - (m + n) * k * k / 2 + k * k * k / 3; }

uint64_t Address(const void* p) { return reinterpret_cast<uint64_t>(p); }

template <typename T>
cusolverStatus_t Getrf(const char* call, cusolverDnHandle_t handle, int m, int n, T* A, int lda, T* workspace,
                       int* ipiv, int* info) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return RejectSolverCall(CUSOLVER_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  std::string invalid = ShapeError(m, n, lda);
  if (invalid.empty() && !info) invalid = "devInfo must not be null";
  if (!invalid.empty()) return RejectSolverCall(CUSOLVER_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  if (!ipiv) {
    return RejectSolverCall(CUSOLVER_STATUS_NOT_SUPPORTED, std::string(call) + ": the double always pivots (devIpiv)");
  }
  const int k = std::min(m, n);
  MatrixOperand a{"A", Address(A), 0, m, n, lda};
  Access r{{a}, {a}, {{"the workspace", Address(workspace), uint64_t(WorkspaceElements(n)) * sizeof(T)},
                      {"devIpiv", Address(ipiv), uint64_t(k) * sizeof(int)}}, Address(info)};
  return Run<T>(call, handle, r, Shape(FactorFlops(m, n, k), m, n, k, sizeof(T)), [=] {
    DenseMatrix d = Load(A, m, n, lda);
    std::vector<int> pivots;
    const int status = kiln::emu::libs::LuFactor(d, pivots);
    StoreMatrix(d, A, lda);
    std::copy(pivots.begin(), pivots.end(), ipiv);
    return status;
  });
}

template <typename T>
cusolverStatus_t Geqrf(const char* call, cusolverDnHandle_t handle, int m, int n, T* A, int lda, T* tau,
                       T* workspace, int lwork, int* info) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return RejectSolverCall(CUSOLVER_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  std::string invalid = ShapeError(m, n, lda);
  if (invalid.empty() && lwork < WorkspaceElements(n))
    invalid = "Lwork " + std::to_string(lwork) + " < the " + std::to_string(WorkspaceElements(n)) +
              " elements geqrf_bufferSize asks for";
  if (invalid.empty() && (!info || !tau)) invalid = "TAU and devInfo must not be null";
  if (!invalid.empty()) return RejectSolverCall(CUSOLVER_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  const int k = std::min(m, n);
  MatrixOperand a{"A", Address(A), 0, m, n, lda};
  Access r{{a}, {a}, {{"the workspace", Address(workspace), uint64_t(lwork) * sizeof(T)},
                      {"TAU", Address(tau), uint64_t(k) * sizeof(T)}}, Address(info)};
  return Run<T>(call, handle, r, Shape(2 * FactorFlops(m, n, k), m, n, k, sizeof(T)), [=] {
    DenseMatrix d = Load(A, m, n, lda);
    std::vector<Complex> t;
    kiln::emu::libs::HouseholderQr(d, t);
    StoreMatrix(d, A, lda);
    for (int i = 0; i < k; ++i) Store(t[static_cast<size_t>(i)], tau + i);
    return 0;
  });
}

template <typename T>
cusolverStatus_t Orgqr(const char* call, cusolverDnHandle_t handle, int m, int n, int k, T* A, int lda, const T* tau,
                       T* workspace, int lwork, int* info) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return RejectSolverCall(CUSOLVER_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  std::string invalid = ShapeError(m, n, lda, k, true);
  if (invalid.empty() && lwork < WorkspaceElements(n))
    invalid = "lwork " + std::to_string(lwork) + " < the " + std::to_string(WorkspaceElements(n)) +
              " elements orgqr_bufferSize asks for";
  if (invalid.empty() && (!info || (k > 0 && !tau))) invalid = "tau and info must not be null";
  if (!invalid.empty()) return RejectSolverCall(CUSOLVER_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  MatrixOperand a{"A", Address(A), 0, m, n, lda};
  Access r{{MatrixOperand{"A", Address(A), 0, m, k, lda},  // the reflectors' columns
            MatrixOperand{"tau", Address(tau), 0, k, 1, std::max(1, k)}},
           {a}, {{"the workspace", Address(workspace), uint64_t(lwork) * sizeof(T)}}, Address(info)};
  const double flops = 4.0 * m * n * k - 2.0 * (m + n) * k * k + 4.0 * k * k * k / 3;
  return Run<T>(call, handle, r, Shape(flops, m, n, k, sizeof(T)), [=] {
    DenseMatrix d = Load(A, m, n, lda);
    std::vector<Complex> t;
    for (int i = 0; i < k; ++i) t.push_back(ToComplex(tau[i]));
    kiln::emu::libs::FormQ(d, t);
    StoreMatrix(d, A, lda);
    return 0;
  });
}

template <typename T, typename R>
cusolverStatus_t Syevd(const char* call, cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo,
                       int n, T* A, int lda, R* W, T* workspace, int lwork, int* info) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return RejectSolverCall(CUSOLVER_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  std::string invalid = SyevdError(jobz, uplo, n, lda);
  if (invalid.empty() && lwork < WorkspaceElements(n))
    invalid = "lwork " + std::to_string(lwork) + " < the " + std::to_string(WorkspaceElements(n)) +
              " elements syevd_bufferSize asks for";
  if (invalid.empty() && (!info || !W)) invalid = "W and info must not be null";
  if (!invalid.empty()) return RejectSolverCall(CUSOLVER_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  const bool lower = uplo == CUBLAS_FILL_MODE_LOWER, vectors = jobz == CUSOLVER_EIG_MODE_VECTOR;
  MatrixOperand a{"A", Address(A), 0, n, n, lda};
  MatrixOperand triangle = a;
  triangle.read = lower ? kiln::emu::libs::Triangle::kLower : kiln::emu::libs::Triangle::kUpper;
  Access r{{triangle}, {a}, {{"the workspace", Address(workspace), uint64_t(lwork) * sizeof(T)},
                             {"W", Address(W), uint64_t(n) * sizeof(R)}}, Address(info)};
  // The symmetric QR algorithm's count (Golub and Van Loan): 4n^3/3 for the
  // values, 9n^3 with the vectors.
  const double flops = (vectors ? 9.0 : 4.0 / 3) * n * n * n;
  return Run<T>(call, handle, r, Shape(flops, n, n, n, sizeof(T)), [=] {
    DenseMatrix d = Load(A, n, n, lda);
    std::vector<double> w = kiln::emu::libs::HermitianEigen(d, lower, vectors);
    if (vectors) StoreMatrix(d, A, lda);
    for (int i = 0; i < n; ++i) Store(w[static_cast<size_t>(i)], W + i);
    return 0;
  });
}

template <typename T, typename R>
cusolverStatus_t Gesvd(const char* call, cusolverDnHandle_t handle, signed char jobu, signed char jobvt, int m, int n,
                       T* A, int lda, R* S, T* U, int ldu, T* VT, int ldvt, T* workspace, int lwork, R* rwork,
                       int* info) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return RejectSolverCall(CUSOLVER_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  if (jobu == 'O' || jobvt == 'O')
    return RejectSolverCall(CUSOLVER_STATUS_NOT_SUPPORTED, std::string(call) + ": the double has no jobu / jobvt 'O'");
  const int u_cols = jobu == 'A' ? m : jobu == 'S' ? n : 0, vt_rows = jobvt == 'N' ? 0 : n;
  std::string invalid = GesvdError(jobu, jobvt, m, n, lda, ldu, ldvt);
  if (invalid.empty() && lwork < WorkspaceElements(n))
    invalid = "lwork " + std::to_string(lwork) + " < the " + std::to_string(WorkspaceElements(n)) +
              " elements gesvd_bufferSize asks for";
  if (invalid.empty() && (!info || !S)) invalid = "S and info must not be null";
  if (!invalid.empty()) return RejectSolverCall(CUSOLVER_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  MatrixOperand a{"A", Address(A), 0, m, n, lda};
  Access r{{a}, {a}, {{"the workspace", Address(workspace), uint64_t(lwork) * sizeof(T)},
                      {"S", Address(S), uint64_t(n) * sizeof(R)},
                      {"rwork", Address(rwork), rwork ? uint64_t(std::max(n - 1, 0)) * sizeof(R) : 0}},
           Address(info)};
  if (u_cols > 0) r.written.push_back(MatrixOperand{"U", Address(U), 0, m, u_cols, ldu});
  if (vt_rows > 0) r.written.push_back(MatrixOperand{"VT", Address(VT), 0, vt_rows, n, ldvt});
  // The R-SVD's count with both sets of vectors (Golub and Van Loan).
  const double flops = 4.0 * m * n * n + 8.0 * n * n * n;
  return Run<T>(call, handle, r, Shape(flops, m, n, n, sizeof(T)), [=] {
    DenseMatrix u, v;
    std::vector<double> s = kiln::emu::libs::JacobiSvd(Load(A, m, n, lda), u_cols, u, v);
    for (int i = 0; i < n; ++i) Store(s[static_cast<size_t>(i)], S + i);
    if (u_cols > 0) StoreMatrix(u, U, ldu);
    for (int i = 0; i < vt_rows; ++i)  // V^H
      for (int j = 0; j < n; ++j) Store(std::conj(v.at(j, i)), VT + static_cast<int64_t>(j) * ldvt + i);
    for (int i = 0; rwork && i + 1 < n; ++i) rwork[i] = 0;  // every superdiagonal converged
    return 0;
  });
}

}  // namespace

extern "C" {

#define KILN_LU_QR_ENTRY_POINTS(P, T, ORGQR)                                                                        \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##getrf_bufferSize(cusolverDnHandle_t h, int m, int n, T*, int lda, \
                                                                   int* Lwork) {                                   \
    return BufferSize("cusolverDn" #P "getrf_bufferSize", h, ShapeError(m, n, lda), n, Lwork);                     \
  }                                                                                                                 \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##getrf(cusolverDnHandle_t h, int m, int n, T* A, int lda,          \
                                                        T* Workspace, int* devIpiv, int* devInfo) {                 \
    return Getrf("cusolverDn" #P "getrf", h, m, n, A, lda, Workspace, devIpiv, devInfo);                           \
  }                                                                                                                 \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##geqrf_bufferSize(cusolverDnHandle_t h, int m, int n, T*, int lda, \
                                                                   int* lwork) {                                   \
    return BufferSize("cusolverDn" #P "geqrf_bufferSize", h, ShapeError(m, n, lda), n, lwork);                     \
  }                                                                                                                 \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##geqrf(cusolverDnHandle_t h, int m, int n, T* A, int lda, T* TAU,  \
                                                        T* Workspace, int Lwork, int* devInfo) {                    \
    return Geqrf("cusolverDn" #P "geqrf", h, m, n, A, lda, TAU, Workspace, Lwork, devInfo);                        \
  }                                                                                                                 \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##ORGQR##_bufferSize(cusolverDnHandle_t h, int m, int n, int k,     \
                                                                     const T*, int lda, const T*, int* lwork) {    \
    return BufferSize("cusolverDn" #P #ORGQR "_bufferSize", h, ShapeError(m, n, lda, k, true), n, lwork);          \
  }                                                                                                                 \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##ORGQR(cusolverDnHandle_t h, int m, int n, int k, T* A, int lda,   \
                                                        const T* tau, T* work, int lwork, int* info) {              \
    return Orgqr("cusolverDn" #P #ORGQR, h, m, n, k, A, lda, tau, work, lwork, info);                              \
  }

KILN_LU_QR_ENTRY_POINTS(S, float, orgqr)
KILN_LU_QR_ENTRY_POINTS(D, double, orgqr)
KILN_LU_QR_ENTRY_POINTS(C, cuComplex, ungqr)
KILN_LU_QR_ENTRY_POINTS(Z, cuDoubleComplex, ungqr)
#undef KILN_LU_QR_ENTRY_POINTS

#define KILN_EIG_SVD_ENTRY_POINTS(P, T, R, SYEVD)                                                                   \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##SYEVD##_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz,   \
                                                                     cublasFillMode_t uplo, int n, const T*, int lda, \
                                                                     const R*, int* lwork) {                          \
    return BufferSize("cusolverDn" #P #SYEVD "_bufferSize", h, SyevdError(jobz, uplo, n, lda), n, lwork);             \
  }                                                                                                                  \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##SYEVD(cusolverDnHandle_t h, cusolverEigMode_t jobz,                \
                                                        cublasFillMode_t uplo, int n, T* A, int lda, R* W, T* work,  \
                                                        int lwork, int* info) {                                      \
    return Syevd("cusolverDn" #P #SYEVD, h, jobz, uplo, n, A, lda, W, work, lwork, info);                             \
  }                                                                                                                  \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##gesvd_bufferSize(cusolverDnHandle_t h, int m, int n, int* lwork) { \
    return BufferSize("cusolverDn" #P "gesvd_bufferSize", h, ShapeError(m, n, std::max(1, m)), n, lwork);            \
  }                                                                                                                  \
  KILN_EMU_EXPORT cusolverStatus_t cusolverDn##P##gesvd(cusolverDnHandle_t h, signed char jobu, signed char jobvt,   \
                                                        int m, int n, T* A, int lda, R* S, T* U, int ldu, T* VT,     \
                                                        int ldvt, T* work, int lwork, R* rwork, int* info) {         \
    return Gesvd("cusolverDn" #P "gesvd", h, jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork,     \
                 info);                                                                                              \
  }

KILN_EIG_SVD_ENTRY_POINTS(S, float, float, syevd)
KILN_EIG_SVD_ENTRY_POINTS(D, double, double, syevd)
KILN_EIG_SVD_ENTRY_POINTS(C, cuComplex, float, heevd)
KILN_EIG_SVD_ENTRY_POINTS(Z, cuDoubleComplex, double, heevd)
#undef KILN_EIG_SVD_ENTRY_POINTS

}  // extern "C"
