// Corpus test: every module of ../shared/hlo-corpus parses and verifies, and
// every module small enough to evaluate runs through the reference
// evaluator on seeded random inputs without error. Prints a summary table.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <unordered_map>
#include <random>

#include "common/random_literal.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "tests/support/corpus_files.h"
#include "tests/support/module_traits.h"
#include "tests/support/peak_live_bytes.h"

namespace kiln::hlo {
namespace {

namespace fs = std::filesystem;

using kiln::test_support::CorpusFiles;
using kiln::test_support::kCorpusDir;
using kiln::test_support::PeakLiveBytes;
using kiln::test_support::HasCollectives;
// Modules whose evaluation holds more than this many bytes of live values at
// once are too large for the (deliberately simple) evaluator in a unit test.
constexpr int64_t kMaxLiveBytes = 50 << 20;
// Some small modules still do a lot of work (a million-iteration loop, a
// sort calling its comparator 46M times); past this budget they are listed
// as skipped for time, not failed.
constexpr double kTimeLimitSeconds = 20;

// Opcodes outside the evaluator's required set, and random dynamic sizes
// beyond their bounds ("lies outside"); modules meeting them are reported as
// skipped rather than failed.
bool IsOutsideEvaluatorScope(const std::string& message) {
  for (const char* op : {"'rng-get-and-update-state'", "'rng'", "'ragged-", "'send", "'recv", "'infeed'", "'outfeed'",
                         "lies outside", "'stochastic-convert'", "'scaled-dot'", "custom-call target"})
    if (message.find(op) != std::string::npos) return true;
  return false;
}

struct Summary {
  int files = 0, parsed = 0, verified = 0, evaluated = 0, too_large = 0, too_slow = 0, out_of_scope = 0;
  std::vector<std::string> evaluated_names;
  std::map<std::string, std::string> skipped;  // file -> reason
  ~Summary() {
    if (files == 0) return;
    std::printf("\n== corpus summary ==\nfiles %d, parsed %d, verified %d, evaluated %d, "
                "too large %d, too slow %d, outside evaluator scope %d\n",
                files, parsed, verified, evaluated, too_large, too_slow, out_of_scope);
    for (const auto& [file, reason] : skipped) std::printf("  skipped %s: %s\n", file.c_str(), reason.c_str());
  }
};
Summary summary;

class CorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTest, ParsesVerifiesAndEvaluates) {
  const std::string& path = GetParam();
  ++summary.files;
  auto module = ParseHloModuleFile(path);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ++summary.parsed;
  Status verified = VerifyModule(**module);
  ASSERT_TRUE(verified.ok()) << verified.message();
  ++summary.verified;

  std::string name = fs::path(path).filename().string();
  int64_t bytes = PeakLiveBytes(**module);
  if (bytes > kMaxLiveBytes) {
    ++summary.too_large;
    summary.skipped[name] = "too large (" + std::to_string(bytes >> 20) + " MiB of live values)";
    return;
  }
  for (const HloInstruction* inst : (*module)->entry()->instructions()) {
    if (inst->opcode() != hlo::HloOpcode::kRaggedAllToAll) continue;
    // Random offsets and sizes are no valid routing: corpus_spmd_e2e_test
    // runs these modules with one.
    ++summary.out_of_scope;
    summary.skipped[name] = "ragged-all-to-all needs a valid routing, not random inputs";
    return;
  }
  std::mt19937_64 rng(42);
  std::vector<Literal> args;
  for (HloInstruction* p : (*module)->entry()->parameters()) args.push_back(RandomLiteral(p->shape(), rng));
  auto start = std::chrono::steady_clock::now();
  EvaluatorOptions options;
  options.time_limit_seconds = kTimeLimitSeconds;
  // Collective tests are often dumped without replica_count: their device
  // count is then implied only by their shapes (XLA's test harness supplies
  // it). Try the count their replica groups need, then the usual 2, 4, 8.
  ModuleConfig& config = (*module)->config();
  bool replicas_unspecified = config.replica_count == 1 && config.num_partitions == 1;
  std::vector<int64_t> device_counts = {std::max<int64_t>(config.replica_count, RequiredDeviceCount(**module))};
  if (replicas_unspecified)
    for (int64_t n : {2, 4, 8}) device_counts.push_back(n);
  StatusOr<Literal> result = Status::Error("not evaluated");
  for (int64_t devices : device_counts) {
    config.replica_count = devices;
    result = Evaluator(options).Evaluate(**module, args);
    if (result.ok() || !replicas_unspecified || !HasCollectives(**module)) break;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok() && result.status().message().find("exceeded the time limit") != std::string::npos) {
    ++summary.too_slow;
    summary.skipped[name] = "over the " + std::to_string(int(kTimeLimitSeconds)) + " s test budget";
    return;
  }
  if (!result.ok() && IsOutsideEvaluatorScope(result.status().message())) {
    ++summary.out_of_scope;
    summary.skipped[name] = result.status().message();
    return;
  }
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->shape().Compatible((*module)->entry()->root()->shape()));
  ++summary.evaluated;
  std::printf("evaluated %s in %.2f s\n", name.c_str(), seconds);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(CorpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).stem().string();
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name + "_" + std::to_string(info.index);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusTest);

TEST(CorpusPresence, CorpusHas147Modules) {
  if (!fs::is_directory(kCorpusDir)) GTEST_SKIP() << "corpus not found at " << kCorpusDir;
  EXPECT_EQ(CorpusFiles().size(), 147u);
}

}  // namespace
}  // namespace kiln::hlo
