// memory_bench: temp-arena quality and cost of scheduling + buffer
// assignment on the HLO corpus.
//
// For each module (the 10 largest by instruction count, or all with
// --all) it parses, runs kiln's optimization pipeline (falling back to the
// parsed module when a pass fails) and, for every computation that runs as
// a thunk sequence, assigns buffers under the post-order schedule and under
// MemoryMinimizingSchedule. It prints, per module, the summed arena bytes
// and lower bounds (max live temp bytes of the same schedule), the worst
// arena/lower-bound ratio over the module's computations, and the time of
// schedule + assignment.
//
//   memory_bench [--all] [--corpus=DIR]     (default ../shared/hlo-corpus)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"
#include "compiler/passes/optimization_pipeline.h"
#include "compiler/pipeline/buffer_assignment.h"
#include "compiler/pipeline/list_scheduler.h"
#include "compiler/passes/sequential_computations.h"
#include "tests/support/corpus_files.h"

namespace {

using namespace kiln;
using Clock = std::chrono::steady_clock;

struct Figures {
  int64_t arena = 0, lower_bound = 0;
  double worst_ratio = 1.0;
  double seconds = 0;
};

struct Row {
  std::string file;
  int64_t instructions = 0;  // in the sequential computations, after optimization
  bool optimized = true;
  Figures post_order, minimizing;
  bool ok = true;
};

void Add(Figures& f, const pipeline::BufferAssignment& a, double seconds) {
  f.arena += a.peak_temp_bytes();
  f.lower_bound += a.temp_lower_bound();
  if (a.temp_lower_bound() > 0)
    f.worst_ratio = std::max(f.worst_ratio, static_cast<double>(a.peak_temp_bytes()) / a.temp_lower_bound());
  f.seconds += seconds;
}

Row Measure(const std::string& file) {
  Row row;
  row.file = file;
  auto module = hlo::ParseHloModuleFile(file);
  if (!module.ok()) {
    row.ok = false;
    return row;
  }
  if (!passes::RunOptimizationPipeline(**module).ok()) {
    row.optimized = false;
    module = hlo::ParseHloModuleFile(file);
  }
  for (const hlo::HloComputation* comp : passes::SequentialComputations(**module)) {
    row.instructions += comp->instruction_count();
    auto t0 = Clock::now();
    auto po = pipeline::AssignBuffers(*comp, pipeline::PostOrderSchedule(*comp));
    auto t1 = Clock::now();
    auto mm = pipeline::AssignBuffersMinimizingMemory(*comp);
    auto t2 = Clock::now();
    if (!po.ok() || !mm.ok()) {
      std::fprintf(stderr, "memory_bench: %s %s: %s\n", file.c_str(), comp->name().c_str(),
                   (!po.ok() ? po.status() : mm.status()).message().c_str());
      row.ok = false;
      return row;
    }
    Add(row.post_order, *po, std::chrono::duration<double>(t1 - t0).count());
    Add(row.minimizing, *mm, std::chrono::duration<double>(t2 - t1).count());
  }
  return row;
}

std::string Short(const std::string& file, size_t width) {
  std::string s = file.substr(file.find_last_of('/') + 1);
  return s.size() > width ? s.substr(0, width - 3) + "..." : s;
}

}  // namespace

int main(int argc, char** argv) {
  bool all = false;
  std::string dir = test_support::kCorpusDir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--all") == 0) {
      all = true;
    } else if (std::strncmp(argv[i], "--corpus=", 9) == 0) {
      dir = argv[i] + 9;
    } else {
      std::fprintf(stderr, "memory_bench: error: unknown flag %s (use --all, --corpus=DIR)\n", argv[i]);
      return 2;
    }
  }
  std::vector<std::string> files = test_support::CorpusFiles(dir);
  if (files.empty()) {
    std::fprintf(stderr, "memory_bench: error: no corpus modules under %s\n", dir.c_str());
    return 1;
  }
  if (!all) {  // the 10 largest by parsed instruction count
    std::vector<std::pair<int64_t, std::string>> sized;
    for (const std::string& f : files) {
      auto m = hlo::ParseHloModuleFile(f);
      if (!m.ok()) continue;
      int64_t n = 0;
      for (const hlo::HloComputation* c : (*m)->computations()) n += c->instruction_count();
      sized.push_back({-n, f});
    }
    std::sort(sized.begin(), sized.end());
    files.clear();
    for (size_t i = 0; i < sized.size() && i < 10; ++i) files.push_back(sized[i].second);
  }
  std::printf("%-44s %7s | %12s %12s %6s | %12s %12s %6s %7s | %8s %8s\n", "module", "instrs", "po arena",
              "po bound", "ratio", "mm arena", "mm bound", "ratio", "mm/po", "po ms", "mm ms");
  double worst = 1.0;
  std::string worst_file;
  std::vector<double> ratios;
  for (const std::string& f : files) {
    Row r = Measure(f);
    if (!r.ok) continue;
    double saving = r.post_order.arena > 0 ? static_cast<double>(r.minimizing.arena) / r.post_order.arena : 1.0;
    std::printf("%-44s %7lld | %12lld %12lld %6.3f | %12lld %12lld %6.3f %7.3f | %8.1f %8.1f%s\n",
                Short(f, 44).c_str(), static_cast<long long>(r.instructions),
                static_cast<long long>(r.post_order.arena), static_cast<long long>(r.post_order.lower_bound),
                r.post_order.worst_ratio, static_cast<long long>(r.minimizing.arena),
                static_cast<long long>(r.minimizing.lower_bound), r.minimizing.worst_ratio, saving,
                r.post_order.seconds * 1e3, r.minimizing.seconds * 1e3, r.optimized ? "" : "  (unoptimized)");
    for (double x : {r.post_order.worst_ratio, r.minimizing.worst_ratio}) {
      ratios.push_back(x);
      if (x > worst) {
        worst = x;
        worst_file = f;
      }
    }
  }
  std::sort(ratios.begin(), ratios.end());
  if (!ratios.empty())
    std::printf("arena/lower-bound over %zu (module, schedule) pairs: median %.4f, max %.4f%s%s\n", ratios.size(),
                ratios[ratios.size() / 2], worst, worst_file.empty() ? "" : " in ", worst_file.c_str());
  return 0;
}
