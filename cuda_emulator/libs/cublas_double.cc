// The cuBLAS double: the cuBLAS entry points kiln calls (strided batched
// GEMMs, trsm, geam for the LU and QR thunks' transposes, and scal for the
// inverse FFTs' normalization), computed on
// the host with OpenBLAS over the emulated device's memory.
//
// Device pointers are host addresses (DeviceMemory), so a strided batched
// GEMM is one cblas_?gemm per batch (column-major, as cuBLAS). What makes it
// a faithful double is everything around the arithmetic: arguments are
// validated by cuBLAS' documented rules (CUBLAS_STATUS_INVALID_VALUE), every
// matrix range a batch touches must lie in a live allocation (else
// CUBLAS_STATUS_EXECUTION_FAILED, reported and sticky like a kernel's
// illegal address), beta == 0 means C is never read, and each call counts
// as one launch on the handle's stream for events and elapsed time. Its
// duration is modeled from its flops and bytes (model::ModelGemm) on the
// datapath its types and math mode select: sgemm on the FP32 cores, or the
// TF32 (or, with the legacy CUBLAS_TENSOR_OP_MATH, FP16) tensor cores when
// the math mode allows them; dgemm on the FP64 tensor cores; bf16 x bf16 ->
// f32 (cublasGemmStridedBatchedEx) on the BF16 tensor cores, f32 with
// CUBLAS_COMPUTE_32F_FAST_TF32 on the TF32 tensor cores, s8 x s8 -> s32
// (CUBLAS_COMPUTE_32I, exact wrapping integer sums) on the INT8 tensor
// cores, with the int8 kernels' rules (lda, ldb and the batch strides
// multiples of 4, A and B 4-byte aligned: else CUBLAS_STATUS_NOT_SUPPORTED); a trsm as a
// blocked solve (model::ModelSolver) on the FP32 cores or the FP64 tensor
// cores (trsm reads only A's `uplo` triangle, which is all initcheck
// looks at). The arithmetic is done at full precision, except that a GEMM
// on the TF32 tensor cores first rounds its f32 operands to TF32 as the
// hardware does (so tests see the numerics a real H100 gives);
// NVIDIA_TF32_OVERRIDE=0 turns TF32 off, as in cuBLAS. What
// it does not implement (pointer mode device, other math modes) is
// CUBLAS_STATUS_NOT_SUPPORTED, never ignored.
//
// A handle needs the emulated driver initialized and a context current,
// as a real cuBLAS needs the CUDA runtime's.
#include <cblas.h>
#include <cuComplex.h>
#include <cublas_api.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <complex>
#include <string>
#include <vector>
#include <type_traits>

#include "common/float_formats.h"
#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"
#include "cuda_emulator/libs/matrix_operand.h"
#include "cuda_emulator/model/call_models.h"
#include "cuda_emulator/model/h100_figures.h"

// The handle's state; cublasHandle_t is an opaque pointer to it.
struct cublasContext {
  CUstream stream = nullptr;  // the legacy default stream until set
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

namespace {

using kiln::emu::driver::EmulatedDevice;
using kiln::emu::libs::CheckMatrix;
using Operand = kiln::emu::libs::MatrixOperand;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

// Records why a call failed for kilnEmuLastErrorDetail and returns `status`.
cublasStatus_t Reject(cublasStatus_t status, std::string detail) {
  kiln::emu::driver::SetErrorDetail(std::move(detail));
  return status;
}

// The handle's stream with the context entered, where a call runs; null
// with *status set (and its detail recorded) when there is none.
std::shared_ptr<kiln::emu::driver::StreamTimeline> EnterHandleStream(const char* call, cublasHandle_t handle,
                                                                     cublasStatus_t* status) {
  *status = CUBLAS_STATUS_EXECUTION_FAILED;
  if (Device().EnterContext() != CUDA_SUCCESS) return nullptr;  // detail set
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = Device().timeline().Find(handle->stream);
  if (!timeline) Reject(CUBLAS_STATUS_EXECUTION_FAILED, std::string(call) + ": the handle's stream was destroyed");
  return timeline;
}

// NVIDIA_TF32_OVERRIDE=0 forbids the TF32 tensor cores whatever the
// handle or the call asks, as in the real libraries.
bool Tf32Overridden() {
  const char* v = std::getenv("NVIDIA_TF32_OVERRIDE");
  return v && std::string(v) == "0";
}

// The datapath a real cuBLAS runs a GEMM of T operands on under `math`, or
// on the TF32 tensor cores when the call's compute type asks for them
// (`tf32_compute`): bf16 operands always run on the tensor cores.
template <typename T>
kiln::emu::model::GemmMath MathOf(cublasMath_t math, bool tf32_compute) {
  using kiln::emu::model::GemmMath;
  if (std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>) return GemmMath::kFp64Tensor;
  if (std::is_same_v<T, bfloat16>) return GemmMath::kFp16Tensor;
  if (std::is_same_v<T, int8_t>) return GemmMath::kInt8Tensor;
  int base = math & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  if ((tf32_compute || base == CUBLAS_TF32_TENSOR_OP_MATH) && !Tf32Overridden()) return GemmMath::kTf32Tensor;
  if (base == CUBLAS_TENSOR_OP_MATH) return GemmMath::kFp16Tensor;
  return GemmMath::kFp32;
}

// The TF32 tensor cores' operands: f32 rounded to a 10-bit mantissa, to
// nearest with ties away from zero (PTX's cvt.rna.tf32.f32, what CUTLASS
// and cuBLAS' TF32 kernels convert with); NaN and infinities stay.
float RoundToTf32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) return x;
  bits = (bits + 0x1000u) & ~0x1fffu;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
std::vector<float> RoundedToTf32(const float* x, int ld, int cols) {
  std::vector<float> out(static_cast<size_t>(ld) * static_cast<size_t>(cols));
  for (size_t i = 0; i < out.size(); ++i) out[i] = RoundToTf32(x[i]);
  return out;
}

CBLAS_TRANSPOSE CblasOp(cublasOperation_t op) { return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans; }

void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha, const double* a, int lda,
          const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
// c64 and c128 (cuComplex and cuDoubleComplex, passed as std::complex).
void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, std::complex<float> alpha,
          const std::complex<float>* a, int lda, const std::complex<float>* b, int ldb, std::complex<float> beta,
          std::complex<float>* c, int ldc) {
  cblas_cgemm(CblasColMajor, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, std::complex<double> alpha,
          const std::complex<double>* a, int lda, const std::complex<double>* b, int ldb, std::complex<double> beta,
          std::complex<double>* c, int ldc) {
  cblas_zgemm(CblasColMajor, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
// bf16 operands, f32 accumulation and result: the operands widened to f32
// (exact) and an sgemm (Debian's OpenBLAS is built without sbgemm).
std::vector<float> Widened(const bfloat16* x, int ld, int cols) {
  std::vector<float> out(static_cast<size_t>(ld) * static_cast<size_t>(cols));
  kiln::WidenBf16ToF32(x, out.size(), out.data());
  return out;
}
void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const bfloat16* a, int lda,
          const bfloat16* b, int ldb, float beta, float* c, int ldc) {
  std::vector<float> wa = Widened(a, lda, ta == CblasNoTrans ? k : m);
  std::vector<float> wb = Widened(b, ldb, tb == CblasNoTrans ? n : k);
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, alpha, wa.data(), lda, wb.data(), ldb, beta, c, ldc);
}

// s8 operands, s32 alpha, beta, accumulation and result: exact, wrapping
// modulo 2^32 as the tensor cores' 32-bit integer accumulators do (the
// arithmetic in uint32_t, where overflow is defined).
void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, int32_t alpha, const int8_t* a, int lda,
          const int8_t* b, int ldb, int32_t beta, int32_t* c, int ldc) {
  // Column-major element (row, col) of op(X): X[row + col * ld], or
  // X[col + row * ld] when transposed.
  auto at = [](const int8_t* x, CBLAS_TRANSPOSE t, int64_t ld, int64_t row, int64_t col) {
    return static_cast<uint32_t>(static_cast<int32_t>(t == CblasNoTrans ? x[row + col * ld] : x[col + row * ld]));
  };
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      uint32_t sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += at(a, ta, lda, i, p) * at(b, tb, ldb, p, j);
      int32_t& out = c[i + j * ldc];
      uint32_t scaled = static_cast<uint32_t>(alpha) * sum;
      if (beta != 0) scaled += static_cast<uint32_t>(beta) * static_cast<uint32_t>(out);
      out = static_cast<int32_t>(scaled);
    }
  }
}

// C = beta * C without reading C when beta == 0 (cuBLAS' rule: C may then
// hold NaNs or never-written bytes).
template <typename T>
void ScaleC(T* c, int m, int n, int ldc, T beta) {
  for (int j = 0; j < n; ++j) {
    T* column = c + static_cast<int64_t>(j) * ldc;
    for (int i = 0; i < m; ++i) column[i] = beta == T(0) ? T(0) : beta * column[i];
  }
}

// cuBLAS' argument checks for gemm, in its order; "" when valid.
std::string GemmArgumentError(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                              const void* alpha, int lda, int ldb, const void* beta, int ldc, int batches) {
  auto valid_op = [](cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; };
  if (!valid_op(transa) || !valid_op(transb)) return "transa/transb must be CUBLAS_OP_N, _T or _C";
  if (m < 0 || n < 0 || k < 0) return "m, n and k must not be negative";
  if (batches < 0) return "batchCount must not be negative";
  int a_rows = transa == CUBLAS_OP_N ? m : k;
  int b_rows = transb == CUBLAS_OP_N ? k : n;
  if (lda < std::max(1, a_rows)) return "lda " + std::to_string(lda) + " < max(1, " + std::to_string(a_rows) + ")";
  if (ldb < std::max(1, b_rows)) return "ldb " + std::to_string(ldb) + " < max(1, " + std::to_string(b_rows) + ")";
  if (ldc < std::max(1, m)) return "ldc " + std::to_string(ldc) + " < max(1, " + std::to_string(m) + ")";
  if (!alpha || !beta) return "alpha and beta must not be null";
  return "";
}

// The int8 GEMM's layout rules (cuBLAS' CUBLAS_COMPUTE_32I with CUDA_R_8I
// operands): lda and ldb multiples of 4 and every batch's A and B 4-byte
// aligned; "" when they hold.
std::string Int8GemmRuleError(const void* A, int lda, long long strideA, const void* B, int ldb, long long strideB,
                              int batches) {
  if (lda % 4 != 0 || ldb % 4 != 0)
    return "int8 GEMM needs lda and ldb multiples of 4 (lda " + std::to_string(lda) + ", ldb " +
           std::to_string(ldb) + ")";
  auto aligned = [&](const void* p, long long stride) {
    return reinterpret_cast<uint64_t>(p) % 4 == 0 && (batches <= 1 || stride % 4 == 0);
  };
  if (!aligned(A, strideA) || !aligned(B, strideB)) return "int8 GEMM needs A and B (every batch) 4-byte aligned";
  return "";
}

// A and B of In, C (and alpha, beta) of T; `tf32_compute`: the call's
// compute type is CUBLAS_COMPUTE_32F_FAST_TF32.
template <typename In, typename T>
cublasStatus_t GemmStridedBatched(const char* call, cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k, const T* alpha, const In* A,
                                  int lda, long long strideA, const In* B, int ldb, long long strideB,
                                  const T* beta, T* C, int ldc, long long strideC, int batches,
                                  bool tf32_compute = false) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  std::string invalid = GemmArgumentError(transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, batches);
  if (!invalid.empty()) return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  if (m == 0 || n == 0 || batches == 0) return CUBLAS_STATUS_SUCCESS;
  cublasStatus_t entered = CUBLAS_STATUS_SUCCESS;
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = EnterHandleStream(call, handle, &entered);
  if (!timeline) return entered;
  const T a = *alpha, b = *beta;
  const bool reads_ab = k > 0 && a != T(0);
  Operand opA{"A", reinterpret_cast<uint64_t>(A), strideA, transa == CUBLAS_OP_N ? m : k,
              transa == CUBLAS_OP_N ? k : m, lda};
  Operand opB{"B", reinterpret_cast<uint64_t>(B), strideB, transb == CUBLAS_OP_N ? k : n,
              transb == CUBLAS_OP_N ? n : k, ldb};
  Operand opC{"C", reinterpret_cast<uint64_t>(C), strideC, m, n, ldc};
  const kiln::emu::model::GemmMath math = MathOf<In>(handle->math, tf32_compute);

  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();  // no cuMemFree while the GEMM runs
      std::string fault = reads_ab ? CheckMatrix(call, opA, batches, sizeof(In), false) : "";
      if (fault.empty() && reads_ab) fault = CheckMatrix(call, opB, batches, sizeof(In), false);
      if (fault.empty() && b != T(0)) fault = CheckMatrix(call, opC, batches, sizeof(T), false);
      if (fault.empty()) fault = CheckMatrix(call, opC, batches, sizeof(T), true);
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      for (int64_t i = 0; i < batches; ++i) {
        T* c = C + i * strideC;
        // beta == 0: C is not read, so zero it first in case cblas scales it.
        if (!reads_ab || b == T(0)) ScaleC(c, m, n, ldc, b);
        if (!reads_ab) continue;
        const In* a_i = A + i * strideA;
        const In* b_i = B + i * strideB;
        if constexpr (std::is_same_v<In, float>) {
          if (math == kiln::emu::model::GemmMath::kTf32Tensor) {
            std::vector<float> ra = RoundedToTf32(a_i, lda, transa == CUBLAS_OP_N ? k : m);
            std::vector<float> rb = RoundedToTf32(b_i, ldb, transb == CUBLAS_OP_N ? n : k);
            Gemm(CblasOp(transa), CblasOp(transb), m, n, k, a, ra.data(), lda, rb.data(), ldb, b, c, ldc);
            continue;
          }
        }
        Gemm(CblasOp(transa), CblasOp(transb), m, n, k, a, a_i, lda, b_i, ldb, b, c, ldc);
      }
    }
    kiln::emu::model::GemmShape shape{m, n, k, batches, sizeof(In), reads_ab, b != T(0), sizeof(T),
                                      std::is_same_v<In, std::complex<float>> || std::is_same_v<In, std::complex<double>>};
    kiln::emu::model::GemmTime time = kiln::emu::model::ModelGemm(shape, math);
    timeline.AddLibraryCall(time.total, time.optimal);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, handle->stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

// x[i * incx] *= alpha for i < n: T the element, S the scale (a complex
// vector scaled by a real, as cublasCsscal / Zdscal). The vector must lie
// in a live allocation and have been written (initcheck); it counts as one
// launch, modeled as a streaming read and write.
template <typename T, typename S>
cublasStatus_t Scal(const char* call, cublasHandle_t handle, int n, const S* alpha, T* x, int incx) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  if (!alpha) return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": alpha must not be null");
  if (n <= 0 || incx <= 0) return CUBLAS_STATUS_SUCCESS;  // cuBLAS returns at once
  cublasStatus_t entered = CUBLAS_STATUS_SUCCESS;
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = EnterHandleStream(call, handle, &entered);
  if (!timeline) return entered;
  const S a = *alpha;
  const uint64_t address = reinterpret_cast<uint64_t>(x);
  const uint64_t bytes = (static_cast<uint64_t>(n - 1) * static_cast<uint64_t>(incx) + 1) * sizeof(T);
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();  // no cuMemFree while it runs
      kiln::emu::DeviceMemory& memory = Device().memory();
      kiln::emu::Allocation* alloc = memory.Find(address, bytes);
      std::string fault;
      if (!alloc) {
        fault = std::string("invalid read of vector x by ") + call + ": " + memory.Describe(address, bytes);
      } else if (Device().checks().uninitialized) {
        for (int i = 0; i < n && fault.empty(); ++i) {
          uint64_t at = address + static_cast<uint64_t>(i) * static_cast<uint64_t>(incx) * sizeof(T);
          int64_t first = alloc->FirstUninitialized(at, sizeof(T));
          if (first >= 0) {
            fault = std::string("uninitialized read of vector x by ") + call + ": byte " +
                    memory.Describe(static_cast<uint64_t>(first), 1) + " was never written";
          }
        }
      }
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      for (int i = 0; i < n; ++i) x[static_cast<int64_t>(i) * incx] *= a;
    }
    kiln::emu::model::GemmTime time = kiln::emu::model::ModelScal(n, double(n) * sizeof(T));
    timeline.AddLibraryCall(time.total, time.optimal);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, handle->stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

// ---- geam ------------------------------------------------------------------

std::complex<double> Wide(float x) { return x; }
std::complex<double> Wide(double x) { return x; }
std::complex<double> Wide(cuComplex x) { return {x.x, x.y}; }
std::complex<double> Wide(cuDoubleComplex x) { return {x.x, x.y}; }
template <typename T>
T Narrow(std::complex<double> z) {
  if constexpr (std::is_same_v<T, cuComplex>) return make_cuComplex(float(z.real()), float(z.imag()));
  else if constexpr (std::is_same_v<T, cuDoubleComplex>) return make_cuDoubleComplex(z.real(), z.imag());
  else return static_cast<T>(z.real());
}

// Element (i, j) of op(X) for column-major X with leading dimension ld.
template <typename T>
std::complex<double> OpElement(cublasOperation_t op, const T* x, int ld, int i, int j) {
  if (op == CUBLAS_OP_N) return Wide(x[static_cast<int64_t>(j) * ld + i]);
  std::complex<double> v = Wide(x[static_cast<int64_t>(i) * ld + j]);
  return op == CUBLAS_OP_C ? std::conj(v) : v;
}

// C = alpha op(A) + beta op(B), all m x n after op; beta == 0 means B is
// not read (alpha == 0 likewise A). The result is formed before C is
// written, so C may be A or B (cuBLAS' in-place modes). Modeled as a
// streaming read and write.
template <typename T>
cublasStatus_t Geam(const char* call, cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int m, int n, const T* alpha, const T* A, int lda, const T* beta, const T* B, int ldb, T* C,
                    int ldc) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  auto valid_op = [](cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; };
  std::string invalid;
  if (!valid_op(transa) || !valid_op(transb)) invalid = "transa and transb must be CUBLAS_OP_N, _T or _C";
  else if (m < 0 || n < 0) invalid = "m and n must not be negative";
  else if (lda < std::max(1, transa == CUBLAS_OP_N ? m : n)) invalid = "lda " + std::to_string(lda) + " too small";
  else if (ldb < std::max(1, transb == CUBLAS_OP_N ? m : n)) invalid = "ldb " + std::to_string(ldb) + " too small";
  else if (ldc < std::max(1, m)) invalid = "ldc " + std::to_string(ldc) + " < max(1, " + std::to_string(m) + ")";
  else if (!alpha || !beta) invalid = "alpha and beta must not be null";
  if (!invalid.empty()) return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  cublasStatus_t entered = CUBLAS_STATUS_SUCCESS;
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = EnterHandleStream(call, handle, &entered);
  if (!timeline) return entered;
  const std::complex<double> a = Wide(*alpha), b = Wide(*beta);
  auto stored = [](const char* name, const T* x, cublasOperation_t op, int m, int n, int ld) {
    return Operand{name, reinterpret_cast<uint64_t>(x), 0, op == CUBLAS_OP_N ? m : n, op == CUBLAS_OP_N ? n : m, ld};
  };
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();  // no cuMemFree while it runs
      std::string fault = a != 0.0 ? CheckMatrix(call, stored("A", A, transa, m, n, lda), 1, sizeof(T), false) : "";
      if (fault.empty() && b != 0.0) fault = CheckMatrix(call, stored("B", B, transb, m, n, ldb), 1, sizeof(T), false);
      if (fault.empty()) fault = CheckMatrix(call, Operand{"C", reinterpret_cast<uint64_t>(C), 0, m, n, ldc}, 1,
                                             sizeof(T), true);
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      std::vector<T> result(static_cast<size_t>(m) * static_cast<size_t>(n));
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          std::complex<double> v = 0;
          if (a != 0.0) v += a * OpElement(transa, A, lda, i, j);
          if (b != 0.0) v += b * OpElement(transb, B, ldb, i, j);
          result[static_cast<size_t>(j) * m + i] = Narrow<T>(v);
        }
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) C[static_cast<int64_t>(j) * ldc + i] = result[static_cast<size_t>(j) * m + i];
    }
    const double elements = double(m) * double(n);
    const double reads = (a != 0.0 ? 1 : 0) + (b != 0.0 ? 1 : 0);
    kiln::emu::model::GemmTime time =
        kiln::emu::model::ModelScal(int64_t(m) * n, (reads + 1) * elements * double(sizeof(T)));
    timeline.AddLibraryCall(time.total, time.optimal);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, handle->stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

// ---- trsm ------------------------------------------------------------------

bool IsZero(float x) { return x == 0; }
bool IsZero(double x) { return x == 0; }
bool IsZero(cuComplex x) { return x.x == 0 && x.y == 0; }
bool IsZero(cuDoubleComplex x) { return x.x == 0 && x.y == 0; }

void Trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int m, int n, const float* alpha,
          const float* a, int lda, float* b, int ldb) {
  cblas_strsm(CblasColMajor, side, uplo, trans, diag, m, n, *alpha, a, lda, b, ldb);
}
void Trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int m, int n,
          const double* alpha, const double* a, int lda, double* b, int ldb) {
  cblas_dtrsm(CblasColMajor, side, uplo, trans, diag, m, n, *alpha, a, lda, b, ldb);
}
void Trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int m, int n,
          const cuComplex* alpha, const cuComplex* a, int lda, cuComplex* b, int ldb) {
  cblas_ctrsm(CblasColMajor, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
}
void Trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int m, int n,
          const cuDoubleComplex* alpha, const cuDoubleComplex* a, int lda, cuDoubleComplex* b, int ldb) {
  cblas_ztrsm(CblasColMajor, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
}

// cuBLAS' argument checks for trsm, in its order; "" when valid.
std::string TrsmArgumentError(cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,
                              cublasDiagType_t diag, int m, int n, const void* alpha, int lda, int ldb) {
  if (side != CUBLAS_SIDE_LEFT && side != CUBLAS_SIDE_RIGHT) return "side must be CUBLAS_SIDE_LEFT or _RIGHT";
  if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)
    return "uplo must be CUBLAS_FILL_MODE_LOWER or _UPPER";
  if (trans != CUBLAS_OP_N && trans != CUBLAS_OP_T && trans != CUBLAS_OP_C)
    return "trans must be CUBLAS_OP_N, _T or _C";
  if (diag != CUBLAS_DIAG_NON_UNIT && diag != CUBLAS_DIAG_UNIT) return "diag must be CUBLAS_DIAG_NON_UNIT or _UNIT";
  if (m < 0 || n < 0) return "m and n must not be negative";
  int k = side == CUBLAS_SIDE_LEFT ? m : n;
  if (lda < std::max(1, k)) return "lda " + std::to_string(lda) + " < max(1, " + std::to_string(k) + ")";
  if (ldb < std::max(1, m)) return "ldb " + std::to_string(ldb) + " < max(1, " + std::to_string(m) + ")";
  if (!alpha) return "alpha must not be null";
  return "";
}

// op(A) X = alpha B (left) or X op(A) = alpha B, X overwriting B; A is k x
// k, read in its `uplo` triangle only. alpha == 0 sets B to zero without
// reading A or B (BLAS' rule).
template <typename T>
cublasStatus_t TriangularSolve(const char* call, cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                               cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const T* alpha,
                               const T* A, int lda, T* B, int ldb) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, std::string(call) + ": the handle is null");
  std::string invalid = TrsmArgumentError(side, uplo, trans, diag, m, n, alpha, lda, ldb);
  if (!invalid.empty()) return Reject(CUBLAS_STATUS_INVALID_VALUE, std::string(call) + ": " + invalid);
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  cublasStatus_t entered = CUBLAS_STATUS_SUCCESS;
  std::shared_ptr<kiln::emu::driver::StreamTimeline> timeline = EnterHandleStream(call, handle, &entered);
  if (!timeline) return entered;
  const bool solves = !IsZero(*alpha);
  const T alpha_value = *alpha;  // a host value, read at the call as cuBLAS does
  const int k = side == CUBLAS_SIDE_LEFT ? m : n;
  using kiln::emu::libs::Triangle;
  Operand opA{"A", reinterpret_cast<uint64_t>(A), 0, k, k, lda,
              uplo == CUBLAS_FILL_MODE_LOWER ? Triangle::kLower : Triangle::kUpper};
  Operand opB{"B", reinterpret_cast<uint64_t>(B), 0, m, n, ldb};
  // Runs now, or when the graph a capture of the stream makes is launched.
  auto work = [=](CUstream, kiln::emu::driver::StreamTimeline& timeline) -> CUresult {
    {
      auto lock = Device().memory().ReadLock();  // no cuMemFree while the solve runs
      std::string fault = solves ? CheckMatrix(call, opA, 1, sizeof(T), false) : "";
      if (fault.empty() && solves) fault = CheckMatrix(call, opB, 1, sizeof(T), false);
      if (fault.empty()) fault = CheckMatrix(call, opB, 1, sizeof(T), true);
      if (!fault.empty()) {
        return Device().FailLaunch(fault);
      }
      if (solves) {
        Trsm(side == CUBLAS_SIDE_LEFT ? CblasLeft : CblasRight, uplo == CUBLAS_FILL_MODE_LOWER ? CblasLower : CblasUpper,
             trans == CUBLAS_OP_N ? CblasNoTrans : (trans == CUBLAS_OP_T ? CblasTrans : CblasConjTrans),
             diag == CUBLAS_DIAG_UNIT ? CblasUnit : CblasNonUnit, m, n, &alpha_value, A, lda, B, ldb);
      } else {
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < m; ++i) B[static_cast<int64_t>(j) * ldb + i] = T{};
      }
    }
    kiln::emu::model::SolverShape shape;
    shape.flops = solves ? double(k) * double(k) * double(m == k ? n : m) : 0;
    shape.bytes = double(sizeof(T)) * ((solves ? double(k) * double(k + 1) / 2 + double(m) * double(n) : 0) +
                                       double(m) * double(n));
    shape.columns = solves ? k : 0;
    shape.launches_per_panel = kiln::emu::model::h100::kTrsmLaunchesPerPanel;
    kiln::emu::model::GemmTime time = kiln::emu::libs::ModelSolverCall<T>(shape);
    timeline.AddLibraryCall(time.total, time.optimal);
    return CUDA_SUCCESS;
  };
  if (Device().IssueLibraryCall(call, handle->stream, *timeline, std::move(work)) != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

// Complex GEMMs: cuComplex / cuDoubleComplex (Cu) are layout-compatible
// with std::complex<float> / <double> (C), which the shared GEMM path
// computes with.
template <typename C, typename Cu>
cublasStatus_t ComplexGemmStridedBatched(const char* call, cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k, const Cu* alpha,
                                         const Cu* A, int lda, long long strideA, const Cu* B, int ldb,
                                         long long strideB, const Cu* beta, Cu* C_, int ldc, long long strideC,
                                         int batches) {
  auto in = [](const Cu* x) { return reinterpret_cast<const C*>(x); };
  return GemmStridedBatched(call, handle, transa, transb, m, n, k, in(alpha), in(A), lda, strideA, in(B), ldb,
                            strideB, in(beta), reinterpret_cast<C*>(C_), ldc, strideC, batches);
}

}  // namespace

extern "C" {

KILN_EMU_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (!handle) return Reject(CUBLAS_STATUS_INVALID_VALUE, "cublasCreate: the handle pointer is null");
  if (Device().EnterContext() != CUDA_SUCCESS) return CUBLAS_STATUS_NOT_INITIALIZED;  // detail set
  *handle = new cublasContext();
  Device().CountLibraryHandles(1);
  return CUBLAS_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, "cublasDestroy: the handle is null");
  delete handle;
  Device().CountLibraryHandles(-1);
  return CUBLAS_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, "cublasSetStream: the handle is null");
  if (!Device().timeline().Find(streamId)) {
    return Reject(CUBLAS_STATUS_INVALID_VALUE, "cublasSetStream: not a live stream");
  }
  handle->stream = streamId;
  return CUBLAS_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int* version) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, "cublasGetVersion: the handle is null");
  if (!version) return Reject(CUBLAS_STATUS_INVALID_VALUE, "cublasGetVersion: null pointer");
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}

KILN_EMU_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, "cublasSetMathMode: the handle is null");
  // CUBLAS_TF32_TENSOR_OP_MATH rounds sgemm's operands to TF32 (see
  // RoundToTf32); the legacy CUBLAS_TENSOR_OP_MATH, which permits FP16
  // down-conversion, is honoured at full precision, which it also permits.
  int base = mode & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  if (base == CUBLAS_DEFAULT_MATH || base == CUBLAS_TENSOR_OP_MATH || base == CUBLAS_PEDANTIC_MATH ||
      base == CUBLAS_TF32_TENSOR_OP_MATH) {
    handle->math = mode;
    return CUBLAS_STATUS_SUCCESS;
  }
  return Reject(CUBLAS_STATUS_NOT_SUPPORTED,
                "cublasSetMathMode: math mode " + std::to_string(static_cast<int>(mode)) +
                    " is not supported by the emulator");
}

KILN_EMU_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  kiln::emu::driver::ClearErrorDetail();
  if (!handle) return Reject(CUBLAS_STATUS_NOT_INITIALIZED, "cublasGetMathMode: the handle is null");
  if (!mode) return Reject(CUBLAS_STATUS_INVALID_VALUE, "cublasGetMathMode: null pointer");
  *mode = handle->math;
  return CUBLAS_STATUS_SUCCESS;
}

KILN_EMU_EXPORT const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

KILN_EMU_EXPORT const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "an error was detected when checking the current licensing";
  }
  return "unknown cuBLAS status";
}

KILN_EMU_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb,
    long long int strideB, const float* beta, float* C, int ldc, long long int strideC, int batchCount) {
  return GemmStridedBatched("cublasSgemmStridedBatched", handle, transa, transb, m, n, k, alpha, A, lda,
                            strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

KILN_EMU_EXPORT cublasStatus_t cublasDgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const double* alpha, const double* A, int lda, long long int strideA, const double* B, int ldb,
    long long int strideB, const double* beta, double* C, int ldc, long long int strideC, int batchCount) {
  return GemmStridedBatched("cublasDgemmStridedBatched", handle, transa, transb, m, n, k, alpha, A, lda,
                            strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

KILN_EMU_EXPORT cublasStatus_t cublasCgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const cuComplex* alpha, const cuComplex* A, int lda, long long int strideA, const cuComplex* B, int ldb,
    long long int strideB, const cuComplex* beta, cuComplex* C, int ldc, long long int strideC, int batchCount) {
  return ComplexGemmStridedBatched<std::complex<float>>("cublasCgemmStridedBatched", handle, transa, transb, m, n,
                                                        k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                                                        strideC, batchCount);
}

KILN_EMU_EXPORT cublasStatus_t cublasZgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, long long int strideA,
    const cuDoubleComplex* B, int ldb, long long int strideB, const cuDoubleComplex* beta, cuDoubleComplex* C,
    int ldc, long long int strideC, int batchCount) {
  return ComplexGemmStridedBatched<std::complex<double>>("cublasZgemmStridedBatched", handle, transa, transb, m,
                                                         n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
                                                         ldc, strideC, batchCount);
}

// The forms kiln calls: bf16 A and B, f32 C, f32 compute (tensor cores);
// f32 A, B and C with f32 or TF32 compute; s8 A and B, s32 C, 32-bit integer compute (the int8
// tensor cores, int32 alpha and beta). Any other type combination,
// compute type or algorithm is CUBLAS_STATUS_NOT_SUPPORTED.
KILN_EMU_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA, const void* B,
    cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
    long long int strideC, int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const char* call = "cublasGemmStridedBatchedEx";
  kiln::emu::driver::ClearErrorDetail();
  if (algo != CUBLAS_GEMM_DEFAULT && algo != CUBLAS_GEMM_DEFAULT_TENSOR_OP)
    return Reject(CUBLAS_STATUS_NOT_SUPPORTED, std::string(call) + ": only the default algorithm");
  const bool bf16 = Atype == CUDA_R_16BF && Btype == CUDA_R_16BF && Ctype == CUDA_R_32F &&
                    computeType == CUBLAS_COMPUTE_32F;
  const bool f32 = Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F &&
                   (computeType == CUBLAS_COMPUTE_32F || computeType == CUBLAS_COMPUTE_32F_FAST_TF32);
  const bool int8 = Atype == CUDA_R_8I && Btype == CUDA_R_8I && Ctype == CUDA_R_32I &&
                    (computeType == CUBLAS_COMPUTE_32I || computeType == CUBLAS_COMPUTE_32I_PEDANTIC);
  if (bf16) {
    return GemmStridedBatched(call, handle, transa, transb, m, n, k, static_cast<const float*>(alpha),
                              static_cast<const bfloat16*>(A), lda, strideA, static_cast<const bfloat16*>(B), ldb,
                              strideB, static_cast<const float*>(beta), static_cast<float*>(C), ldc, strideC,
                              batchCount);
  }
  if (f32) {
    return GemmStridedBatched(call, handle, transa, transb, m, n, k, static_cast<const float*>(alpha),
                              static_cast<const float*>(A), lda, strideA, static_cast<const float*>(B), ldb, strideB,
                              static_cast<const float*>(beta), static_cast<float*>(C), ldc, strideC, batchCount,
                              computeType == CUBLAS_COMPUTE_32F_FAST_TF32);
  }
  if (int8) {
    std::string imma = Int8GemmRuleError(A, lda, strideA, B, ldb, strideB, batchCount);
    if (!imma.empty()) return Reject(CUBLAS_STATUS_NOT_SUPPORTED, std::string(call) + ": " + imma);
    return GemmStridedBatched(call, handle, transa, transb, m, n, k, static_cast<const int32_t*>(alpha),
                              static_cast<const int8_t*>(A), lda, strideA, static_cast<const int8_t*>(B), ldb,
                              strideB, static_cast<const int32_t*>(beta), static_cast<int32_t*>(C), ldc, strideC,
                              batchCount);
  }
  return Reject(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string(call) + ": the emulator implements bf16 x bf16 -> f32 (CUBLAS_COMPUTE_32F),"
                                    " f32 (CUBLAS_COMPUTE_32F or _32F_FAST_TF32) and s8 x s8 -> s32"
                                    " (CUBLAS_COMPUTE_32I) only");
}

KILN_EMU_EXPORT cublasStatus_t cublasStrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                                              cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
                                              const float* alpha, const float* A, int lda, float* B, int ldb) {
  return TriangularSolve("cublasStrsm", handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);
}

KILN_EMU_EXPORT cublasStatus_t cublasDtrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                                              cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
                                              const double* alpha, const double* A, int lda, double* B, int ldb) {
  return TriangularSolve("cublasDtrsm", handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);
}

KILN_EMU_EXPORT cublasStatus_t cublasCtrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                                              cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
                                              const cuComplex* alpha, const cuComplex* A, int lda, cuComplex* B,
                                              int ldb) {
  return TriangularSolve("cublasCtrsm", handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);
}

KILN_EMU_EXPORT cublasStatus_t cublasZtrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                                              cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
                                              const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda,
                                              cuDoubleComplex* B, int ldb) {
  return TriangularSolve("cublasZtrsm", handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);
}

#define KILN_GEAM_ENTRY_POINT(P, T)                                                                                 \
  KILN_EMU_EXPORT cublasStatus_t cublas##P##geam(cublasHandle_t handle, cublasOperation_t transa,                  \
                                                 cublasOperation_t transb, int m, int n, const T* alpha, const T* A, \
                                                 int lda, const T* beta, const T* B, int ldb, T* C, int ldc) {       \
    return Geam("cublas" #P "geam", handle, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);            \
  }
KILN_GEAM_ENTRY_POINT(S, float)
KILN_GEAM_ENTRY_POINT(D, double)
KILN_GEAM_ENTRY_POINT(C, cuComplex)
KILN_GEAM_ENTRY_POINT(Z, cuDoubleComplex)
#undef KILN_GEAM_ENTRY_POINT

KILN_EMU_EXPORT cublasStatus_t cublasSscal_v2(cublasHandle_t handle, int n, const float* alpha, float* x, int incx) {
  return Scal("cublasSscal", handle, n, alpha, x, incx);
}

KILN_EMU_EXPORT cublasStatus_t cublasDscal_v2(cublasHandle_t handle, int n, const double* alpha, double* x, int incx) {
  return Scal("cublasDscal", handle, n, alpha, x, incx);
}

KILN_EMU_EXPORT cublasStatus_t cublasCsscal_v2(cublasHandle_t handle, int n, const float* alpha, cuComplex* x,
                                               int incx) {
  return Scal("cublasCsscal", handle, n, alpha, reinterpret_cast<std::complex<float>*>(x), incx);
}

KILN_EMU_EXPORT cublasStatus_t cublasZdscal_v2(cublasHandle_t handle, int n, const double* alpha,
                                               cuDoubleComplex* x, int incx) {
  return Scal("cublasZdscal", handle, n, alpha, reinterpret_cast<std::complex<double>*>(x), incx);
}

}  // extern "C"
