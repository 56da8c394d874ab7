// End to end on the real corpus on the host: every module bef-compile
// accepts is compiled for the host, executed by the runtime and compared
// with the reference evaluator (corpus_e2e_case.h). The named modules of
// the first op set must compile and match.
#include "tests/e2e/corpus_e2e_case.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

class CorpusE2ETest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusE2ETest, MatchesEvaluatorOnHost) { RunCorpusModule(GetParam(), runtime::DeviceKind::kHost); }

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusE2ETest, ::testing::ValuesIn(test_support::CorpusFiles()),
                         CorpusTestName);

TEST(CorpusE2E, RequiredModulesArePresent) {
  std::vector<std::string> files = test_support::CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "corpus not found at " << test_support::kCorpusDir;
  for (const char* r : kRequired) {
    bool found = false;
    for (const std::string& f : files) found |= fs::path(f).stem().string() == r;
    EXPECT_TRUE(found) << r;
  }
}

}  // namespace
}  // namespace kiln::testing
