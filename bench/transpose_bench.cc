// transpose_bench: host throughput of the tiled transpose kernel against the
// flat one-thread-per-element kernel, on an NxN f32 transpose (default 4096).
//
//   transpose_bench [--n=N] [--iterations=K]
//
// Both kernels compute the same values: the tiled one is
// transpose(negate(x)) (root is a tiled-transpose hero: 32x32 tiles through
// a 32x33 stack buffer), the flat one negate(transpose(x)) (root is not a
// transpose: one element at a time in output order, so the reads stride by
// a whole row). A plain negate(x) gives the streaming-copy reference. Each
// kernel is compiled by kiln::codegen::CompileKernels for the host, loaded
// as the runtime loads it, checked against hand-computed values, then timed;
// GB/s counts the bytes read plus written (2 * 4 * N * N) over the median
// of K runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/codegen/kernel_codegen.h"
#include "compiler/hlo/parser.h"
#include "runtime/host_library.h"

namespace {

using KernelFn = void (*)(void**, int64_t, int64_t);

std::string Module(const std::string& body, int64_t n) {
  std::string s = "f32[" + std::to_string(n) + "," + std::to_string(n) + "]";
  std::string text = "HloModule m\nENTRY e {\n  x = " + s + " parameter(0)\n" + body + "\n}\n";
  size_t pos;
  while ((pos = text.find("$S")) != std::string::npos) text.replace(pos, 2, s);
  return text;
}

struct Result {
  double median_ms = 0;
  bool ok = false;
};

Result Bench(const std::string& name, const std::string& text, int64_t n, int iterations,
             bool transposed) {
  Result result;
  auto module = kiln::hlo::ParseHloModule(text);
  if (!module.ok()) {
    std::fprintf(stderr, "%s: parse: %s\n", name.c_str(), module.status().message().c_str());
    return result;
  }
  auto compiled = kiln::codegen::CompileKernels({{name, (*module)->entry()}}, {});
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s: compile: %s\n", name.c_str(), compiled.status().message().c_str());
    return result;
  }
  bool tiled = compiled->mlir_text.find("kiln.tiles") != std::string::npos;
  auto lib = kiln::runtime::HostLibrary::Load(compiled->host->shared_object);
  if (!lib.ok()) {
    std::fprintf(stderr, "%s: load: %s\n", name.c_str(), lib.status().message().c_str());
    return result;
  }
  auto fn = reinterpret_cast<KernelFn>((*lib)->Find(name));
  int64_t units = compiled->host->kernels[0].launch.grid[0];  // run all of them
  std::vector<float> x(n * n), out(n * n);
  for (int64_t i = 0; i < n * n; ++i) x[i] = static_cast<float>(i % 9973);
  void* args[] = {x.data(), out.data()};
  fn(args, 0, units);
  // out[j][i] = -x[i][j] (transposed) or out[i][j] = -x[i][j].
  for (int64_t i = 0; i < n; i += 97)
    for (int64_t j = 0; j < n; j += 89) {
      float want = -x[i * n + j];
      float got = transposed ? out[j * n + i] : out[i * n + j];
      if (got != want) {
        std::fprintf(stderr, "%s: wrong result at (%ld, %ld): %g != %g\n", name.c_str(),
                     static_cast<long>(i), static_cast<long>(j), got, want);
        return result;
      }
    }
  std::vector<double> ms;
  for (int k = 0; k < iterations; ++k) {
    auto start = std::chrono::steady_clock::now();
    fn(args, 0, units);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  result.median_ms = ms[ms.size() / 2];
  result.ok = true;
  double gb = 2.0 * 4.0 * static_cast<double>(n) * static_cast<double>(n) / 1e9;
  std::printf("%-10s %-6s median %8.2f ms  min %8.2f ms  %6.2f GB/s\n", name.c_str(),
              tiled ? "tiled" : "flat", result.median_ms, ms.front(), gb / (result.median_ms / 1e3));
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 4096;
  int iterations = 10;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--n=", 4) == 0) {
      n = std::atoll(argv[i] + 4);
    } else if (std::strncmp(argv[i], "--iterations=", 13) == 0) {
      iterations = std::atoi(argv[i] + 13);
    } else {
      std::fprintf(stderr, "transpose_bench: error: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (n < 1 || iterations < 1) {
    std::fprintf(stderr, "transpose_bench: error: --n and --iterations must be positive\n");
    return 2;
  }
  std::printf("host f32[%ld,%ld] transpose, %d iterations\n", static_cast<long>(n), static_cast<long>(n),
              iterations);
  Result tiled = Bench("tiled", Module("  g = $S negate(x)\n  ROOT t = $S transpose(g), dimensions={1,0}", n), n,
                       iterations, true);
  Result flat = Bench("flat", Module("  t = $S transpose(x), dimensions={1,0}\n  ROOT g = $S negate(t)", n), n,
                      iterations, true);
  Result copy = Bench("copy", Module("  ROOT g = $S negate(x)", n), n, iterations, false);
  if (!tiled.ok || !flat.ok || !copy.ok) return 1;
  std::printf("tiled vs flat: %.2fx faster\n", flat.median_ms / tiled.median_ms);
  return 0;
}
