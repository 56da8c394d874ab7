// The end-to-end modules on a GPU: compiled for CUDA (PTX + sm cubin),
// executed by the CUDA backend and compared with the reference evaluator.
// Linked with tests/support/cuda_test_main.cc: without a GPU the binary
// reports SKIPPED.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/e2e/e2e_test_util.h"
#include "tests/support/corpus_files.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

class CudaE2ETest : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaE2ETest, MatchesEvaluator) {
  std::string path;
  for (const std::string& f : test_support::CorpusFiles())
    if (fs::path(f).stem().string() == GetParam()) path = f;
  if (path.empty()) GTEST_SKIP() << "corpus module not found";
  auto module = hlo::ParseHloModuleFile(path);
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto device = runtime::Device::Create(runtime::DeviceKind::kCuda);
  ASSERT_TRUE(device.ok()) << device.status().message();
  CompareOptions tol;
  tol.atol = 1e-3;  // cuBLAS sums in its own order (see corpus_e2e_test.cc)
  tol.rtol = 1e-2;
  EXPECT_EQ(CompareWithEvaluator(**module, **device, RandomArgs(**module, 42), tol), "");
}

INSTANTIATE_TEST_SUITE_P(Corpus, CudaE2ETest,
                         ::testing::Values("layer_norm_1x4096x768_bf16", "mha_block_1x12x128x64_bf16",
                                           "while_with_known_trip_count", "case_conditional.0",
                                           "case_conditional.1", "multiple_gemm_fusions",
                                           "jax.issue.33666.linx.frag_0100.module_0005"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(CudaE2E, ExampleMlp) {
  auto module = hlo::ParseHloModuleFile("examples/mlp.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto device = runtime::Device::Create(runtime::DeviceKind::kCuda);
  ASSERT_TRUE(device.ok());
  CompareOptions tol;
  tol.atol = 1e-5;
  EXPECT_EQ(CompareWithEvaluator(**module, **device, RandomArgs(**module, 7), tol), "");
}

}  // namespace
}  // namespace kiln::testing
