// host_int8_gemm_bench: host throughput of the s8 x s8 -> s32 GemmThunk
// (kernels::HostGemm), the int8 GEMMs an artifact for host and CUDA runs
// on the host, in cuBLAS' form (lhs [m,k], rhs [n,k]).
//
//   host_int8_gemm_bench [--iterations=K]
//
// For each shape (k up to 1024 takes the sgemm path, beyond it the dgemm
// one) it checks one output against a sum computed here and prints the
// median of K runs in ms and GOP/s (2mnk integer ops per GEMM).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels_lib/host_gemm.h"

namespace {

struct Shape3 {
  int64_t m, n, k;
};

kiln::thunks::GemmThunk Int8Thunk(const Shape3& s) {
  kiln::thunks::GemmThunk g;
  g.lhs_type = g.rhs_type = kiln::ElementType::kS8;
  g.out_type = kiln::ElementType::kS32;
  g.m = s.m, g.n = s.n, g.k = s.k;
  g.rhs_transposed = true;
  g.lhs_leading_dim = s.k, g.rhs_leading_dim = s.k, g.out_leading_dim = s.n;
  return g;
}

// The median milliseconds of `iterations` GEMMs of shape `s`, or a negative
// value when a run fails or output (1, 2) is wrong.
double Bench(const Shape3& s, int iterations) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> value(-128, 127);
  std::vector<int8_t> lhs(s.m * s.k), rhs(s.n * s.k);
  for (int8_t& v : lhs) v = static_cast<int8_t>(value(rng));
  for (int8_t& v : rhs) v = static_cast<int8_t>(value(rng));
  std::vector<int32_t> out(s.m * s.n);
  const kiln::thunks::GemmThunk g = Int8Thunk(s);
  std::vector<double> ms;
  for (int i = 0; i < iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    kiln::Status status = kiln::kernels::HostGemm(g, lhs.data(), rhs.data(), out.data());
    auto end = std::chrono::steady_clock::now();
    if (!status.ok()) {
      std::fprintf(stderr, "gemm: %s\n", status.message().c_str());
      return -1;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  int64_t want = 0;
  for (int64_t p = 0; p < s.k; ++p) want += int64_t{lhs[1 * s.k + p]} * int64_t{rhs[2 * s.k + p]};
  if (out[1 * s.n + 2] != static_cast<int32_t>(want)) {
    std::fprintf(stderr, "wrong output (1, 2): %d, expected %lld\n", out[1 * s.n + 2], static_cast<long long>(want));
    return -1;
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 5;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--iterations=", 13) == 0) iterations = std::max(1, std::atoi(argv[i] + 13));
  std::printf("%-20s %10s %10s\n", "m x n x k", "ms", "GOP/s");
  const Shape3 shapes[] = {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {512, 512, 4096}};
  for (const Shape3& s : shapes) {
    double ms = Bench(s, iterations);
    if (ms < 0) return 1;
    std::string name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    std::printf("%-20s %10.3f %10.2f\n", name.c_str(), ms, 2.0 * s.m * s.n * s.k / (ms * 1e6));
  }
  return 0;
}
