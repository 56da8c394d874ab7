// compile_bench: how long kiln takes to compile a module, stage by stage,
// and how long a small compiled artifact takes to load.
//
//   compile_bench [CORPUS_DIR] [--all] [--targets=host|cuda|host,cuda]
//
// Modules: by default a fixed list of ~10 modules of different kinds (layer
// norm, attention, while/conditional control flow, GEMM fusions, a BERT
// graph, a JAX fragment, examples/mlp.hlo), each found by file name anywhere
// under CORPUS_DIR (default ../shared/hlo-corpus); --all compiles every
// corpus module. Each is parsed, verified and compiled once with
// kiln::compiler::CompileModule for the targets (default host); modules
// that fail (unsupported ops, ...) are listed with a brief reason and left
// out. The table shows the instruction count of the parsed
// module, the kernels and thunks of the artifact, and CompileStats' wall
// time (ms) of the passes, thunk emission (schedule + buffer assignment) and
// kernel codegen (MLIR -> shared object / PTX / cubin), plus the total of
// CompileModule.
//
// Load time: examples/mlp.hlo is compiled for the host, serialized, and
// bef::LoadArtifact + runtime::LoadedExecutable::Load (dlopen of the kernel
// shared object, constants copied) are timed over 50 loads; the target is
// under 50 ms for a small module.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "runtime/runtime.h"
#include "serialization/artifact.h"
#include "tests/support/corpus_files.h"

namespace {

using Clock = std::chrono::steady_clock;

// File names (without the directory) of the default modules.
const char* const kDefaultModules[] = {
    "layer_norm_1x4096x768_bf16.hlo",
    "mha_block_1x12x128x64_bf16.hlo",
    "while_with_known_trip_count.hlo",
    "case_conditional.0.hlo",
    "bert__bert_single_graph_2.hlo",
    "multiple_gemm_fusions.hlo",
    "xnn.parallel_dots.optimized.hlo",
    "jax.issue.33666.linx.frag_0100.module_0005.hlo",
    "mlp__mini_mlp_dp.hlo",
};
// The repository's example, also the module whose load time is measured.
constexpr char kExampleModule[] = "examples/mlp.hlo";

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The first line of an error, without the list of supported ops that an
// unsupported-opcode error ends with.
std::string BriefReason(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  line = line.substr(0, line.find(" (supported:"));
  return line.size() > 160 ? line.substr(0, 157) + "..." : line;
}

int64_t CountInstructions(const kiln::hlo::HloModule& module) {
  int64_t n = 0;
  for (const kiln::hlo::HloComputation* c : module.computations()) n += c->instruction_count();
  return n;
}

// The default modules found under `dir`, in kDefaultModules order; a name
// not found is reported.
std::vector<std::string> DefaultModules(const std::string& dir) {
  const std::vector<std::string> all = kiln::test_support::CorpusFiles(dir);
  std::vector<std::string> found;
  for (const char* name : kDefaultModules) {
    auto it = std::find_if(all.begin(), all.end(), [&](const std::string& p) {
      return std::filesystem::path(p).filename() == name;
    });
    if (it == all.end()) std::printf("  (not found under %s: %s)\n", dir.c_str(), name);
    else found.push_back(*it);
  }
  if (std::filesystem::exists(kExampleModule)) found.push_back(kExampleModule);
  return found;
}

struct Row {
  std::string name;
  int64_t instructions = 0;
  kiln::compiler::CompileStats stats;
  double total_seconds = 0;
};

// Compiles one module; an error (printed by the caller) if it cannot.
kiln::StatusOr<Row> CompileOne(const std::string& path, const kiln::compiler::CompileOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::hlo::HloModule> module, kiln::hlo::ParseHloModuleFile(path));
  KILN_RETURN_IF_ERROR(kiln::hlo::VerifyModule(*module));
  Row row;
  row.name = std::filesystem::path(path).filename().string();
  row.instructions = CountInstructions(*module);
  const Clock::time_point start = Clock::now();
  KILN_RETURN_IF_ERROR(kiln::compiler::CompileModule(*module, options, &row.stats).status());
  row.total_seconds = Since(start);
  return row;
}

void PrintTable(const std::vector<Row>& rows) {
  std::printf("%-48s %7s %7s %7s %10s %10s %10s %10s\n", "module", "instrs", "kernels", "thunks",
              "passes ms", "emit ms", "codegen ms", "total ms");
  double sum = 0;
  for (const Row& r : rows) {
    std::string name = r.name.size() > 48 ? r.name.substr(0, 45) + "..." : r.name;
    std::printf("%-48s %7lld %7lld %7lld %10.2f %10.2f %10.2f %10.2f\n", name.c_str(),
                static_cast<long long>(r.instructions), static_cast<long long>(r.stats.kernels),
                static_cast<long long>(r.stats.thunks), r.stats.passes_seconds * 1e3,
                r.stats.emit_seconds * 1e3, r.stats.codegen_seconds * 1e3, r.total_seconds * 1e3);
    sum += r.total_seconds;
  }
  std::printf("%zu modules compiled in %.3f s\n", rows.size(), sum);
}

// Times LoadArtifact + LoadedExecutable::Load of `path` compiled for the
// host; false (after printing why) if that fails.
bool TimeLoad(const std::string& path) {
  auto fail = [&](const kiln::Status& s) {
    std::fprintf(stderr, "compile_bench: error: load of %s: %s\n", path.c_str(), s.message().c_str());
    return false;
  };
  auto module = kiln::hlo::ParseHloModuleFile(path);
  if (!module.ok()) return fail(module.status());
  kiln::compiler::CompileOptions options;  // host only
  auto artifact = kiln::compiler::CompileModule(**module, options);
  if (!artifact.ok()) return fail(artifact.status());
  auto bytes = kiln::bef::SerializeArtifact(*artifact);
  if (!bytes.ok()) return fail(bytes.status());
  auto device = kiln::runtime::Device::Create(kiln::runtime::DeviceKind::kHost);
  if (!device.ok()) return fail(device.status());
  constexpr int kLoads = 50;
  std::vector<double> parse_ms, load_ms, total_ms;
  for (int i = 0; i < kLoads; ++i) {
    const Clock::time_point start = Clock::now();
    auto loaded = kiln::bef::LoadArtifact(*bytes);
    if (!loaded.ok()) return fail(loaded.status());
    const double parsed = Since(start);
    auto exe = kiln::runtime::LoadedExecutable::Load(**device, *loaded);
    if (!exe.ok()) return fail(exe.status());
    const double total = Since(start);
    parse_ms.push_back(parsed * 1e3);
    load_ms.push_back((total - parsed) * 1e3);
    total_ms.push_back(total * 1e3);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double total = median(total_ms);
  std::printf("load of %s (%zu bytes, host), median of %d: LoadArtifact %.3f ms + "
              "LoadedExecutable::Load %.3f ms = %.3f ms (min %.3f ms); target < 50 ms: %s\n",
              path.c_str(), bytes->size(), kLoads, median(parse_ms), median(load_ms), total,
              *std::min_element(total_ms.begin(), total_ms.end()), total < 50.0 ? "OK" : "TOO SLOW");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = kiln::test_support::kCorpusDir;
  bool all = false;
  kiln::compiler::CompileOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--all") {
      all = true;
    } else if (arg.rfind("--targets=", 0) == 0) {
      kiln::Status s = kiln::compiler::ParseTargets(arg.substr(10), options);
      if (!s.ok()) {
        std::fprintf(stderr, "compile_bench: error: %s\n", s.message().c_str());
        return 1;
      }
    } else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "compile_bench: error: unknown flag '%s' "
                           "(usage: compile_bench [CORPUS_DIR] [--all] [--targets=host,cuda])\n",
                   arg.c_str());
      return 1;
    } else {
      dir = arg;
    }
  }
  std::printf("compile_bench: CompileModule per module (targets:%s%s), wall milliseconds\n",
              options.host ? " host" : "", options.cuda ? " cuda" : "");
  const std::vector<std::string> paths = all ? kiln::test_support::CorpusFiles(dir) : DefaultModules(dir);
  if (paths.empty()) {
    std::fprintf(stderr, "compile_bench: error: no modules found under %s\n", dir.c_str());
    return 1;
  }
  std::vector<Row> rows;
  std::vector<std::string> skipped;
  for (const std::string& path : paths) {
    kiln::StatusOr<Row> row = CompileOne(path, options);
    if (row.ok()) rows.push_back(std::move(*row));
    else skipped.push_back(std::filesystem::path(path).filename().string() + ": " +
                           BriefReason(row.status().message()));
  }
  PrintTable(rows);
  if (!skipped.empty()) {
    std::printf("skipped %zu modules that do not compile:\n", skipped.size());
    for (const std::string& s : skipped) std::printf("  %s\n", s.c_str());
  }
  if (!std::filesystem::exists(kExampleModule)) {
    std::printf("load: skipped (%s not found; run from the repository root)\n", kExampleModule);
    return 0;
  }
  return TimeLoad(kExampleModule) ? 0 : 1;
}
