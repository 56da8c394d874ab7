// middle_end_bench: what kiln's middle-end does to real modules.
//
// For the largest corpus modules (by instruction count; --all for every
// module) it runs the middle-end exactly as `bef-compile
// --stop-after=buffer-assignment` does and prints, per module: input
// instructions, instructions after the passes, fusions (= loop kernels),
// bytes moved before and after fusion (cost model: every instruction its
// own kernel vs the fused program), the temp arena against its lower bound,
// and the middle-end's wall time (passes + schedules + buffer assignment;
// the verifier runs once at the end, as in a release bef-compile).
//
//   middle_end_bench [--all] [--top=N] [--corpus=DIR]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "tests/support/corpus_files.h"

namespace {

using namespace kiln;

struct Row {
  std::string name;
  compiler::CompileStats stats;
};

std::string Gb(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", bytes / 1e9);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  bool all = false;
  size_t top = 10;
  std::string corpus = test_support::kCorpusDir;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--all")) all = true;
    else if (!std::strncmp(argv[i], "--top=", 6)) top = std::strtoul(argv[i] + 6, nullptr, 10);
    else if (!std::strncmp(argv[i], "--corpus=", 9)) corpus = argv[i] + 9;
    else {
      std::fprintf(stderr, "usage: middle_end_bench [--all] [--top=N] [--corpus=DIR]\n");
      return 2;
    }
  }
  std::vector<std::pair<int64_t, std::unique_ptr<hlo::HloModule>>> modules;
  for (const std::string& file : test_support::CorpusFiles(corpus)) {
    auto module = hlo::ParseHloModuleFile(file);
    if (!module.ok()) continue;
    int64_t n = 0;
    for (const hlo::HloComputation* c : (*module)->computations()) n += c->instruction_count();
    modules.emplace_back(n, std::move(*module));
  }
  std::stable_sort(modules.begin(), modules.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (!all && modules.size() > top) modules.resize(top);

  std::printf("%-44s %7s %7s %7s %10s %10s %6s %12s %12s %7s %8s\n", "module", "instrs", "after", "kernels",
              "GB unfused", "GB fused", "saved", "temp peak", "lower bound", "ratio", "seconds");
  double worst = 1.0, slowest_per_10k = 0;
  int64_t total_kernels = 0, total_unfused = 0, total_fused = 0;
  for (const auto& [n, module] : modules) {
    compiler::CompileStats s;
    Status status = compiler::RunMiddleEnd(*module, {}, &s);
    std::string name = std::filesystem::path(module->source_file()).stem().string();
    if (name.size() > 44) name = name.substr(0, 41) + "...";
    if (!status.ok()) {
      std::printf("%-44s error: %s\n", name.c_str(), status.message().c_str());
      continue;
    }
    double ratio = s.temp_lower_bound_bytes > 0 ? double(s.temp_peak_bytes) / s.temp_lower_bound_bytes : 1.0;
    worst = std::max(worst, ratio);
    slowest_per_10k = std::max(slowest_per_10k, s.compile_seconds * 1e4 / std::max<int64_t>(n, 1));
    total_kernels += s.fusions;
    total_unfused += s.bytes_accessed_unfused;
    total_fused += s.bytes_accessed_fused;
    double saved = s.bytes_accessed_unfused > 0 ? 1.0 - double(s.bytes_accessed_fused) / s.bytes_accessed_unfused : 0;
    std::printf("%-44s %7lld %7lld %7lld %10s %10s %5.0f%% %12lld %12lld %7.4f %8.3f\n", name.c_str(),
                static_cast<long long>(n), static_cast<long long>(s.instructions_after_passes),
                static_cast<long long>(s.fusions), Gb(s.bytes_accessed_unfused).c_str(),
                Gb(s.bytes_accessed_fused).c_str(), saved * 100, static_cast<long long>(s.temp_peak_bytes),
                static_cast<long long>(s.temp_lower_bound_bytes), ratio, s.compile_seconds);
  }
  std::printf("%-44s %7s %7s %7lld %10s %10s\n", "total", "", "", static_cast<long long>(total_kernels),
              Gb(total_unfused).c_str(), Gb(total_fused).c_str());
  std::printf("worst temp peak / lower bound: %.4f (target <= 1.10); slowest middle-end: %.3f s per 10k instructions "
              "(target < 2 s)\n",
              worst, slowest_per_10k);
  return 0;
}
