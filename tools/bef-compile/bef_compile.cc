// bef-compile: compiles an HLO module into a .bef artifact.
//
//   bef-compile MODULE.hlo -o MODULE.bef [--targets=host,cuda]
//               [--host-cpu=x86-64-v2,x86-64-v3,x86-64-v4,native] [--cuda-arch=sm_90] [--dump-dir=DIR] [--dump-passes=REGEX]
//               [--time-passes] [--stats=FILE.json] [--jobs=N] [--quiet]
//               [--cache-dir=DIR | --no-cache] [--cache-max-bytes=N]
//   bef-compile MODULE.hlo --stop-after=buffer-assignment [--stats=...]
//       runs the middle-end only (passes, schedules, buffer assignment):
//       dumps and stats, no artifact.
//
// The module is parsed and verified, optimized (fusion into loop kernels,
// dots into GEMM library calls), scheduled and buffer-assigned, its kernels
// generated through MLIR for each target (the host: once per x86-64 level,
// the runtime picking the best the CPU has), and the result written as one
// self-contained file that bef-run executes without the compiler. Compiles
// go through a persistent cache ($XDG_CACHE_HOME/kiln, else
// ~/.cache/kiln; compiler/cache): an unchanged module with unchanged
// options comes back byte for byte, a changed one regenerates only the
// kernels the cache lacks. Every
// failure is one line "bef-compile: error: ..." and exit code 1; an
// unsupported op is named with its source location.
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "thunks/streams.h"
#include "tools/common/flags.h"

namespace kiln::tools {
namespace {

constexpr char kProgram[] = "bef-compile";

struct Options {
  std::string output;
  std::string targets = "host";
  std::string host_cpu;  // empty: compiler::CompileOptions' default levels
  std::string cuda_arch = "sm_90";
  std::string dump_dir;
  std::string dump_passes;
  std::string stats;  // file for the JSON summary; "-" prints it
  std::string stop_after;
  bool time_passes = false;
  bool verify_each_pass = false;
  bool no_radix_sort = false;
  std::string tf32 = "on";
  int64_t streams = 1;
  int64_t num_replicas = 0;
  int64_t num_partitions = 0;
  int64_t jobs = 0;  // 0: one per core
  std::string cache_dir;  // empty: cache::DefaultCacheDir()
  bool no_cache = false;
  int64_t cache_max_bytes = cache::kDefaultCacheMaxBytes;
  bool quiet = false;
};

// The progress line: rewritten in place on a terminal, nothing otherwise
// (or with --quiet).
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}
  ~ProgressLine() { Clear(); }
  std::function<void(const std::string&)> Callback() {
    if (!enabled_) return {};
    return [this](const std::string& line) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      std::fflush(stderr);
      shown_ = true;
    };
  }
  void Clear() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

Status WriteStats(const Options& options, const compiler::CompileStats& stats) {
  if (options.time_passes) std::cout << compiler::PassTimingTable(stats);
  if (options.stats.empty()) return Status::Ok();
  std::string json = compiler::CompileStatsToJson(stats);
  if (options.stats == "-") {
    std::cout << json;
    return Status::Ok();
  }
  std::ofstream out(options.stats, std::ios::binary);
  out << json;
  if (!out) return Error("cannot write --stats file " + options.stats);
  return Status::Ok();
}

// The cache directory a compile uses: --cache-dir (which must be usable),
// else the user's default one, which a compile does without (with a
// warning) when it cannot be used; "" for --no-cache.
StatusOr<std::string> CacheDir(const Options& options) {
  if (options.cache_max_bytes <= 0)
    return Error("--cache-max-bytes must be positive, not " + std::to_string(options.cache_max_bytes));
  if (options.no_cache && !options.cache_dir.empty()) return Error("--no-cache and --cache-dir contradict each other");
  if (options.no_cache) return std::string();
  if (!options.cache_dir.empty()) return options.cache_dir;
  std::string dir = cache::DefaultCacheDir();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (!dir.empty() && (ec || access(dir.c_str(), R_OK | W_OK | X_OK) != 0)) {
    std::fprintf(stderr, "bef-compile: warning: compile cache %s is not writable; compiling without it\n",
                 dir.c_str());
    return std::string();
  }
  return dir;
}

Status Compile(const std::string& input, const Options& options) {
  compiler::CompileOptions copts;
  KILN_RETURN_IF_ERROR(compiler::ParseTargets(options.targets, copts));
  if (!options.host_cpu.empty())
    KILN_RETURN_IF_ERROR(compiler::ParseHostCpus(options.host_cpu, copts).WithContext("--host-cpu"));
  copts.cuda_arch = options.cuda_arch;
  copts.dump_dir = options.dump_dir;
  copts.dump_passes = options.dump_passes;
  copts.verify_each_pass = options.verify_each_pass;
  copts.radix_sort = !options.no_radix_sort;
  if (options.tf32 != "on" && options.tf32 != "off")
    return Error("--tf32 must be on or off, not '" + options.tf32 + "'");
  copts.tf32 = options.tf32 == "on";
  if (options.streams < 1 || options.streams > thunks::kMaxStreams)
    return Error("--streams must be between 1 and " + std::to_string(thunks::kMaxStreams) + ", not " +
                 std::to_string(options.streams));
  copts.streams = static_cast<int>(options.streams);
  if (options.num_replicas < 0 || options.num_partitions < 0 || options.num_replicas > 4096 ||
      options.num_partitions > 4096)
    return Error("--num_replicas and --num_partitions must be between 1 and 4096");
  copts.num_replicas = options.num_replicas;
  copts.num_partitions = options.num_partitions;
  if (options.jobs < 0 || options.jobs > 1024)
    return Error("--jobs must be between 1 and 1024 (0: one per core), not " + std::to_string(options.jobs));
  copts.jobs = static_cast<int>(options.jobs);
  KILN_ASSIGN_OR_RETURN(copts.cache_dir, CacheDir(options));
  copts.cache_max_bytes = options.cache_max_bytes;
  if (!options.stop_after.empty() && options.stop_after != "buffer-assignment")
    return Error("unknown --stop-after '" + options.stop_after + "' (expected buffer-assignment)");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module, hlo::ParseHloModuleFile(input));
  KILN_RETURN_IF_ERROR(hlo::VerifyModule(*module).WithContext(input));
  if (std::string warning = hlo::ElidedConstantsWarning(*module); !warning.empty())
    std::fprintf(stderr, "bef-compile: %s\n", warning.c_str());
  compiler::CompileStats stats;
  ProgressLine progress(!options.quiet);
  copts.progress = progress.Callback();
  if (!options.stop_after.empty()) {
    KILN_RETURN_IF_ERROR(compiler::RunMiddleEnd(*module, copts, &stats));
    return WriteStats(options, stats);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> bef, compiler::CompileModuleToBef(*module, copts, &stats));
  progress.Clear();
  if (!stats.cache_warning.empty())
    std::fprintf(stderr, "bef-compile: warning: compile cache: %s\n", stats.cache_warning.c_str());
  KILN_RETURN_IF_ERROR(bef::WriteBefFile(bef, options.output));
  return WriteStats(options, stats);
}

int Main(int argc, char** argv) {
  Options options;
  FlagParser flags(kProgram, "bef-compile MODULE.hlo -o MODULE.bef [flags]");
  flags.AddString("o", &options.output, "output .bef file (required)");
  flags.AddString("targets", &options.targets, "comma-separated targets: host, cuda (default host)");
  flags.AddString("host-cpu", &options.host_cpu,
                  "comma-separated x86-64 levels to compile host kernels for, one image each: x86-64-v2, "
                  "x86-64-v3, x86-64-v4, native (default x86-64-v2,x86-64-v3,x86-64-v4); the runtime runs "
                  "the best one the CPU supports");
  flags.AddString("cuda-arch", &options.cuda_arch, "CUDA SM architecture of the cubin (default sm_90)");
  flags.AddString("dump-dir", &options.dump_dir,
                  "write the optimized HLO, buffer assignment, MLIR, PTX and thunk program here");
  flags.AddString("dump-passes", &options.dump_passes,
                  "regex: dump the module only after the passes whose name matches (default all)");
  flags.AddBool("time-passes", &options.time_passes, "print the time spent in each pass");
  flags.AddBool("verify-each-pass", &options.verify_each_pass,
                "run the HLO verifier after every pass that changes the module (default: once at the end)");
  flags.AddBool("no-radix-sort", &options.no_radix_sort,
                "CUDA: keep every sort a kernel-IR kernel (default: radix sort kernels where they apply)");
  flags.AddString("tf32", &options.tf32,
                  "on|off: CUDA runs f32 dots of DEFAULT operand precision on the TF32 tensor cores, as XLA GPU "
                  "does (default on; off keeps them at f32 precision)");
  flags.AddInt("streams", &options.streams,
               "streams the independent thunks of the program may run on concurrently, 1 to 16 (default 1: "
               "every thunk in order)");
  flags.AddInt("num_replicas", &options.num_replicas,
               "replicas the collectives are resolved for, overriding the module's replica_count");
  flags.AddInt("num_partitions", &options.num_partitions,
               "partitions the collectives are resolved for, overriding the module's num_partitions");
  flags.AddInt("jobs", &options.jobs,
               "threads generating kernels, ptxas included (default 0: one per core); the .bef is the same "
               "bytes for any count");
  flags.AddBool("quiet", &options.quiet, "no progress line on stderr (shown only when stderr is a terminal)");
  flags.AddString("cache-dir", &options.cache_dir,
                  "compile cache directory (default $XDG_CACHE_HOME/kiln, else ~/.cache/kiln)");
  flags.AddBool("no-cache", &options.no_cache, "neither read nor write the compile cache");
  flags.AddInt("cache-max-bytes", &options.cache_max_bytes,
               "bound on the compile cache's size; least recently used entries are evicted (default 1 GiB)");
  flags.AddString("stats", &options.stats, "write the compile summary as JSON to this file ('-' prints it)");
  flags.AddString("stop-after", &options.stop_after,
                  "buffer-assignment: run the middle-end only (dumps and stats, no artifact)");
  // The conventional compiler spelling "-o FILE" / "-oFILE" is --o.
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i].rfind("-o", 0) == 0 && args[i].rfind("--", 0) != 0) args[i] = "-" + args[i].substr(0, 2) + (args[i].size() > 2 ? "=" + args[i].substr(2) : "");
  std::vector<const char*> arg_ptrs;
  for (const std::string& a : args) arg_ptrs.push_back(a.c_str());
  std::vector<std::string> positional;
  Status parsed = flags.Parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data(), &positional);
  if (!parsed.ok()) return ReportError(kProgram, parsed);
  if (flags.help_requested()) {
    std::cout << flags.Usage();
    return 0;
  }
  if (positional.size() != 1) return ReportError(kProgram, Error("expected one MODULE.hlo argument"));
  if (options.output.empty() && options.stop_after.empty())
    return ReportError(kProgram, Error("missing -o MODULE.bef"));
  Status s = Compile(positional[0], options);
  if (!s.ok()) return ReportError(kProgram, s);
  return 0;
}

}  // namespace
}  // namespace kiln::tools

int main(int argc, char** argv) {
  try {
    return kiln::tools::Main(argc, argv);
  } catch (const std::exception& e) {
    return kiln::tools::ReportError("bef-compile", kiln::Error(std::string("internal error: ") + e.what()));
  }
}
