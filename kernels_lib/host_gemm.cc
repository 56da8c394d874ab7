// Host GEMM through cblas; see host_gemm.h.
#include "kernels_lib/host_gemm.h"

#include <cblas.h>

#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "common/float_formats.h"

namespace kiln::kernels {
namespace {

// Leading dimension of a stored row-major matrix of `rows` x `cols`, or the
// dense default (cols) when the thunk left it 0.
int64_t LeadingDim(int64_t given, int64_t cols) { return given > 0 ? given : (cols > 0 ? cols : 1); }

Status CheckShape(const thunks::GemmThunk& g) {
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0) {
    return Error("gemm: negative dimension (m=" + std::to_string(g.m) + " n=" +
                 std::to_string(g.n) + " k=" + std::to_string(g.k) + " batch=" +
                 std::to_string(g.batch) + ")");
  }
  if (g.alpha_imag != 0.0 && !IsComplex(g.out_type)) return Error("gemm: complex alpha on a real gemm");
  return Status::Ok();
}

// alpha and beta in the result's type: complex GEMMs take alpha's
// imaginary part too.
template <typename Out>
Out Scalar(double real, double imag) {
  if constexpr (std::is_same_v<Out, std::complex<float>> || std::is_same_v<Out, std::complex<double>>)
    return Out(static_cast<typename Out::value_type>(real), static_cast<typename Out::value_type>(imag));
  else
    return static_cast<Out>(real);
}

// cblas_cgemm and cblas_zgemm take alpha and beta by address.
template <typename C, typename Fn>
auto ByAddress(Fn gemm) {
  return [gemm](CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, C alpha,
                const C* a, int64_t lda, const C* b, int64_t ldb, C beta, C* c, int64_t ldc) {
    gemm(order, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  };
}

// Operands of In, the result of Out (T for both, or OpenBLAS' bfloat16
// operands with a float result for sbgemm).
template <typename In, typename Out, typename Fn>
void RunBatches(const thunks::GemmThunk& g, const In* lhs, const In* rhs, Out* out, Fn gemm_fn) {
  // Stored shapes: lhs is m x k (k x m transposed), rhs k x n (n x k).
  int64_t lda = LeadingDim(g.lhs_leading_dim, g.lhs_transposed ? g.m : g.k);
  int64_t ldb = LeadingDim(g.rhs_leading_dim, g.rhs_transposed ? g.k : g.n);
  int64_t ldc = LeadingDim(g.out_leading_dim, g.n);
  int64_t lhs_stride = g.lhs_batch_stride > 0 ? g.lhs_batch_stride : g.m * g.k;
  int64_t rhs_stride = g.rhs_batch_stride > 0 ? g.rhs_batch_stride : g.k * g.n;
  int64_t out_stride = g.out_batch_stride > 0 ? g.out_batch_stride : g.m * g.n;
  CBLAS_TRANSPOSE ta = g.lhs_transposed ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = g.rhs_transposed ? CblasTrans : CblasNoTrans;
  for (int64_t b = 0; b < g.batch; ++b) {
    gemm_fn(CblasRowMajor, ta, tb, g.m, g.n, g.k, Scalar<Out>(g.alpha_real, g.alpha_imag),
            lhs + b * lhs_stride, lda, rhs + b * rhs_stride, ldb, Scalar<Out>(g.beta, 0),
            out + b * out_stride, ldc);
  }
}

// Elements from an operand's first batch to the end of its last, as
// RunBatches addresses them.
size_t OperandElements(const thunks::GemmThunk& g, bool lhs) {
  int64_t rows = lhs ? (g.lhs_transposed ? g.k : g.m) : (g.rhs_transposed ? g.n : g.k);
  int64_t cols = lhs ? (g.lhs_transposed ? g.m : g.k) : (g.rhs_transposed ? g.k : g.n);
  int64_t ld = LeadingDim(lhs ? g.lhs_leading_dim : g.rhs_leading_dim, cols);
  int64_t stride = lhs ? (g.lhs_batch_stride > 0 ? g.lhs_batch_stride : g.m * g.k)
                       : (g.rhs_batch_stride > 0 ? g.rhs_batch_stride : g.k * g.n);
  if (rows == 0 || cols == 0) return 0;
  return static_cast<size_t>((g.batch - 1) * stride + (rows - 1) * ld + cols);
}

// s8 x s8 -> s32, row-major as RunBatches: each output an int32 sum of
// products that wraps modulo 2^32 like XLA's integer dot (the arithmetic in
// uint32_t, where overflow is defined). Integral alpha and beta only.
Status Int8Gemm(const thunks::GemmThunk& g, const int8_t* lhs, const int8_t* rhs, int32_t* out) {
  if (g.alpha_real != static_cast<int32_t>(g.alpha_real) || g.beta != static_cast<int32_t>(g.beta))
    return Error("Unimplemented: int8 gemm with a non-integer alpha or beta");
  const uint32_t alpha = static_cast<uint32_t>(static_cast<int32_t>(g.alpha_real));
  const uint32_t beta = static_cast<uint32_t>(static_cast<int32_t>(g.beta));
  const int64_t lda = LeadingDim(g.lhs_leading_dim, g.lhs_transposed ? g.m : g.k);
  const int64_t ldb = LeadingDim(g.rhs_leading_dim, g.rhs_transposed ? g.k : g.n);
  const int64_t ldc = LeadingDim(g.out_leading_dim, g.n);
  // Element strides of lhs(i, p) and rhs(p, j) along i, p and p, j.
  const int64_t a_i = g.lhs_transposed ? 1 : lda, a_p = g.lhs_transposed ? lda : 1;
  const int64_t b_p = g.rhs_transposed ? 1 : ldb, b_j = g.rhs_transposed ? ldb : 1;
  const int64_t lhs_stride = g.lhs_batch_stride > 0 ? g.lhs_batch_stride : g.m * g.k;
  const int64_t rhs_stride = g.rhs_batch_stride > 0 ? g.rhs_batch_stride : g.k * g.n;
  const int64_t out_stride = g.out_batch_stride > 0 ? g.out_batch_stride : g.m * g.n;
  for (int64_t b = 0; b < g.batch; ++b) {
    const int8_t* A = lhs + b * lhs_stride;
    const int8_t* B = rhs + b * rhs_stride;
    int32_t* C = out + b * out_stride;
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        // int32 products of int8 are exact; their sum wraps.
        uint32_t sum = 0;
        for (int64_t p = 0; p < g.k; ++p)
          sum += static_cast<uint32_t>(int32_t{A[i * a_i + p * a_p]} * int32_t{B[p * b_p + j * b_j]});
        int32_t& c = C[i * ldc + j];
        uint32_t value = alpha * sum + (beta != 0 ? beta * static_cast<uint32_t>(c) : 0u);
        c = static_cast<int32_t>(value);
      }
    }
  }
  return Status::Ok();
}

std::vector<float> WidenBf16(const void* data, size_t count) {
  std::vector<float> out(count);
  WidenBf16ToF32(static_cast<const uint16_t*>(data), count, out.data());
  return out;
}

// Every value of an 8-bit float type, by bit pattern, as f32 (exact).
std::vector<float> F8Table(ElementType type) {
  std::vector<float> table(256);
  for (uint32_t bits = 0; bits < 256; ++bits) table[bits] = static_cast<float>(DecodeNarrowFloat(type, bits));
  return table;
}

std::vector<float> WidenF8(ElementType type, const void* data, size_t count) {
  const std::vector<float> table = F8Table(type);
  const uint8_t* in = static_cast<const uint8_t*>(data);
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = table[in[i]];
  return out;
}

// Elements from the result's first batch to the end of its last.
size_t ResultElements(const thunks::GemmThunk& g) {
  const int64_t ldc = LeadingDim(g.out_leading_dim, g.n);
  const int64_t stride = g.out_batch_stride > 0 ? g.out_batch_stride : g.m * g.n;
  return static_cast<size_t>((g.batch - 1) * stride + (g.m - 1) * ldc + g.n);
}

// An FP8 GEMM (thunks::IsFp8Gemm): the operands decoded to f32 (exact) and
// an sgemm, f32 accumulation as on the FP8 tensor cores; a bf16 or f16
// result is the f32 one rounded to nearest even once, as cuBLASLt's
// epilogue rounds it. A narrow result with beta != 0 would need C read in
// its type, which nothing emits.
Status Fp8Gemm(const thunks::GemmThunk& g, const void* lhs, const void* rhs, void* out) {
  std::vector<float> wide_lhs = WidenF8(g.lhs_type, lhs, OperandElements(g, /*lhs=*/true));
  std::vector<float> wide_rhs = WidenF8(g.rhs_type, rhs, OperandElements(g, /*lhs=*/false));
  if (g.out_type == ElementType::kF32) {
    RunBatches(g, wide_lhs.data(), wide_rhs.data(), static_cast<float*>(out), [](auto... a) { cblas_sgemm(a...); });
    return Status::Ok();
  }
  if (g.beta != 0) return Error("Unimplemented: fp8 gemm with a narrow result and beta != 0");
  const int64_t ldc = LeadingDim(g.out_leading_dim, g.n);
  const int64_t stride = g.out_batch_stride > 0 ? g.out_batch_stride : g.m * g.n;
  std::vector<float> wide_out(ResultElements(g));
  RunBatches(g, wide_lhs.data(), wide_rhs.data(), wide_out.data(), [](auto... a) { cblas_sgemm(a...); });
  uint16_t* narrow = static_cast<uint16_t*>(out);
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        const int64_t at = b * stride + i * ldc + j;
        narrow[at] = static_cast<uint16_t>(EncodeNarrowFloat(g.out_type, wide_out[static_cast<size_t>(at)]));
      }
  return Status::Ok();
}

}  // namespace

Status HostGemm(const thunks::GemmThunk& g, const void* lhs, const void* rhs, void* out) {
  KILN_RETURN_IF_ERROR(CheckShape(g));
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::Ok();
  bool same = g.lhs_type == g.rhs_type && g.rhs_type == g.out_type;
  if (same && g.out_type == ElementType::kF32) {
    RunBatches(g, static_cast<const float*>(lhs), static_cast<const float*>(rhs),
               static_cast<float*>(out),
               [](auto... a) { cblas_sgemm(a...); });
    return Status::Ok();
  }
  if (same && g.out_type == ElementType::kF64) {
    RunBatches(g, static_cast<const double*>(lhs), static_cast<const double*>(rhs),
               static_cast<double*>(out),
               [](auto... a) { cblas_dgemm(a...); });
    return Status::Ok();
  }
  // c64 and c128: OpenBLAS' complex GEMMs (transposes, never conjugates,
  // as HLO's dot).
  if (same && g.out_type == ElementType::kC64) {
    using C = std::complex<float>;
    RunBatches(g, static_cast<const C*>(lhs), static_cast<const C*>(rhs), static_cast<C*>(out),
               ByAddress<C>([](auto... a) { cblas_cgemm(a...); }));
    return Status::Ok();
  }
  if (same && g.out_type == ElementType::kC128) {
    using C = std::complex<double>;
    RunBatches(g, static_cast<const C*>(lhs), static_cast<const C*>(rhs), static_cast<C*>(out),
               ByAddress<C>([](auto... a) { cblas_zgemm(a...); }));
    return Status::Ok();
  }
  // bf16 x bf16 -> f32 (artifacts compiled for CUDA and the host share one
  // program): the operands widened to f32 (exact) and an sgemm, the f32
  // accumulation cuBLAS does (Debian's OpenBLAS has no sbgemm).
  if (g.lhs_type == ElementType::kBF16 && g.rhs_type == ElementType::kBF16 &&
      g.out_type == ElementType::kF32) {
    std::vector<float> wide_lhs = WidenBf16(lhs, OperandElements(g, /*lhs=*/true));
    std::vector<float> wide_rhs = WidenBf16(rhs, OperandElements(g, /*lhs=*/false));
    RunBatches(g, wide_lhs.data(), wide_rhs.data(), static_cast<float*>(out),
               [](auto... a) { cblas_sgemm(a...); });
    return Status::Ok();
  }
  // s8 x s8 -> s32: the int8 GEMMs compiled for CUDA, in a program the host shares.
  if (g.lhs_type == ElementType::kS8 && g.rhs_type == ElementType::kS8 && g.out_type == ElementType::kS32)
    return Int8Gemm(g, static_cast<const int8_t*>(lhs), static_cast<const int8_t*>(rhs), static_cast<int32_t*>(out));
  if (thunks::IsFp8Gemm(g)) return Fp8Gemm(g, lhs, rhs, out);
  return Error("Unimplemented: host gemm of " + std::string(ElementTypeName(g.lhs_type)) + " x " +
               std::string(ElementTypeName(g.rhs_type)) + " -> " +
               std::string(ElementTypeName(g.out_type)) +
               " (only f32, f64, c64, c128, bf16 x bf16 -> f32, s8 x s8 -> s32 and fp8 gemms)");
}

}  // namespace kiln::kernels
