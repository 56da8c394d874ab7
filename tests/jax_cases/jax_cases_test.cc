// JAX-authored cases: every folder of tests/jax_cases/data holds an HLO
// module written by JAX (or by hand), its inputs and XLA CPU's outputs, made
// by tests/jax_cases/generate.py. This test evaluates each module with kiln's
// reference evaluator on those inputs and compares with XLA's outputs.
//
// Why: XLA is where HLO's semantics come from. Hand-computed unit tests
// cover what their authors thought of; these cases put XLA's own answers on
// the corners (integer division by zero, shifts past the width, float->int
// saturation, narrow-float rounding, index clamping, out-of-bounds scatter,
// NaN in sort/argmax, out-of-range conditional index...) without needing
// Python or jax at test time.
//
// Tolerances: value_compare.h's per-type defaults, or the "atol rtol" pair in
// the case's tolerance.txt ("0 0" where XLA's result is exact by definition).
//
// KILN_JAX_CASES_DEVICE=host|cuda runs the module compiled by kiln on that
// device instead of the evaluator (tests/CMakeLists.txt registers both, the
// CUDA one on the emulator): XLA's answers then judge the generated code
// itself. A case whose ops kiln does not compile yet is reported SKIPPED
// with the compiler's reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/npy.h"
#include "common/value_compare.h"
#include "common/value_syntax.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/verifier.h"
#include "tools/hlo-run/device_runner.h"

namespace kiln::hlo {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDataDir = "tests/jax_cases/data";  // relative to the repo root

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(kDataDir, ec)) return names;
  for (const auto& entry : fs::directory_iterator(kDataDir, ec))
    if (entry.is_directory() && fs::exists(entry.path() / "module.hlo")) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Number of files named <prefix><i>.npy for i = 0, 1, ...
int CountNumbered(const fs::path& dir, const std::string& prefix) {
  int n = 0;
  while (fs::exists(dir / (prefix + std::to_string(n) + ".npy"))) ++n;
  return n;
}

CompareOptions ReadTolerance(const fs::path& dir) {
  CompareOptions options;
  std::ifstream in(dir / "tolerance.txt");
  double atol, rtol;
  if (in >> atol >> rtol) {
    options.atol = atol;
    options.rtol = rtol;
  }
  return options;
}

// Rebuilds a (nested tuple) argument of `shape` from its array leaves.
Literal Assemble(const Shape& shape, std::vector<Literal>& leaves, size_t* next) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(Assemble(s, leaves, next));
    return Literal::MakeTuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);
  return std::move(leaves[(*next)++]);
}

class JaxCaseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(JaxCaseTest, MatchesXla) {
  const fs::path dir = fs::path(kDataDir) / GetParam();
  auto module = ParseHloModuleFile((dir / "module.hlo").string());
  ASSERT_TRUE(module.ok()) << module.status().message();
  Status verified = VerifyModule(**module);
  ASSERT_TRUE(verified.ok()) << verified.message();
  const HloComputation& entry = *(*module)->entry();

  // Inputs: one .npy per array leaf of the entry parameters. bf16 files are
  // '<V2' void arrays, so the element type comes from the parameter.
  std::vector<Shape> params, leaf_shapes;
  for (int64_t i = 0; i < entry.parameter_count(); ++i) {
    params.push_back(entry.parameter(i)->shape());
    for (const Shape& leaf : FlattenShape(params.back())) leaf_shapes.push_back(leaf);
  }
  ASSERT_EQ(CountNumbered(dir, "input_"), static_cast<int>(leaf_shapes.size()));
  std::vector<Literal> leaves;
  for (size_t i = 0; i < leaf_shapes.size(); ++i) {
    std::string path = (dir / ("input_" + std::to_string(i) + ".npy")).string();
    auto value = ReadNpy(path, leaf_shapes[i].element_type());
    ASSERT_TRUE(value.ok()) << path << ": " << value.status().message();
    ASSERT_EQ(value->element_type(), leaf_shapes[i].element_type()) << path;
    ASSERT_EQ(value->shape().dims(), leaf_shapes[i].dims()) << path;
    leaves.push_back(std::move(value).value());
  }
  std::vector<Literal> args;
  size_t next = 0;
  for (const Shape& shape : params) args.push_back(Assemble(shape, leaves, &next));

  StatusOr<Literal> result = Literal();
  if (const char* device = std::getenv("KILN_JAX_CASES_DEVICE"); device && *device) {
    std::string d(device);
    ASSERT_TRUE(d == "host" || d == "cuda") << "KILN_JAX_CASES_DEVICE must be host or cuda";
    auto dev = runtime::Device::Create(d == "host" ? runtime::DeviceKind::kHost : runtime::DeviceKind::kCuda);
    ASSERT_TRUE(dev.ok()) << dev.status().message();
    StatusOr<tools::DeviceRunResult> run = tools::CompileAndRun(**module, args, **dev);
    if (!run.ok() && run.status().message().find("not support") != std::string::npos)
      GTEST_SKIP() << run.status().message();
    ASSERT_TRUE(run.ok()) << run.status().message();
    result = std::move(run->result);
  } else {
    result = Evaluator().Evaluate(**module, args);
  }
  ASSERT_TRUE(result.ok()) << result.status().message();

  std::vector<Literal> outputs = FlattenTuple(std::move(result).value());
  ASSERT_EQ(CountNumbered(dir, "output_"), static_cast<int>(outputs.size()));
  CompareOptions options = ReadTolerance(dir);
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string path = (dir / ("output_" + std::to_string(i) + ".npy")).string();
    auto expected = ReadNpy(path, outputs[i].element_type());
    ASSERT_TRUE(expected.ok()) << path << ": " << expected.status().message();
    Status match = CompareValues(outputs[i], *expected, GetParam() + " output " + std::to_string(i), options);
    EXPECT_TRUE(match.ok()) << match.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Jax, JaxCaseTest, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(JaxCaseTest);

// The data is committed, so its absence is an error, not a reason to skip:
// without this check a missing folder would make the suite pass vacuously.
TEST(JaxCases, DataIsPresent) {
  EXPECT_GE(CaseNames().size(), 40u) << "expected the committed cases under " << kDataDir;
}

}  // namespace
}  // namespace kiln::hlo
