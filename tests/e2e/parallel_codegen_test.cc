// Parallel code generation (CodegenOptions::jobs): a corpus model with
// many distinct kernels compiles to the same .bef bytes on one thread and
// on four, for the host alone and for host and CUDA together (ptxas and
// nvlink included where installed).
#include <gtest/gtest.h>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "serialization/artifact.h"
#include "tests/support/corpus_files.h"

namespace kiln::testing {
namespace {

constexpr char kModel[] =
    "/jax_models_rocm_perf_tools/vision_diffusion/imagenette__inference_1gpu__module_0627.jit_predict_step."
    "before_optimizations.txt";

struct Bef {
  std::vector<uint8_t> bytes;
  int64_t distinct_kernels = 0;
};

Bef CompileWithJobs(const hlo::HloModule& module, bool cuda, int jobs) {
  compiler::CompileOptions options;
  options.cuda = cuda;
  options.jobs = jobs;
  compiler::CompileStats stats;
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(module, options, &stats);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return {};
  StatusOr<std::vector<uint8_t>> bytes = bef::SerializeArtifact(*artifact);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return {bytes.ok() ? *bytes : std::vector<uint8_t>{}, stats.distinct_kernels};
}

class ParallelCodegenTest : public ::testing::TestWithParam<bool> {};

TEST_P(ParallelCodegenTest, SameBytesOnOneAndFourThreads) {
  auto module = hlo::ParseHloModuleFile(std::string(test_support::kCorpusDir) + kModel);
  ASSERT_TRUE(module.ok()) << module.status().message();
  Bef serial = CompileWithJobs(**module, GetParam(), 1);
  Bef parallel = CompileWithJobs(**module, GetParam(), 4);
  EXPECT_GE(serial.distinct_kernels, 10);  // enough to spread over four threads
  ASSERT_FALSE(serial.bytes.empty());
  EXPECT_EQ(serial.bytes.size(), parallel.bytes.size());
  EXPECT_TRUE(serial.bytes == parallel.bytes);
}

INSTANTIATE_TEST_SUITE_P(Targets, ParallelCodegenTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "HostAndCuda" : "Host";
                         });

}  // namespace
}  // namespace kiln::testing
