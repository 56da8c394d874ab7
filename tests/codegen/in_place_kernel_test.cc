// Kernels told how their buffers alias (KernelSpec::aliasing): an output
// passed exactly a parameter's buffer is written through that parameter,
// the other arguments are noalias, and running the kernel with one buffer
// for both gives the evaluator's result. Checked at a shape whose minor
// dimension is not a multiple of any vector width, and a 1-element one.
#include <gtest/gtest.h>

#include "tests/codegen/codegen_test_util.h"

namespace kiln::codegen::testing {
namespace {

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The last step of a layer norm: centered values over a per-row deviation.
std::string Normalize(const std::string& dims, const std::string& rows) {
  return R"(
HloModule normalize
ENTRY e {
  c = f32[)" + dims + R"(] parameter(0)
  v = f32[)" + rows + R"(] parameter(1)
  s = f32[)" + rows + R"(] sqrt(v)
  b = f32[)" + dims + R"(] broadcast(s), dimensions={0}
  ROOT d = f32[)" + dims + R"(] divide(c, b)
})";
}

void RunInPlace(const std::string& text, const std::vector<int64_t>& dims) {
  std::unique_ptr<hlo::HloModule> module = MustParse(text);
  ASSERT_NE(module, nullptr);
  KernelSpec spec{"normalize", module->entry(), {}};
  spec.aliasing.same_buffer = {-1, -1, 0};  // the output is parameter 0's buffer
  spec.aliasing.disjoint = {true, true, true};
  StatusOr<CodegenResult> compiled = CompileKernels({spec}, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  // Parameters 0 and 1 are noalias; the output's own argument is unused.
  EXPECT_EQ(Count(compiled->mlir_text, "llvm.noalias"), 2) << compiled->mlir_text;
  size_t store = compiled->mlir_text.find("memref.store ");
  ASSERT_NE(store, std::string::npos);
  std::string store_line = compiled->mlir_text.substr(store, compiled->mlir_text.find('\n', store) - store);
  EXPECT_NE(store_line.find(", %arg0["), std::string::npos) << store_line;

  Literal c = Ramp(ElementType::kF32, dims, -3, 5);
  Literal v = Ramp(ElementType::kF32, {dims[0]}, 0.25, 4);
  Literal want = Evaluate(text, {c, v});
  auto lib = LoadedLibrary::Load(compiled->host->shared_object);
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  KernelFn fn = FindKernel(**lib, *compiled->host, "normalize");
  ASSERT_NE(fn, nullptr);
  Literal in_place = c;
  std::vector<void*> buffers = {in_place.raw(), v.raw(), in_place.raw()};
  fn(buffers.data());
  // Division and sqrt are correctly rounded on both sides: bit-exact.
  EXPECT_EQ(in_place, want) << in_place.ToString();
}

TEST(InPlaceKernelTest, OutputWrittenThroughItsOperand) { RunInPlace(Normalize("67,101", "67"), {67, 101}); }

TEST(InPlaceKernelTest, SingleElement) { RunInPlace(Normalize("1,1", "1"), {1, 1}); }

}  // namespace
}  // namespace kiln::codegen::testing
