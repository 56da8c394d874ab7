// CompileKernels on several threads (CodegenOptions::jobs): the kernels
// compiled on four threads run and compute what they compute on one; the
// error of a failing request is the one of its first bad kernel in request
// order, whichever thread fails first; progress counts every kernel of
// every target once, up to the total; jobs start longest first.
#include <set>

#include "compiler/codegen/parallel_tasks.h"
#include "tests/codegen/codegen_test_util.h"

namespace kiln::codegen::testing {
namespace {

constexpr char kNegate[] = R"(
HloModule neg
ENTRY e {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
})";

std::vector<KernelSpec> Specs(const hlo::HloModule& module, const std::vector<std::string>& names) {
  std::vector<KernelSpec> specs;
  for (const std::string& name : names) specs.push_back({name, module.entry(), {}});
  return specs;
}

TEST(CodegenJobsTest, KernelsCompiledOnFourThreadsRun) {
  std::unique_ptr<hlo::HloModule> module = MustParse(kNegate);
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) names.push_back("neg" + std::to_string(i));
  CodegenOptions options;
  options.jobs = 4;
  StatusOr<CodegenResult> compiled = CompileKernels(Specs(*module, names), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  auto lib = LoadedLibrary::Load(compiled->host->shared_object);
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  Literal a = Ramp(ElementType::kF32, {4}, -2, 2);
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(compiled->host->kernels[i].name, names[i]);  // request order
    KernelFn fn = FindKernel(**lib, *compiled->host, names[i]);
    ASSERT_NE(fn, nullptr) << names[i];
    Literal r = RunKernel(fn, {a}, Shape(ElementType::kF32, {4}));
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(r.GetF64(k), -a.GetF64(k)) << names[i];
  }
}

TEST(CodegenJobsTest, FirstBadKernelInRequestOrderIsTheError) {
  std::unique_ptr<hlo::HloModule> module = MustParse(kNegate);
  // Names that are no C identifiers fail in their own task.
  std::vector<KernelSpec> specs = Specs(*module, {"ok0", "ok1", "ok2", "first bad", "ok3", "second bad", "ok4"});
  for (int jobs : {1, 2, 4}) {
    CodegenOptions options;
    options.jobs = jobs;
    StatusOr<CodegenResult> compiled = CompileKernels(specs, options);
    ASSERT_FALSE(compiled.ok());
    EXPECT_EQ(compiled.status().message(), "kernel name 'first bad' is not a C identifier") << "jobs " << jobs;
  }
}

TEST(CodegenJobsTest, ProgressCountsEveryKernelOfEveryTarget) {
  std::unique_ptr<hlo::HloModule> module = MustParse(kNegate);
  CodegenOptions options;
  options.cuda = true;
  options.jobs = 3;
  std::vector<int64_t> done;
  std::set<int64_t> totals;
  StatusOr<CodegenResult> compiled = CompileKernels(Specs(*module, {"a", "b", "c"}), options,
                                                    [&](int64_t d, int64_t total) {
                                                      done.push_back(d);
                                                      totals.insert(total);
                                                    });
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  EXPECT_EQ(done, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));  // 3 kernels x 2 targets
  EXPECT_EQ(totals, (std::set<int64_t>{6}));
}

TEST(CodegenJobsTest, LongestFirstOrdersByCostThenIndex) {
  EXPECT_EQ(LongestFirst({1, 5, 3, 5, 0}), (std::vector<int64_t>{1, 3, 2, 0, 4}));
  EXPECT_EQ(LongestFirst({}), (std::vector<int64_t>{}));
}

}  // namespace
}  // namespace kiln::codegen::testing
