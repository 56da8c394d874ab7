// Host GEMMs (HostGemm: OpenBLAS, or oneDNN where OneDnnTakesGemm says so)
// against a reference computed in the test: bf16 and f32 in double, int8
// exactly in int64. Cases cover both operands transposed or not, padded
// leading dimensions, batch strides, and the size rule that sends large
// f32 products to oneDNN.
#include "kernels_lib/host_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels_lib/onednn_gemm.h"
#include "kernels_lib/openblas_kernels.h"

namespace kiln::kernels {
namespace {

namespace th = ::kiln::thunks;

// Row-major element (r, c) of a stored matrix of logical shape rows x cols
// (stored as cols x rows when transposed), leading dimension ld.
int64_t Index(bool transposed, int64_t ld, int64_t r, int64_t c) { return transposed ? c * ld + r : r * ld + c; }

struct Case {
  int64_t batch, m, n, k;
  bool lhs_t, rhs_t;
  int64_t pad;  // added to every leading dimension
};

th::GemmThunk Thunk(const Case& c, ElementType in, ElementType out) {
  th::GemmThunk g;
  g.lhs_type = g.rhs_type = in;
  g.out_type = out;
  g.m = c.m, g.n = c.n, g.k = c.k, g.batch = c.batch;
  g.lhs_transposed = c.lhs_t, g.rhs_transposed = c.rhs_t;
  g.lhs_leading_dim = (c.lhs_t ? c.m : c.k) + c.pad;
  g.rhs_leading_dim = (c.rhs_t ? c.k : c.n) + c.pad;
  g.out_leading_dim = c.n + c.pad;
  g.lhs_batch_stride = (c.lhs_t ? c.k : c.m) * g.lhs_leading_dim + c.pad;
  g.rhs_batch_stride = (c.rhs_t ? c.n : c.k) * g.rhs_leading_dim + c.pad;
  g.out_batch_stride = c.m * g.out_leading_dim + c.pad;
  return g;
}

// out(b, i, j) = sum_p lhs(b, i, p) * rhs(b, p, j) with element readers.
template <typename Lhs, typename Rhs>
std::vector<double> Reference(const th::GemmThunk& g, Lhs lhs, Rhs rhs) {
  std::vector<double> out(g.batch * g.m * g.n);
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < g.k; ++p)
          sum += lhs(b * g.lhs_batch_stride + Index(g.lhs_transposed, g.lhs_leading_dim, i, p)) *
                 rhs(b * g.rhs_batch_stride + Index(g.rhs_transposed, g.rhs_leading_dim, p, j));
        out[(b * g.m + i) * g.n + j] = sum;
      }
  return out;
}

size_t Elements(int64_t batch, int64_t stride) { return static_cast<size_t>(batch * stride); }

uint16_t Bf16(float f) {  // exact for the small integers and halves used here
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}
float FromBf16(uint16_t h) {
  uint32_t bits = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

const Case kCases[] = {
    {1, 7, 5, 3, false, false, 0}, {3, 16, 33, 40, true, false, 2}, {2, 31, 8, 64, false, true, 1},
    {4, 9, 17, 130, true, true, 3}, {1, 1, 1, 1, false, false, 0},
};
// bf16 GEMMs large enough for oneDNN (kOneDnnMinBf16Product), each layout.
const Case kLargeCases[] = {
    {2, 64, 80, 4096, false, false, 0}, {1, 130, 96, 2048, true, false, 3},
    {2, 72, 128, 2048, false, true, 1}, {1, 128, 136, 1024, true, true, 2},
};

// Small bf16 GEMMs widen to f32 for OpenBLAS, large ones go to oneDNN;
// both must give the exact sums (products of these values and their sums
// are exact in f32).
void ExpectBf16GemmExact(const Case& c, bool onednn) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-8, 8);
  th::GemmThunk g = Thunk(c, ElementType::kBF16, ElementType::kF32);
  EXPECT_EQ(OneDnnTakesGemm(g), onednn) << "m=" << c.m << " n=" << c.n << " k=" << c.k;
  std::vector<uint16_t> lhs(Elements(c.batch, g.lhs_batch_stride)), rhs(Elements(c.batch, g.rhs_batch_stride));
  for (uint16_t& v : lhs) v = Bf16(small(rng) * 0.5f);
  for (uint16_t& v : rhs) v = Bf16(small(rng) * 0.25f);
  std::vector<float> out(Elements(c.batch, g.out_batch_stride), -1.0f);
  ASSERT_TRUE(HostGemm(g, lhs.data(), rhs.data(), out.data()).ok());
  std::vector<double> want = Reference(g, [&](int64_t i) { return FromBf16(lhs[i]); },
                                       [&](int64_t i) { return FromBf16(rhs[i]); });
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j)
        ASSERT_EQ(out[b * g.out_batch_stride + i * g.out_leading_dim + j], want[(b * c.m + i) * c.n + j])
            << "case m=" << c.m << " n=" << c.n << " k=" << c.k << " at " << b << "," << i << "," << j;
}

TEST(HostGemm, Bf16MatchesDoubleOnBothLibraries) {
  for (const Case& c : kCases) ExpectBf16GemmExact(c, /*onednn=*/false);
  for (const Case& c : kLargeCases) ExpectBf16GemmExact(c, /*onednn=*/true);
}

TEST(HostGemm, Int8TakesOneDnnAndIsExact) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> any(-128, 127);
  for (const Case& c : kCases) {
    th::GemmThunk g = Thunk(c, ElementType::kS8, ElementType::kS32);
    EXPECT_TRUE(OneDnnTakesGemm(g));
    std::vector<int8_t> lhs(Elements(c.batch, g.lhs_batch_stride)), rhs(Elements(c.batch, g.rhs_batch_stride));
    for (int8_t& v : lhs) v = static_cast<int8_t>(any(rng));
    for (int8_t& v : rhs) v = static_cast<int8_t>(any(rng));
    // Extremes in every case: -128 * -128 is the largest product.
    lhs[0] = -128, rhs[0] = -128;
    std::vector<int32_t> out(Elements(c.batch, g.out_batch_stride), -1);
    ASSERT_TRUE(HostGemm(g, lhs.data(), rhs.data(), out.data()).ok());
    std::vector<double> want = Reference(g, [&](int64_t i) { return lhs[i]; }, [&](int64_t i) { return rhs[i]; });
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j)
          ASSERT_EQ(out[b * g.out_batch_stride + i * g.out_leading_dim + j],
                    static_cast<int32_t>(want[(b * c.m + i) * c.n + j]))
              << "case m=" << c.m << " n=" << c.n << " k=" << c.k << " at " << b << "," << i << "," << j;
  }
}

TEST(HostGemm, OneDnnTakesOnlyWhatItDoesBetter) {
  // f32 stays with OpenBLAS at every size.
  EXPECT_FALSE(OneDnnTakesGemm(Thunk(Case{1, 2048, 2048, 2048, false, false, 0}, ElementType::kF32, ElementType::kF32)));
  th::GemmThunk beta = Thunk(kLargeCases[0], ElementType::kBF16, ElementType::kF32);
  beta.beta = 1;
  EXPECT_FALSE(OneDnnTakesGemm(beta));  // accumulating GEMMs keep the cblas path
  th::GemmThunk wide_k = Thunk(Case{1, 2, 2, 1025, false, false, 0}, ElementType::kS8, ElementType::kS32);
  EXPECT_FALSE(OneDnnTakesGemm(wide_k));  // sums could pass 2^24: the exact sliced path
}

// On a CPU with AVX-512 or AVX2, OpenBLAS runs kernels that use them, even
// where it does not know the CPU's model (it would pick Prescott's SSE3
// kernels, 9x slower at 512^3 on the development machine).
TEST(HostGemm, OpenBlasKernelsMatchTheCpu) {
  std::string core = EnsureOpenBlasKernelsMatchCpu();
  // The check sets OPENBLAS_CORETYPE itself when it corrects the choice;
  // any other value came from the user, whose choice stands.
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  if (user && std::string(user) != "SkylakeX" && std::string(user) != "Haswell")
    GTEST_SKIP() << "OPENBLAS_CORETYPE=" << user << " is set by the user";
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!avx2) GTEST_SKIP() << "a CPU without AVX2: OpenBLAS' own choice (" << core << ") stands";
  for (const char* old : {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Sandybridge"})
    EXPECT_STRCASENE(core.c_str(), old);
  if (avx512) EXPECT_STRCASENE(core.c_str(), "Haswell") << "AVX-512 is available";
}

}  // namespace
}  // namespace kiln::kernels
