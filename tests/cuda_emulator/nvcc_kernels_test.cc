// CUDA C kernels that the toolkit's nvcc compiled to PTX at build time
// (tests/cuda_emulator/nvcc_kernels/*.cu, -arch=sm_90 -ptx), run on the
// emulator: PTX that kiln did not write, with nvcc's idioms (inline-asm
// scopes from cuda_fp16.h, the local-memory stack of the math library,
// 64-bit generic addressing, predicated exits).
//
// Each result is compared with the host: exactly for integers, atomics and
// sums of small integers, bit-exactly for correctly rounded half-precision
// operations (half_reference.h), and for the math library within the CUDA
// C++ Programming Guide's maximum ulp errors for single-precision functions:
// expf 2, sinf 2, logf 1, tanhf 2 (ulps from the correctly rounded result).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cuda_emulator/emulator_test_util.h"
#include "tests/cuda_emulator/half_reference.h"

#ifndef KILN_NVCC_PTX_DIR
#error "KILN_NVCC_PTX_DIR (the build directory of the nvcc-compiled PTX) must be defined"
#endif

namespace kiln::emu::testing {
namespace {

class NvccKernelsTest : public EmulatorTest {
 protected:
  // Loads build/.../nvcc_kernels/<stem>.ptx.
  void LoadCompiled(const std::string& stem) {
    std::string path = std::string(KILN_NVCC_PTX_DIR) + "/" + stem + ".ptx";
    std::ifstream f(path);
    ASSERT_TRUE(f) << "missing " << path;
    std::stringstream text;
    text << f.rdbuf();
    Status s = LoadPtx(text.str());
    ASSERT_TRUE(s.ok()) << stem << ".ptx: " << s.message();
  }
};

uint32_t Blocks(uint32_t n, uint32_t block) { return (n + block - 1) / block; }

TEST_F(NvccKernelsTest, WarpShuffleReduction) {
  ASSERT_NO_FATAL_FAILURE(LoadCompiled("warp_reduce"));
  const int n = 5000;  // not a multiple of the block: the tail reads 0s
  std::vector<int> in(n);
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) sum += in[i] = (i * 37) % 101 - 20;
  uint64_t a = Upload(in), total = Upload(std::vector<int>{0}), ftotal = Upload(std::vector<float>{0.0f});
  ASSERT_RUN(Run("warp_reduce", Dim3{Blocks(n, 256)}, Dim3{256}, 0, a, n, total, ftotal));
  EXPECT_EQ(Download<int>(total, 1)[0], sum);
  // Every partial sum is an integer far below 2^24: exact in float.
  EXPECT_EQ(Download<float>(ftotal, 1)[0], static_cast<float>(sum));
}

TEST_F(NvccKernelsTest, TiledTranspose) {
  ASSERT_NO_FATAL_FAILURE(LoadCompiled("transpose"));
  const int rows = 96, cols = 64;
  std::vector<float> in(rows * cols);
  for (int i = 0; i < rows * cols; ++i) in[i] = static_cast<float>(i) * 0.5f;
  uint64_t a = Upload(in), out = Alloc(in.size() * 4);
  ASSERT_RUN(Run("transpose", Dim3{cols / 32, rows / 32}, Dim3{32, 8}, 0, a, out, rows, cols));
  std::vector<float> got = Download<float>(out, in.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) ASSERT_EQ(got[c * rows + r], in[r * cols + c]) << r << "," << c;
}

TEST_F(NvccKernelsTest, AtomicsIncludingCasLoops) {
  ASSERT_NO_FATAL_FAILURE(LoadCompiled("atomics"));
  const int n = 3000;
  std::vector<int> in(n);
  int64_t sum = 0;
  int max = -1000000;
  for (int i = 0; i < n; ++i) {
    in[i] = (i * 7919) % 2003 - 1000;
    sum += in[i];
    max = std::max(max, in[i]);
  }
  uint64_t a = Upload(in);
  uint64_t ints = Upload(std::vector<int>{0, -1000000, 0});
  uint64_t floats = Upload(std::vector<float>{-1e30f, 0.0f});
  ASSERT_RUN(Run("atomics", Dim3{Blocks(n, 128)}, Dim3{128}, 0, a, n, ints, floats));
  std::vector<int> got = Download<int>(ints, 3);
  EXPECT_EQ(got[0], sum);
  EXPECT_EQ(got[1], max);
  EXPECT_EQ(got[2], n);
  std::vector<float> f = Download<float>(floats, 2);
  EXPECT_EQ(f[0], max * 0.25f);
  // Integers of magnitude <= 1000, 3000 of them: every partial sum is exact.
  EXPECT_EQ(f[1], static_cast<float>(sum));
}

TEST_F(NvccKernelsTest, HalfAndBfloat16Math) {
  ASSERT_NO_FATAL_FAILURE(LoadCompiled("half_math"));
  const int n = 2000;
  std::mt19937 rng(11);
  // a, b, c are multiples of 2^-8 in [-8, 8]: exact in both formats' inputs
  // for f16 (11-bit significands) and their products and sums exact in
  // double. x spans everything the conversions must round: tiny, huge,
  // subnormal in f16.
  std::uniform_int_distribution<int> k(-2048, 2048), kb(-256, 256);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> e(-30, 20);
  std::vector<float> x(n), a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    x[i] = std::ldexp(mant(rng), e(rng)) * (i % 2 ? -1.0f : 1.0f);
    a[i] = k(rng) / 256.0f;
    b[i] = k(rng) / 256.0f;
    c[i] = k(rng) / 256.0f;
  }
  uint64_t dx = Upload(x), da = Upload(a), db = Upload(b), dc = Upload(c);
  uint64_t h = Alloc(n * 4 * 2), h2 = Alloc(n * 4), bf = Alloc(n * 4 * 2), back = Alloc(n * 2 * 4);
  ASSERT_RUN(Run("half_math", Dim3{Blocks(n, 128)}, Dim3{128}, 0, dx, da, db, dc, n, h, h2, bf, back));
  std::vector<uint16_t> got_h = Download<uint16_t>(h, n * 4), got_bf = Download<uint16_t>(bf, n * 4);
  std::vector<uint32_t> got_h2 = Download<uint32_t>(h2, n);
  std::vector<float> got_back = Download<float>(back, n * 2);
  for (int i = 0; i < n; ++i) {
    double A = a[i], B = b[i], C = c[i];
    uint16_t hx = HalfFromDouble(x[i]);
    std::vector<uint16_t> want_h = {hx, HalfFromDouble(A + B), HalfFromDouble(A * B), HalfFromDouble(A * B + C)};
    for (int j = 0; j < 4; ++j)
      ASSERT_EQ(got_h[4 * i + j], want_h[j]) << "f16 result " << j << " of row " << i << ": a=" << a[i]
                                             << " b=" << b[i] << " c=" << c[i] << " x=" << x[i];
    // (p + q) * p with p = (a, b), q = (c, a): low = f16(f16(a + c) * a),
    // high = f16(f16(b + a) * b).
    uint32_t lo = HalfFromDouble(HalfToDouble(HalfFromDouble(A + C)) * A);
    uint32_t hi = HalfFromDouble(HalfToDouble(HalfFromDouble(B + A)) * B);
    ASSERT_EQ(got_h2[i], (hi << 16) | lo) << "half2 row " << i;
    // bf16 inputs are a, b, c rounded to 8-bit significands first.
    double bA = Bf16ToDouble(Bf16FromDouble(A)), bB = Bf16ToDouble(Bf16FromDouble(B));
    double bC = Bf16ToDouble(Bf16FromDouble(C));
    uint16_t bx = Bf16FromDouble(x[i]);
    std::vector<uint16_t> want_bf = {bx, Bf16FromDouble(bA + bB), Bf16FromDouble(bA * bB),
                                     Bf16FromDouble(bA * bB + bC)};
    for (int j = 0; j < 4; ++j)
      ASSERT_EQ(got_bf[4 * i + j], want_bf[j]) << "bf16 result " << j << " of row " << i;
    ASSERT_EQ(Bits(got_back[2 * i]), Bits(static_cast<float>(HalfToDouble(hx)))) << i;
    ASSERT_EQ(Bits(got_back[2 * i + 1]), Bits(static_cast<float>(Bf16ToDouble(bx)))) << i;
  }
}

TEST_F(NvccKernelsTest, Half2UnpackThroughScopedInlineAsmRegisters) {
  ASSERT_NO_FATAL_FAILURE(LoadCompiled("half_unpack"));
  const int n = 1000;
  std::vector<uint32_t> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(i) * 2654435761u;
  uint64_t a = Upload(in), lo = Alloc(n * 2), hi = Alloc(n * 2);
  ASSERT_RUN(Run("half_unpack", Dim3{Blocks(n, 128)}, Dim3{128}, 0, a, n, lo, hi));
  std::vector<uint16_t> want_lo(n), want_hi(n);
  for (int i = 0; i < n; ++i) {
    want_lo[i] = static_cast<uint16_t>(in[i] & 0xFFFF);
    want_hi[i] = static_cast<uint16_t>(in[i] >> 16);
  }
  EXPECT_EQ(Download<uint16_t>(lo, n), want_lo);
  EXPECT_EQ(Download<uint16_t>(hi, n), want_hi);
}

TEST_F(NvccKernelsTest, DivergentLoopsAndBallot) {
  ASSERT_NO_FATAL_FAILURE(LoadCompiled("divergent_ballot"));
  const int n = 3000, block = 128;
  const int threads = static_cast<int>(Blocks(n, block)) * block;
  std::vector<uint32_t> start(n);
  for (int i = 0; i < n; ++i) start[i] = static_cast<uint32_t>(i + 1);
  uint64_t s = Upload(start), steps = Alloc(n * 4), odd = Alloc(threads / 32 * 4);
  ASSERT_RUN(Run("collatz", Dim3{Blocks(n, block)}, Dim3{block}, 0, s, n, steps, odd));
  std::vector<uint32_t> want_steps(n), want_odd(threads / 32, 0);
  for (int i = 0; i < n; ++i) {
    uint64_t x = start[i];
    uint32_t k = 0;
    while (x != 1) {
      x = (x & 1) ? 3 * x + 1 : x / 2;
      ++k;
    }
    want_steps[i] = k;
    want_odd[i / 32] += k & 1;
  }
  EXPECT_EQ(Download<uint32_t>(steps, n), want_steps);
  EXPECT_EQ(Download<uint32_t>(odd, threads / 32), want_odd);
}

TEST_F(NvccKernelsTest, MathLibraryWithinDocumentedUlps) {
  ASSERT_NO_FATAL_FAILURE(LoadCompiled("math_lib"));
  const int n = 4000;
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> moderate(-80.0f, 80.0f);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> big_exp(7, 100), pos_exp(-126, 127);
  std::vector<float> x(n), big(n), positive(n);
  for (int i = 0; i < n; ++i) {
    x[i] = moderate(rng);
    // Arguments up to ~2^101: sinf's Payne-Hanek reduction (local memory).
    big[i] = std::ldexp(mant(rng), big_exp(rng)) * (i % 2 ? -1.0f : 1.0f);
    positive[i] = std::ldexp(mant(rng), pos_exp(rng));
  }
  uint64_t dx = Upload(x), db = Upload(big), dp = Upload(positive), out = Alloc(n * 5 * 4);
  ASSERT_RUN(Run("math_lib", Dim3{Blocks(n, 128)}, Dim3{128}, 0, dx, db, dp, n, out));
  std::vector<float> got = Download<float>(out, n * 5);
  struct Check {
    const char* name;
    int slot;
    int64_t max_ulps;
    double (*f)(double);
    const std::vector<float>* in;
  } checks[] = {
      {"expf", 0, 2, [](double v) { return std::exp(v); }, &x},
      {"sinf", 1, 2, [](double v) { return std::sin(v); }, &x},
      {"sinf (large arguments)", 2, 2, [](double v) { return std::sin(v); }, &big},
      {"logf", 3, 1, [](double v) { return std::log(v); }, &positive},
      {"tanhf", 4, 2, [](double v) { return std::tanh(v); }, &x},
  };
  for (const Check& k : checks) {
    int64_t worst = 0;
    int at = 0;
    for (int i = 0; i < n; ++i) {
      float want = static_cast<float>(k.f((*k.in)[i]));
      int64_t d = UlpDistance(got[5 * i + k.slot], want);
      if (d > worst) worst = d, at = i;
    }
    EXPECT_LE(worst, k.max_ulps) << k.name << "(" << (*k.in)[at] << ") = " << got[5 * at + k.slot];
  }
}

TEST_F(NvccKernelsTest, IntegerDivisionByVariables) {
  ASSERT_NO_FATAL_FAILURE(LoadCompiled("int_div"));
  const int n = 3000;
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> num(-2000000000, 2000000000), den(-50000, 50000);
  std::uniform_int_distribution<long long> num64(-(1LL << 62), 1LL << 62), den64(-(1LL << 40), 1LL << 40);
  std::vector<int> a(n), b(n);
  std::vector<long long> a64(n), b64(n);
  for (int i = 0; i < n; ++i) {
    a[i] = num(rng);
    do b[i] = i % 3 ? den(rng) : den(rng) / 1000; while (b[i] == 0);
    a64[i] = num64(rng);
    do b64[i] = i % 2 ? den64(rng) : den(rng); while (b64[i] == 0);
  }
  uint64_t da = Upload(a), dbv = Upload(b), da64 = Upload(a64), db64 = Upload(b64);
  uint64_t q = Alloc(n * 4), r = Alloc(n * 4), uq = Alloc(n * 4), ur = Alloc(n * 4);
  uint64_t q64 = Alloc(n * 8), r64 = Alloc(n * 8);
  ASSERT_RUN(Run("int_div", Dim3{Blocks(n, 128)}, Dim3{128}, 0, da, dbv, da64, db64, n, q, r, uq, ur, q64, r64));
  std::vector<int> wq(n), wr(n);
  std::vector<unsigned> wuq(n), wur(n);
  std::vector<long long> wq64(n), wr64(n);
  for (int i = 0; i < n; ++i) {
    wq[i] = a[i] / b[i];
    wr[i] = a[i] % b[i];
    wuq[i] = static_cast<unsigned>(a[i]) / static_cast<unsigned>(b[i]);
    wur[i] = static_cast<unsigned>(a[i]) % static_cast<unsigned>(b[i]);
    wq64[i] = a64[i] / b64[i];
    wr64[i] = a64[i] % b64[i];
  }
  EXPECT_EQ(Download<int>(q, n), wq);
  EXPECT_EQ(Download<int>(r, n), wr);
  EXPECT_EQ(Download<unsigned>(uq, n), wuq);
  EXPECT_EQ(Download<unsigned>(ur, n), wur);
  EXPECT_EQ(Download<long long>(q64, n), wq64);
  EXPECT_EQ(Download<long long>(r64, n), wr64);
}

TEST_F(NvccKernelsTest, DynamicSharedMemoryReduction) {
  ASSERT_NO_FATAL_FAILURE(LoadCompiled("dynamic_shared"));
  const int n = 5000, block = 256;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 50);
  const uint32_t blocks = Blocks(n, block);
  uint64_t a = Upload(in), sums = Alloc(blocks * 4);
  ASSERT_RUN(Run("block_sum", Dim3{blocks}, Dim3{block}, block * 4, a, n, sums));
  std::vector<float> want(blocks, 0.0f);
  for (int i = 0; i < n; ++i) want[i / block] += in[i];  // small integers: exact
  EXPECT_EQ(Download<float>(sums, blocks), want);
}

}  // namespace
}  // namespace kiln::emu::testing
