// The host's s8 x s8 -> s32 GEMM (kernels::HostGemm), which sums exactly
// through sgemms over slices of k: odd sums past f32's 2^24 (k = 2048 of
// mostly -128 operands), a sum that wraps (k = 2^17: 2^31 wraps
// to INT32_MIN, as XLA's integer dot), and the transposed layouts with a
// k that leaves a short last slice, against int64 sums computed here.
#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <vector>

#include "kernels_lib/host_gemm.h"

namespace kiln::kernels {
namespace {

thunks::GemmThunk Int8Thunk(int64_t m, int64_t n, int64_t k, bool lhs_transposed, bool rhs_transposed) {
  thunks::GemmThunk g;
  g.lhs_type = g.rhs_type = ElementType::kS8;
  g.out_type = ElementType::kS32;
  g.m = m, g.n = n, g.k = k;
  g.lhs_transposed = lhs_transposed;
  g.rhs_transposed = rhs_transposed;
  return g;  // dense leading dimensions and strides (0: the defaults)
}

TEST(HostInt8Gemm, SumsPastF32PrecisionAreExact) {
  const int64_t k = 2048;
  std::vector<int8_t> lhs(2 * k, -128), rhs(3 * k, -128);  // lhs [m,k], rhs [n,k]
  for (int64_t p = 0; p < k; ++p) rhs[1 * k + p] = 127;
  lhs[k - 1] = 1;  // lhs(0, k-1)
  rhs[k - 1] = 1;  // rhs(0, k-1)
  std::vector<int32_t> out(6, 7);
  ASSERT_TRUE(HostGemm(Int8Thunk(2, 3, k, false, true), lhs.data(), rhs.data(), out.data()).ok());
  // 2047 * 16384 + 1 = 33538049 (odd, past 2^24: no f32 holds it);
  // 2047 * -16256 + 127; 2047 * 16384 - 128; then row 1: 2047 * 16384 - 128,
  // 2048 * -16256 and 2048 * 16384.
  EXPECT_EQ(out, (std::vector<int32_t>{33538049, -33275905, 33537920, 33537920, -33292288, 33554432}));
}

TEST(HostInt8Gemm, SumsWrapModulo2To32) {
  const int64_t k = int64_t{1} << 17;
  std::vector<int8_t> lhs(k, -128), rhs(k, -128);
  int32_t out = 0;
  ASSERT_TRUE(HostGemm(Int8Thunk(1, 1, k, false, true), lhs.data(), rhs.data(), &out).ok());
  EXPECT_EQ(out, INT32_MIN);  // 2^17 * 2^14 = 2^31
}

TEST(HostInt8Gemm, TransposedLayoutsAndAShortLastSlice) {
  const int64_t m = 3, n = 5, k = 1040;  // slices of 1024 and 16
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> value(-128, 127);
  for (bool lhs_t : {false, true}) {
    for (bool rhs_t : {false, true}) {
      std::vector<int8_t> lhs(m * k), rhs(k * n);
      for (int8_t& v : lhs) v = static_cast<int8_t>(value(rng));
      for (int8_t& v : rhs) v = static_cast<int8_t>(value(rng));
      std::vector<int32_t> out(m * n);
      thunks::GemmThunk g = Int8Thunk(m, n, k, lhs_t, rhs_t);
      g.beta = 1;  // out starts at 0: beta must not change the sums
      ASSERT_TRUE(HostGemm(g, lhs.data(), rhs.data(), out.data()).ok());
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          int64_t want = 0;
          for (int64_t p = 0; p < k; ++p)
            want += int64_t{lhs_t ? lhs[p * m + i] : lhs[i * k + p]} * int64_t{rhs_t ? rhs[j * k + p] : rhs[p * n + j]};
          EXPECT_EQ(out[i * n + j], want) << lhs_t << rhs_t << " at " << i << "," << j;
        }
    }
  }
}

}  // namespace
}  // namespace kiln::kernels
