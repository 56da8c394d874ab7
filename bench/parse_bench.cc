// parse_bench: throughput of the HLO text parser and verifier on a corpus.
//
//   parse_bench [CORPUS_DIR] [--repeat=N]
//
// Reads every HLO module under CORPUS_DIR (default ../shared/hlo-corpus;
// files ending in .txt or .hlo whose text starts with "HloModule") into
// memory first, so disk speed is not measured, then times ParseHloModule
// alone and ParseHloModule + VerifyModule over all of them, N times each
// (default 5), keeping the best run of each phase. Time is the thread's CPU
// time, so that other processes on a busy machine do not skew the figure.
// Prints
//   parse: X MB/s, parse+verify: Y MB/s, files: 147, bytes: 22.7 MB
// Files that fail to parse or verify are listed and left out of the timing.
// The target is >= 50 MB/s for parsing.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"

namespace {

struct Input {
  std::string path;
  std::string text;
};

bool IsHloModuleText(const std::string& text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  return start != std::string::npos && text.compare(start, 9, "HloModule") == 0;
}

std::vector<Input> LoadCorpus(const std::string& dir) {
  std::vector<Input> inputs;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string ext = it->path().extension().string();
    if (ext != ".txt" && ext != ".hlo") continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (IsHloModuleText(text)) inputs.push_back({it->path().string(), std::move(text)});
  }
  std::sort(inputs.begin(), inputs.end(), [](const Input& a, const Input& b) { return a.path < b.path; });
  return inputs;
}

// Seconds for one pass over `inputs`; with `verify`, each module is also
// verified.
double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double TimePass(const std::vector<Input>& inputs, bool verify) {
  double start = ThreadSeconds();
  for (const Input& input : inputs) {
    auto module = kiln::hlo::ParseHloModule(input.text, input.path);
    if (verify && module.ok()) (void)kiln::hlo::VerifyModule(**module);
  }
  return ThreadSeconds() - start;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "../shared/hlo-corpus";
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--repeat=", 0) == 0) repeat = std::max(1, std::atoi(arg.c_str() + 9));
    else dir = arg;
  }
  std::vector<Input> all = LoadCorpus(dir);
  if (all.empty()) {
    std::fprintf(stderr, "parse_bench: error: no HLO modules under '%s'\n", dir.c_str());
    return 1;
  }
  // Keep only modules that parse and verify, so both phases do the same work.
  std::vector<Input> inputs;
  for (Input& input : all) {
    auto module = kiln::hlo::ParseHloModule(input.text, input.path);
    kiln::Status status = module.ok() ? kiln::hlo::VerifyModule(**module) : module.status();
    if (status.ok()) {
      inputs.push_back(std::move(input));
    } else {
      std::string message = status.message().substr(0, status.message().find('\n'));
      std::fprintf(stderr, "parse_bench: skipped %s: %s\n", input.path.c_str(), message.c_str());
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "parse_bench: error: none of %zu modules parsed and verified\n", all.size());
    return 1;
  }
  double bytes = 0;
  for (const Input& input : inputs) bytes += static_cast<double>(input.text.size());

  double best_parse = 1e30, best_both = 1e30;
  for (int r = 0; r < repeat; ++r) {
    best_parse = std::min(best_parse, TimePass(inputs, false));
    best_both = std::min(best_both, TimePass(inputs, true));
  }
  double mb = bytes / 1e6;
  std::printf("parse: %.1f MB/s, parse+verify: %.1f MB/s, files: %zu, bytes: %.1f MB\n",
              mb / best_parse, mb / best_both, inputs.size(), mb);
  if (inputs.size() != all.size())
    std::printf("(%zu of %zu modules skipped: they failed to parse or verify)\n",
                all.size() - inputs.size(), all.size());
  return 0;
}
