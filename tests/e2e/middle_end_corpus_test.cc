// The middle-end on the whole corpus: every module goes through the pass
// pipeline (verified after every pass that changes it), the schedules and
// the buffer assignment; and on every module small enough for the reference
// evaluator, the optimized module computes what the input computes.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include "compiler/passes/optimization_pipeline.h"
#include "tests/e2e/e2e_test_util.h"
#include "tests/support/corpus_files.h"
#include "tests/support/module_traits.h"
#include "tests/support/peak_live_bytes.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxLiveBytes = 50 << 20;

struct Summary {
  int modules = 0, compared = 0;
  std::map<std::string, std::string> not_compared;
  ~Summary() {
    if (modules == 0) return;
    std::printf("\n== middle-end: %d modules through the pipeline, %d compared with the evaluator ==\n",
                modules, compared);
    for (const auto& [name, why] : not_compared) std::printf("  not compared %s: %s\n", name.c_str(), why.c_str());
  }
};
Summary summary;

class MiddleEndCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MiddleEndCorpusTest, PipelineVerifiesAndPreservesSemantics) {
  const std::string stem = fs::path(GetParam()).stem().string();
  auto module = hlo::ParseHloModuleFile(GetParam());
  ASSERT_TRUE(module.ok()) << module.status().message();
  ++summary.modules;
  compiler::CompileStats stats;
  compiler::CompileOptions options;
  options.verify_each_pass = true;  // catch a broken rewrite at its pass
  Status middle = compiler::RunMiddleEnd(**module, options, &stats);
  ASSERT_TRUE(middle.ok()) << middle.message();
  EXPECT_GE(stats.temp_peak_bytes, stats.temp_lower_bound_bytes);
  EXPECT_LE(stats.bytes_accessed_fused, stats.bytes_accessed_unfused);

  const hlo::ModuleConfig& config = (*module)->config();
  if (test_support::HasCollectives(**module) || test_support::UsesDeviceIds(**module) ||
      config.replica_count > 1 || config.num_partitions > 1) {
    summary.not_compared[stem] = "multi-device";
    return;
  }
  if (test_support::PeakLiveBytes(**module) > kMaxLiveBytes) {
    summary.not_compared[stem] = "too large for the evaluator";
    return;
  }
  std::vector<Literal> args = RandomArgs(**module, 42);
  hlo::EvaluatorOptions eval_options;
  eval_options.time_limit_seconds = 10;
  StatusOr<Literal> before = hlo::Evaluator(eval_options).Evaluate(**module, args);
  if (!before.ok()) {
    summary.not_compared[stem] = before.status().message().substr(0, 100);
    return;
  }
  std::unique_ptr<hlo::HloModule> optimized = (*module)->Clone();
  ASSERT_TRUE(passes::RunOptimizationPipeline(*optimized).ok());
  // DynamicPadder adds a size argument per dynamic parameter dimension and
  // returns (result, sizes...); the random arguments fill their bounds.
  bool sized_result = false;
  for (const hlo::EntryDynamicDimension& d : optimized->config().entry_dynamic_dimensions) {
    if (d.of_result) {
      sized_result = true;
      continue;
    }
    const Shape* shape = SubShape(args[d.parameter_number].shape(), d.index);
    ASSERT_TRUE(shape && d.dimension < shape->rank());
    args.push_back(Literal::Scalar(ElementType::kS32, static_cast<int32_t>(shape->dim(d.dimension))));
  }
  StatusOr<Literal> after = hlo::Evaluator(eval_options).Evaluate(*optimized, args);
  ASSERT_TRUE(after.ok()) << after.status().message();
  if (sized_result) after = Literal(after->element(0));
  // The passes reorder no floating-point arithmetic except the f32 GEMM
  // widening of bf16/f16 dots, which matches XLA's own rounding.
  CompareOptions tol;
  Status same = CompareValues(*after, *before, stem, tol);
  EXPECT_TRUE(same.ok()) << same.message();
  ++summary.compared;
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : fs::path(info.param).stem().string()) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Corpus, MiddleEndCorpusTest, ::testing::ValuesIn(test_support::CorpusFiles()), TestName);

}  // namespace
}  // namespace kiln::testing
