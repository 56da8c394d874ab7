// The simplification passes in sequence after call inlining (as the
// middle-end runs them) on every corpus module: each result verifies, small
// modules compute the same values before and after, and the per-pass change
// counts and times are printed (the largest module's time bounds the
// compile-time cost).
#include <map>

#include "compiler/passes/annotation_remover.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/tuple_simplifier.h"
#include "tests/passes/simplification_test_util.h"

namespace kiln::passes {
namespace {

std::unique_ptr<HloPassPipeline> MakePipeline() {
  auto pipeline = std::make_unique<HloPassPipeline>("simplification");
  pipeline->AddPass<CallInliner>();
  pipeline->AddPass<AnnotationRemover>();
  pipeline->AddPass<TupleSimplifier>();
  pipeline->AddPass<ConstantFolding>();
  pipeline->AddPass<Cse>();
  pipeline->AddPass<TupleSimplifier>();
  pipeline->AddPass<DeadCodeElimination>();
  return pipeline;
}

TEST(SimplificationCorpus, PassesAfterCallInlining) {
  std::vector<std::string> files = test_support::CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "corpus not found";
  std::map<std::string, int> changed;
  std::map<std::string, double> seconds;
  int64_t largest = 0;
  std::string largest_name, largest_times;
  int evaluated = 0;
  for (const std::string& path : files) {
    auto parsed = hlo::ParseHloModuleFile(path);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    std::unique_ptr<hlo::HloModule> module = std::move(*parsed);
    bool evaluate = evaluated < 20 && test_support::EvaluableCorpusModule(*module);
    std::unique_ptr<hlo::HloModule> before = evaluate ? module->Clone() : nullptr;
    int64_t count = test_support::InstructionCount(*module);
    auto pipeline = MakePipeline();
    // The pipeline verifies after every pass that changed the module.
    StatusOr<bool> result = pipeline->Run(*module);
    ASSERT_TRUE(result.ok()) << path << ": " << result.status().message();
    std::string times;
    for (size_t i = 0; i < pipeline->records().size(); ++i) {
      const PassRecord& r = pipeline->records()[i];
      std::string key = std::to_string(i) + " " + r.name;
      changed[key] += r.changed;
      seconds[key] += r.seconds;
      char buf[96];
      std::snprintf(buf, sizeof buf, " %s %.4f s%s", r.name.c_str(), r.seconds, r.changed ? "*" : "");
      times += buf;
    }
    if (count > largest) {
      largest = count, largest_name = path, largest_times = times;
      largest_times += " (" + std::to_string(test_support::InstructionCount(*module)) + " instructions after)";
    }
    if (evaluate && *result && test_support::ExpectSameResultsOnCorpusModule(*before, *module, 3, path))
      ++evaluated;
  }
  std::printf("modules %zu, evaluated before/after %d\n", files.size(), evaluated);
  for (const auto& [name, n] : changed)
    std::printf("  pass %-24s changed %3d modules, %.3f s in all\n", name.c_str(), n, seconds[name]);
  std::printf("largest module %s (%lld instructions):%s\n", largest_name.c_str(),
              static_cast<long long>(largest), largest_times.c_str());
}

}  // namespace
}  // namespace kiln::passes
