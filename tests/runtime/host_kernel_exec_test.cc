// Host runtime executing real compiled kernels: HLO computations are compiled
// with kiln::codegen::CompileKernels into a host shared object, embedded in
// an artifact, round-tripped through .bef bytes, executed by the runtime and
// compared with the reference evaluator (kiln::hlo::Evaluator).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/codegen/kernel_codegen.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "tests/runtime/runtime_test_programs.h"
#include "tests/runtime/runtime_test_util.h"
#include "tests/support/must_parse.h"

namespace kiln::runtime::testing {
namespace {

using ::kiln::test_support::MustParse;

codegen::HostImage CompileHost(const std::vector<codegen::KernelSpec>& specs) {
  StatusOr<codegen::CodegenResult> r = codegen::CompileKernels(specs, {});
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok() || !r->host) return {};
  return std::move(*r->host);
}

// `a` with the launches of `image`'s kernels in its host image's entries,
// as bef-compile writes them: the runtime runs a kernel's units by them.
bef::Artifact WithLaunches(bef::Artifact a, const codegen::HostImage& image) {
  for (bef::KernelEntry& e : a.kernel_images[0].kernels)
    for (const codegen::CompiledKernel& k : image.kernels)
      if (k.name == e.name)
        e.launch = {{k.launch.grid[0], k.launch.grid[1], k.launch.grid[2]},
                    {k.launch.block[0], k.launch.block[1], k.launch.block[2]},
                    k.launch.shared_mem_bytes};
  return a;
}

Literal Evaluate(const hlo::HloModule& m, const std::vector<Literal>& args) {
  StatusOr<Literal> r = hlo::Evaluator().Evaluate(m, args);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : Literal();
}

Buffer FromLiteral(const Literal& lit) {
  StatusOr<Buffer> b = Buffer::Allocate(lit.shape());
  EXPECT_TRUE(b.ok());
  EXPECT_EQ(static_cast<size_t>(b->size()), lit.raw_size());
  std::memcpy(b->data(), lit.raw(), lit.raw_size());
  return *b;
}

void ExpectBufferEqualsLiteral(const Buffer& got, const Literal& want, double rel_tol) {
  ASSERT_EQ(static_cast<size_t>(got.size()), want.raw_size());
  Literal g(want.shape());
  std::memcpy(g.raw(), got.data(), want.raw_size());
  for (int64_t i = 0; i < want.element_count(); ++i) {
    double gv = g.GetF64(i), wv = want.GetF64(i);
    EXPECT_LE(std::fabs(gv - wv), rel_tol * std::fabs(wv) + 1e-30)
        << "element " << i << ": got " << gv << ", want " << wv;
  }
}

TEST(HostKernelExec, FusionKernelMatchesEvaluator) {
  auto module = MustParse(kFusionModule);
  ASSERT_NE(module, nullptr);
  codegen::HostImage host = CompileHost({{"fused_kernel", module->FindComputation("fused")}});
  const std::vector<uint8_t>& so = host.shared_object;
  ASSERT_FALSE(so.empty());
  bef::Artifact a =
      RoundTrip(WithLaunches(HostArtifact(FusionProgram("fused_kernel"), {"fused_kernel"}, so), host));
  auto device = HostDevice();
  auto exe = MustLoad(*device, a);
  ASSERT_NE(exe, nullptr);
  Literal x = Literal::Vector(ElementType::kF32, {1.5, -2, 3, 0.25, 5, -6});
  Literal y = Literal::Vector(ElementType::kF32, {2, 4, -1, 8, 0.5, 3});
  Literal x2(Shape(ElementType::kF32, {2, 3})), y2(Shape(ElementType::kF32, {2, 3}));
  std::memcpy(x2.raw(), x.raw(), 24);
  std::memcpy(y2.raw(), y.raw(), 24);
  Literal want = Evaluate(*module, {x2, y2});
  // Independent check of the oracle on element 0: (1.5 + 2) * 1.5 = 5.25.
  EXPECT_EQ(want.GetF64(0), 5.25);
  StatusOr<ExecutionResult> r = exe->ExecuteSync({FromLiteral(x2), FromLiteral(y2)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectBufferEqualsLiteral(r->outputs[0], want, 1e-6);
  ASSERT_EQ(r->profile.thunks.size(), 1u);
  EXPECT_EQ(r->profile.thunks[0].kind, thunks::ThunkKind::kKernel);
  EXPECT_EQ(r->profile.thunks[0].name, "fusion.1");
}

TEST(HostKernelExec, MissingKernelSymbolFailsAtLoad) {
  auto module = MustParse(kFusionModule);
  ASSERT_NE(module, nullptr);
  codegen::HostImage host = CompileHost({{"fused_kernel", module->FindComputation("fused")}});
  const std::vector<uint8_t>& so = host.shared_object;
  ASSERT_FALSE(so.empty());
  // The image claims a kernel the shared object does not export.
  bef::Artifact a = RoundTrip(
      HostArtifact(FusionProgram("no_such_kernel"), {"fused_kernel", "no_such_kernel"}, so));
  auto device = HostDevice();
  StatusOr<std::unique_ptr<LoadedExecutable>> e = LoadedExecutable::Load(*device, a);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "kernel 'no_such_kernel' is not exported by the host shared object of target 'host'");
}

TEST(HostKernelExec, CorruptSharedObjectFailsAtLoad) {
  bef::Artifact a = HostArtifact(FusionProgram("k"), {"k"}, {0x7f, 'E', 'L', 'F', 2, 1, 1, 0});
  auto device = HostDevice();
  StatusOr<std::unique_ptr<LoadedExecutable>> e = LoadedExecutable::Load(*device, a);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("dlopen"), std::string::npos) << e.status().message();
}

TEST(HostKernelExec, WhileWithCounterKernelsMatchesEvaluator) {
  auto module = MustParse(kWhileModule);
  ASSERT_NE(module, nullptr);
  codegen::HostImage host = CompileHost({{"body_add", module->FindComputation("body")},
                                         {"cond_lt", module->FindComputation("cond")}});
  const std::vector<uint8_t>& so = host.shared_object;
  ASSERT_FALSE(so.empty());
  bef::Artifact a = RoundTrip(
      WithLaunches(HostArtifact(WhileProgram(std::nullopt), {"body_add", "cond_lt"}, so), host));
  auto device = HostDevice();
  auto exe = MustLoad(*device, a);
  ASSERT_NE(exe, nullptr);
  // init 3 -> counts up to 10 (7 iterations); 12 -> 12 (condition false at once);
  // -5 -> 10.
  for (int32_t init : {3, 12, -5}) {
    Literal arg = Literal::Scalar(ElementType::kS32, init);
    Literal want = Evaluate(*module, {arg});
    EXPECT_EQ(want.GetS64(0), std::max(init, 10));
    StatusOr<ExecutionResult> r = exe->ExecuteSync({FromLiteral(arg)});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Read<int32_t>(r->outputs[0]), std::vector<int32_t>{static_cast<int32_t>(want.GetS64(0))})
        << "init " << init;
    // Profile: copy.in, then per iteration lt, add, copy.back, then a final
    // lt and the while: 2 + 3 * iterations + 1 entries.
    int64_t iterations = std::max(0, 10 - init);
    EXPECT_EQ(static_cast<int64_t>(r->profile.thunks.size()), 3 + 3 * iterations);
  }
}

TEST(HostKernelExec, WhileWithKnownTripCountSkipsTheCondition) {
  auto module = MustParse(kWhileModule);
  ASSERT_NE(module, nullptr);
  codegen::HostImage host = CompileHost({{"body_add", module->FindComputation("body")},
                                         {"cond_lt", module->FindComputation("cond")}});
  const std::vector<uint8_t>& so = host.shared_object;
  ASSERT_FALSE(so.empty());
  auto device = HostDevice();
  auto exe = MustLoad(*device, WithLaunches(HostArtifact(WhileProgram(4), {"body_add", "cond_lt"}, so), host));
  ASSERT_NE(exe, nullptr);
  // Four increments from 100 regardless of the condition: 104.
  StatusOr<ExecutionResult> r = exe->ExecuteSync({MakeBuffer<int32_t>(ElementType::kS32, {}, {100})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Read<int32_t>(r->outputs[0]), std::vector<int32_t>{104});
}

}  // namespace
}  // namespace kiln::runtime::testing
