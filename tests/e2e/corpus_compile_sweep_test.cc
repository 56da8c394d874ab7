// The corpus sweep: every corpus module compiles for each target alone and
// for both (--targets=host, cuda, host,cuda; each x86-64 level bef-compile
// compiles by default in one of them), whatever its size (nothing is
// run, so modules too large for the evaluator are included). Collectives,
// replica-id and partition-id compile; the only modules allowed to fail are
// those that stop at a multi-device op kiln does not compile yet (send,
// recv, ragged-all-to-all), with the one-line unsupported-opcode error
// naming it, and those listed in kOutOfScope with their reason. The summary
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

// The multi-device opcodes bef-compile does not compile yet.
bool IsMultiDeviceOpcode(const std::string& opcode) {
  static const std::set<std::string> kOps = {
      "ragged-all-to-all", "send", "recv", "send-done", "recv-done"};
  return kOps.count(opcode) > 0;
}

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
  std::map<std::string, int> compiled, multi_device, out_of_scope;
  ~SweepSummary() {
    for (const Targets& t : kTargets)
      if (compiled.count(t.name) || multi_device.count(t.name))
        std::printf("== corpus compile sweep --targets=%s: %d compiled, %d stop at a multi-device op, %d out of "
                    "scope ==\n",
                    t.name, compiled[t.name], multi_device[t.name], out_of_scope[t.name]);
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
    if (scope != OutOfScope().end()) {
      EXPECT_NE(message.find(scope->second), std::string::npos) << message.substr(0, 300);
      ++Summary().out_of_scope[t.name];
      continue;
    }
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
