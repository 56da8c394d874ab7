// bef_load_bench: how long LoadArtifact takes, from bytes in memory through
// the checksum (XXH3-64 of the whole file), the FlatBuffers verifier and
// semantic checks to an owned Artifact.
//   small: the sample program of tests/support/sample_artifact.h (every
//          thunk kind, two kernel images); target < 50 ms.
//   large: the sample plus 10000 kernel thunks and a 16 MiB constant, to
//          show how loading scales (informational).
// Prints the median, best and worst of N timed loads; exits 1 if the small
// artifact misses its target.
//
//   bef_load_bench [ITERATIONS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "serialization/artifact.h"
#include "tests/support/sample_artifact.h"

namespace {

struct Timing {
  size_t bytes = 0;
  double median_us = 0, best_us = 0, worst_us = 0;
};

// Times `iterations` loads of `artifact`'s bytes; false (after printing the
// error) if it cannot be serialized or loaded.
bool TimeLoads(const kiln::bef::Artifact& artifact, int iterations, Timing& t) {
  kiln::StatusOr<std::vector<uint8_t>> bytes = kiln::bef::SerializeArtifact(artifact);
  if (!bytes.ok()) {
    std::fprintf(stderr, "bef_load_bench: error: %s\n", bytes.status().message().c_str());
    return false;
  }
  std::vector<double> micros;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    kiln::StatusOr<kiln::bef::Artifact> loaded = kiln::bef::LoadArtifact(*bytes);
    const auto end = std::chrono::steady_clock::now();
    if (!loaded.ok()) {
      std::fprintf(stderr, "bef_load_bench: error: %s\n", loaded.status().message().c_str());
      return false;
    }
    micros.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  std::sort(micros.begin(), micros.end());
  t = {bytes->size(), micros[micros.size() / 2], micros.front(), micros.back()};
  return true;
}

kiln::bef::Artifact LargeArtifact() {
  kiln::bef::Artifact a = kiln::testing::SampleArtifact();
  const kiln::thunks::Thunk fusion = a.program.root.thunks[0];
  for (int i = 0; i < 10000; ++i) a.program.root.thunks.push_back(fusion);
  const int64_t big = int64_t{16} << 20;
  a.program.constants.push_back({"constant.big", std::vector<uint8_t>(big, 0x5a)});
  a.program.allocations.push_back({big, 64, std::nullopt, std::nullopt, 1});
  return a;
}

void Print(const char* name, int iterations, const Timing& t) {
  std::printf("  %-6s %9zu bytes  %5d loads  median %10.1f us  best %10.1f us  worst %10.1f us\n",
              name, t.bytes, iterations, t.median_us, t.best_us, t.worst_us);
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::max(1, std::atoi(argv[1])) : 2000;
  Timing small, large;
  if (!TimeLoads(kiln::testing::SampleArtifact(), iterations, small)) return 1;
  const int large_iterations = std::max(1, iterations / 100);
  if (!TimeLoads(LargeArtifact(), large_iterations, large)) return 1;
  std::printf("bef_load_bench: LoadArtifact (checksum + verify + validate + copy into an Artifact)\n");
  Print("small", iterations, small);
  Print("large", large_iterations, large);
  const bool ok = small.median_us < 50000.0;
  std::printf("  small artifact median %.3f ms, target < 50 ms: %s\n", small.median_us / 1000.0,
              ok ? "OK" : "TOO SLOW");
  return ok ? 0 : 1;
}
