// Host GEMM through cblas; see host_gemm.h.
#include "kernels_lib/host_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "common/float_formats.h"
#include "kernels_lib/onednn_gemm.h"
#include "kernels_lib/openblas_kernels.h"

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

// Elements from the result's first batch to the end of its last.
size_t ResultElements(const thunks::GemmThunk& g) {
  const int64_t ldc = LeadingDim(g.out_leading_dim, g.n);
  const int64_t stride = g.out_batch_stride > 0 ? g.out_batch_stride : g.m * g.n;
  return static_cast<size_t>((g.batch - 1) * stride + (g.m - 1) * ldc + g.n);
}

// s8 operands widened to f32: exact.
std::vector<float> WidenS8(const void* data, size_t count) {
  const int8_t* in = static_cast<const int8_t*>(data);
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<float>(in[i]);
  return out;
}

// Every output position of `g` (batch, row, column) as an index into its
// result, in order.
template <typename Fn>
void ForEachOutput(const thunks::GemmThunk& g, Fn fn) {
  const int64_t ldc = LeadingDim(g.out_leading_dim, g.n);
  const int64_t stride = g.out_batch_stride > 0 ? g.out_batch_stride : g.m * g.n;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) fn(static_cast<size_t>(b * stride + i * ldc + j));
}

// The k of one sgemm whose f32 sums of s8 products are exact: each product
// is at most 2^14 in magnitude, so every partial sum of up to 2^10 of them
// is an integer below 2^24, whatever order OpenBLAS adds them in.
constexpr int64_t kExactSgemmK = int64_t{1} << 10;

// The exact integer sums of an s8 x s8 GEMM, modulo 2^32, laid out as its
// result: sgemms of the widened operands over slices of at most
// kExactSgemmK along k, each slice's (exact) f32 sums added in uint32_t.
std::vector<uint32_t> Int8Sums(const thunks::GemmThunk& g, const void* lhs, const void* rhs) {
  const std::vector<float> wide_lhs = WidenS8(lhs, OperandElements(g, /*lhs=*/true));
  const std::vector<float> wide_rhs = WidenS8(rhs, OperandElements(g, /*lhs=*/false));
  std::vector<uint32_t> sums(ResultElements(g), 0);
  std::vector<float> slice_sums(sums.size());
  // The slice's thunk: explicit leading dimensions and strides (the
  // defaults would follow its smaller k), unit alpha and no beta.
  thunks::GemmThunk slice = g;
  slice.lhs_leading_dim = LeadingDim(g.lhs_leading_dim, g.lhs_transposed ? g.m : g.k);
  slice.rhs_leading_dim = LeadingDim(g.rhs_leading_dim, g.rhs_transposed ? g.k : g.n);
  slice.lhs_batch_stride = g.lhs_batch_stride > 0 ? g.lhs_batch_stride : g.m * g.k;
  slice.rhs_batch_stride = g.rhs_batch_stride > 0 ? g.rhs_batch_stride : g.k * g.n;
  slice.alpha_real = 1;
  slice.beta = 0;
  for (int64_t k0 = 0; k0 < g.k; k0 += kExactSgemmK) {
    slice.k = std::min(kExactSgemmK, g.k - k0);
    // Element k0 of the contraction: a column of a row-major [m,k] lhs or
    // [n,k] rhs, a row of the transposed forms.
    const int64_t lhs_at = g.lhs_transposed ? k0 * slice.lhs_leading_dim : k0;
    const int64_t rhs_at = g.rhs_transposed ? k0 : k0 * slice.rhs_leading_dim;
    RunBatches(slice, wide_lhs.data() + lhs_at, wide_rhs.data() + rhs_at, slice_sums.data(),
               [](auto... a) { cblas_sgemm(a...); });
    ForEachOutput(g, [&](size_t at) { sums[at] += static_cast<uint32_t>(static_cast<int64_t>(slice_sums[at])); });
  }
  return sums;
}

// s8 x s8 -> s32, row-major as RunBatches: each output an int32 sum of
// products that wraps modulo 2^32 like XLA's integer dot. OpenBLAS has no
// integer GEMM, so the exact sums come from sgemms of widened operands
// (Int8Sums: 6x the throughput of a plain loop at 1024^3 on the build
// machine, bench/host_int8_gemm_bench), and alpha, beta and the wrap are
// applied in uint32_t, where overflow is defined. Integral alpha and beta
// only.
Status Int8Gemm(const thunks::GemmThunk& g, const void* lhs, const void* rhs, int32_t* out) {
  if (g.alpha_real != static_cast<int32_t>(g.alpha_real) || g.beta != static_cast<int32_t>(g.beta))
    return Error("Unimplemented: int8 gemm with a non-integer alpha or beta");
  const uint32_t alpha = static_cast<uint32_t>(static_cast<int32_t>(g.alpha_real));
  const uint32_t beta = static_cast<uint32_t>(static_cast<int32_t>(g.beta));
  const std::vector<uint32_t> sums = Int8Sums(g, lhs, rhs);
  ForEachOutput(g, [&](size_t at) {
    out[at] = static_cast<int32_t>(alpha * sums[at] + (beta != 0 ? beta * static_cast<uint32_t>(out[at]) : 0u));
  });
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
  std::vector<float> wide_out(ResultElements(g));
  RunBatches(g, wide_lhs.data(), wide_rhs.data(), wide_out.data(), [](auto... a) { cblas_sgemm(a...); });
  uint16_t* narrow = static_cast<uint16_t*>(out);
  ForEachOutput(g, [&](size_t at) { narrow[at] = static_cast<uint16_t>(EncodeNarrowFloat(g.out_type, wide_out[at])); });
  return Status::Ok();
}

}  // namespace

Status HostGemm(const thunks::GemmThunk& g, const void* lhs, const void* rhs, void* out) {
  EnsureOpenBlasKernelsMatchCpu();
  KILN_RETURN_IF_ERROR(CheckShape(g));
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::Ok();
  if (OneDnnTakesGemm(g)) return OneDnnGemm(g, lhs, rhs, out);
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
  // program) that oneDNN does not take (alpha != 1 or beta != 0): the
  // operands widened to f32 (exact) and an sgemm, the f32 accumulation
  // cuBLAS does (Debian's OpenBLAS has no sbgemm).
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
    return Int8Gemm(g, lhs, rhs, static_cast<int32_t*>(out));
  if (thunks::IsFp8Gemm(g)) return Fp8Gemm(g, lhs, rhs, out);
  return Error("Unimplemented: host gemm of " + std::string(ElementTypeName(g.lhs_type)) + " x " +
               std::string(ElementTypeName(g.rhs_type)) + " -> " +
               std::string(ElementTypeName(g.out_type)) +
               " (only f32, f64, c64, c128, bf16 x bf16 -> f32, s8 x s8 -> s32 and fp8 gemms)");
}

}  // namespace kiln::kernels
