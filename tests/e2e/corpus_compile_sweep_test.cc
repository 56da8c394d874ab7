// The corpus sweep: every corpus module compiles for each target alone and
// for both (--targets=host, cuda, host,cuda; each x86-64 level bef-compile
// compiles by default in one of them), whatever its size (nothing is
// run, so modules too large for the evaluator are included). Collectives
// (send/recv and ragged-all-to-all included), replica-id and partition-id
// compile; the only modules allowed to fail are those listed in
// kOutOfScope, with the one-line error that gives their reason. The
// summary per target is printed at the end.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
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

// Modules that need something outside kiln's scope, and the error that says so.
const std::map<std::string, std::string>& OutOfScope() {
  // TransformerEngine's fused attention (a CUDA library of its own) in
  // three SPMD training dumps.
  static const std::map<std::string, std::string> kModules = {
      {"hlo_llama31_405b_fp8_16x8.hlo", "custom-call target 'te_fused_attn_forward_ffi'"},
      {"hlo_llama31_70b_bf16_16x8.hlo", "custom-call target 'te_fused_attn_forward_ffi'"},
      {"hlo_llama3_8b_cp_bf16_1x4.hlo", "custom-call target 'te_fused_attn_forward_ffi'"},
  };
  return kModules;
}

struct SweepSummary {
  std::map<std::string, int> compiled, out_of_scope;
  ~SweepSummary() {
    for (const Targets& t : kTargets)
      if (compiled.count(t.name) || out_of_scope.count(t.name))
        std::printf("== corpus compile sweep --targets=%s: %d compiled, %d out of scope ==\n", t.name,
                    compiled[t.name], out_of_scope[t.name]);
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
  for (const Targets& t : kTargets) {
    SCOPED_TRACE(t.name);
    compiler::CompileOptions options;
    options.host = t.host;
    options.cuda = t.cuda;
    // Between them the two host compiles cover every default CPU level
    // once: x86-64-v3 and v4 for the host alone, x86-64-v2 with CUDA.
    options.host_cpus = t.cuda ? std::vector<std::string>{"x86-64-v2"}
                               : std::vector<std::string>{"x86-64-v3", "x86-64-v4"};
    StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
    if (artifact.ok()) {
      ++Summary().compiled[t.name];
      continue;
    }
    const std::string message = artifact.status().message();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    auto scope = OutOfScope().find(std::filesystem::path(GetParam()).filename().string());
    ASSERT_TRUE(scope != OutOfScope().end()) << message.substr(0, 300);
    EXPECT_NE(message.find(scope->second), std::string::npos) << message.substr(0, 300);
    ++Summary().out_of_scope[t.name];
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusCompileSweep, ::testing::ValuesIn(test_support::CorpusFiles()),
                         CorpusTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusCompileSweep);

}  // namespace
}  // namespace kiln::testing
