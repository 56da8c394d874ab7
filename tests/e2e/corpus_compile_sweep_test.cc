// The corpus sweep: every corpus module compiles for each target alone and
// for both (--targets=host, cuda, host,cuda), whatever its size (nothing is
// run, so modules too large for the evaluator are included). The only
// modules allowed to fail are those that stop at a multi-device op
// (collectives, replica and partition ids: not compiled yet), and they must
// fail with the one-line unsupported-opcode error naming it. The summary
// per target is printed at the end.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "tests/e2e/corpus_e2e_case.h"
#include "tests/support/corpus_files.h"

namespace kiln::testing {
namespace {

struct Targets {
  const char* name;
  bool host, cuda;
};
constexpr Targets kTargets[] = {{"host", true, false}, {"cuda", false, true}, {"host,cuda", true, true}};

// The opcodes that need several devices.
bool IsMultiDeviceOpcode(const std::string& opcode) {
  static const std::set<std::string> kOps = {
      "replica-id", "partition-id", "all-reduce", "all-reduce-start", "all-gather", "all-gather-start",
      "reduce-scatter", "all-to-all", "ragged-all-to-all", "collective-permute", "collective-permute-start",
      "collective-broadcast", "send", "recv"};
  return kOps.count(opcode) > 0;
}

struct SweepSummary {
  std::map<std::string, int> compiled, multi_device;
  ~SweepSummary() {
    for (const Targets& t : kTargets)
      if (compiled.count(t.name) || multi_device.count(t.name))
        std::printf("== corpus compile sweep --targets=%s: %d compiled, %d stop at a multi-device op ==\n", t.name,
                    compiled[t.name], multi_device[t.name]);
  }
};
SweepSummary& Summary() {
  static SweepSummary summary;
  return summary;
}

class CorpusCompileSweep : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusCompileSweep, CompilesForEachTarget) {
  auto module = hlo::ParseHloModuleFile(GetParam());
  ASSERT_TRUE(module.ok()) << module.status().message();
  static const std::regex kUnsupported("does not support opcode '([a-z-]+)'");
  for (const Targets& t : kTargets) {
    SCOPED_TRACE(t.name);
    compiler::CompileOptions options;
    options.host = t.host;
    options.cuda = t.cuda;
    StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
    if (artifact.ok()) {
      ++Summary().compiled[t.name];
      continue;
    }
    const std::string message = artifact.status().message();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(message, match, kUnsupported)) << message.substr(0, 300);
    ASSERT_TRUE(IsMultiDeviceOpcode(match[1].str())) << message.substr(0, 300);
    ++Summary().multi_device[t.name];
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusCompileSweep, ::testing::ValuesIn(test_support::CorpusFiles()),
                         CorpusTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusCompileSweep);

}  // namespace
}  // namespace kiln::testing
