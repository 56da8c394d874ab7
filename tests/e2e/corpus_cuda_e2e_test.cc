// End to end on the real corpus on a CUDA device: every module that
// compiles is compiled for CUDA (PTX + cubin), executed by the runtime's
// CUDA backend and compared with the reference evaluator
// (corpus_e2e_case.h). In CI the device is kiln's CUDA emulator
// (KILN_CUDA_EMULATOR, set by CMake), which checks every memory access;
// on a machine with a GPU and without the variable it runs on the GPU.
// Linked with tests/support/cuda_test_main.cc: SKIPPED without any device.
#include "tests/e2e/corpus_e2e_case.h"

namespace kiln::testing {
namespace {

class CorpusCudaE2ETest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusCudaE2ETest, MatchesEvaluatorOnCuda) {
  RunCorpusModule(GetParam(), runtime::DeviceKind::kCuda);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusCudaE2ETest, ::testing::ValuesIn(test_support::CorpusFiles()),
                         CorpusTestName);

}  // namespace
}  // namespace kiln::testing
