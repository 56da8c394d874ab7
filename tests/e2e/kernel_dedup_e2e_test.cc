// Kernel deduplication (compiler/driver/kernel_dedup.h) end to end: a
// module of repeated layers compiles to fewer distinct kernels than kernel
// thunks, every thunk launches a kernel of every image, each image holds each
// distinct kernel once, and the results match the reference evaluator (on
// the host, and on CUDA under the emulator: tests/CMakeLists.txt runs this
// test a second time with KILN_E2E_DEVICE=cuda). Layers that differ in one
// constant, one comparison direction or one shape keep kernels of their own
// and still match; kernels whose arguments alias differently never share.
#include "compiler/driver/kernel_dedup.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "compiler/driver/compiler.h"
#include "compiler/driver/kernel_aliasing.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

// How one layer of LayeredModule differs from the others.
struct LayerVariant {
  std::string scale = "0.5";    // a constant of the layer's elementwise kernel
  std::string direction = "GT";  // the comparison of its clamp-like select
};

// A transformer-like block repeated once per entry of `layers`: each layer
// multiplies by its own weights (a GEMM, which ends the fusions), adds its
// own bias, takes a row softmax (two reductions), scales it and keeps the
// larger of it and the GEMM's result. Every layer's instructions are named
// after the layer and carry its own metadata, as in JAX's dumps.
std::string LayeredModule(const std::vector<LayerVariant>& layers, int64_t columns = 16) {
  const std::string cols = std::to_string(columns);
  const std::string row = "f32[8," + cols + "]{1,0}";
  std::string text = R"(
HloModule layers
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x0 = )" + row + R"( parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
)";
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string l = "l" + std::to_string(i) + "_";
    const std::string meta = ", metadata={op_name=\"jit(f)/layer_" + std::to_string(i) + "\"}";
    auto line = [&](const std::string& name, const std::string& shape, const std::string& rest) {
      text += "  " + l + name + " = " + shape + " " + rest + "\n";
    };
    line("w", "f32[" + cols + "," + cols + "]{1,0}", "parameter(" + std::to_string(2 * i + 1) + ")");
    line("b", "f32[" + cols + "]{0}", "parameter(" + std::to_string(2 * i + 2) + ")");
    line("h", row, "dot(x" + std::to_string(i) + ", " + l + "w), lhs_contracting_dims={1}, rhs_contracting_dims={0}" + meta);
    line("bb", row, "broadcast(" + l + "b), dimensions={1}");
    line("y", row, "add(" + l + "h, " + l + "bb)" + meta);
    line("max", "f32[8]{0}", "reduce(" + l + "y, ninf), dimensions={1}, to_apply=max_f32" + meta);
    line("mb", row, "broadcast(" + l + "max), dimensions={0}");
    line("d", row, "subtract(" + l + "y, " + l + "mb)");
    line("e", row, "exponential(" + l + "d)");
    line("sum", "f32[8]{0}", "reduce(" + l + "e, zero), dimensions={1}, to_apply=add_f32" + meta);
    line("sb", row, "broadcast(" + l + "sum), dimensions={0}");
    line("p", row, "divide(" + l + "e, " + l + "sb)");
    line("c", "f32[]", "constant(" + layers[i].scale + ")");
    line("cb", row, "broadcast(" + l + "c), dimensions={}");
    line("ps", row, "multiply(" + l + "p, " + l + "cb)");
    line("gt", "pred[8," + cols + "]{1,0}", "compare(" + l + "ps, " + l + "h), direction=" + layers[i].direction);
    text += "  x" + std::to_string(i + 1) + " = " + row + " select(" + l + "gt, " + l + "ps, " + l + "h)" + meta + "\n";
  }
  text += "  ROOT out = " + row + " negate(x" + std::to_string(layers.size()) + ")\n}\n";
  return text;
}

struct Compiled {
  compiler::CompileStats stats;
  bef::Artifact artifact;
};

Compiled Compile(const std::string& text) {
  Compiled c;
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return c;
  compiler::CompileOptions options;
  options.host = E2EDeviceKind() == runtime::DeviceKind::kHost;
  options.cuda = !options.host;
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options, &c.stats);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (artifact.ok()) c.artifact = std::move(*artifact);
  return c;
}

// Kernel name -> how many Kernel thunks launch it.
std::map<std::string, int> Users(const bef::Artifact& a) {
  std::map<std::string, int> users;
  thunks::ForEachThunk(a.program.root, [&](const thunks::Thunk& t, int) {
    if (const auto* k = t.As<thunks::KernelThunk>()) ++users[k->kernel_name];
  });
  return users;
}

void ExpectMatchesEvaluatorOnDevice(const std::string& text) {
  auto device = runtime::Device::Create(E2EDeviceKind());
  ASSERT_TRUE(device.ok()) << device.status().message();
  ExpectMatchesEvaluator(text, **device, /*seed=*/3);
}

// How many distinct kernels `users` lists with exactly `n` users.
int KernelsWithUsers(const std::map<std::string, int>& users, int n) {
  int count = 0;
  for (const auto& [name, u] : users) count += u == n;
  return count;
}

// One layer is k kernels, the last of them the scaled select (with the
// final negate fused into it): on the host k = 4 (the row max, the
// exponentials, their sum, the select); on CUDA k = 1 (the row
// normalization keeps the softmax in one kernel with the select).
int64_t KernelsPerLayer() {
  Compiled one = Compile(LayeredModule({{}}));
  EXPECT_EQ(one.stats.kernels, one.stats.distinct_kernels);
  return one.stats.kernels;
}

TEST(KernelDedupTest, RepeatedLayersShareTheirKernels) {
  const int64_t k = KernelsPerLayer();
  ASSERT_EQ(k, E2EDeviceKind() == runtime::DeviceKind::kHost ? 4 : 1);
  const std::string four = LayeredModule({{}, {}, {}, {}});
  Compiled c = Compile(four);
  // Four layers launch four times as many kernels but generate the single
  // layer's plus one: every layer's select but the last one's is a kernel
  // without the negate. (The first layer reads the parameter x0 where the
  // others read a GEMM's result: nothing changes in the kernels.)
  EXPECT_EQ(c.stats.kernels, 4 * k);
  EXPECT_EQ(c.stats.distinct_kernels, k + 1);
  std::map<std::string, int> users = Users(c.artifact);
  EXPECT_EQ(static_cast<int64_t>(users.size()), c.stats.distinct_kernels);
  EXPECT_EQ(KernelsWithUsers(users, 4), k - 1);  // max, exponentials, sum
  EXPECT_EQ(KernelsWithUsers(users, 3), 1);      // the select of layers 0-2
  EXPECT_EQ(KernelsWithUsers(users, 1), 1);      // the last select and negate
  // Each image holds each distinct kernel once, and nothing else.
  for (const bef::KernelImage& image : c.artifact.kernel_images) {
    std::set<std::string> names;
    for (const bef::KernelEntry& e : image.kernels) names.insert(e.name);
    EXPECT_EQ(names.size(), image.kernels.size());
    EXPECT_EQ(names.size(), users.size()) << image.target;
    for (const auto& [name, n] : users) EXPECT_TRUE(names.count(name)) << name << " in " << image.target;
  }
  ExpectMatchesEvaluatorOnDevice(four);
}

TEST(KernelDedupTest, NearIdenticalLayersKeepTheirOwnKernels) {
  const int64_t k = KernelsPerLayer();
  // Four layers, of which the second scales by another constant and the
  // third compares the other way round: their selects are kernels of
  // their own, what comes before them is still shared.
  const std::string varied = LayeredModule({{}, {"0.25", "GT"}, {"0.5", "LT"}, {}});
  Compiled c = Compile(varied);
  EXPECT_EQ(c.stats.kernels, 4 * k);
  EXPECT_EQ(c.stats.distinct_kernels, k + 3);
  std::map<std::string, int> users = Users(c.artifact);
  EXPECT_EQ(static_cast<int64_t>(users.size()), c.stats.distinct_kernels);
  EXPECT_EQ(KernelsWithUsers(users, 4), k - 1);
  EXPECT_EQ(KernelsWithUsers(users, 1), 4);  // three selects and the last one
  ExpectMatchesEvaluatorOnDevice(varied);
}

TEST(KernelDedupTest, DifferentShapesDoNotShare) {
  // The same layers at 16 and at 24 columns.
  auto module = hlo::ParseHloModule(LayeredModule({{}, {}}, 16));
  ASSERT_TRUE(module.ok());
  auto wide_module = hlo::ParseHloModule(LayeredModule({{}, {}}, 24));
  ASSERT_TRUE(wide_module.ok());
  auto again = hlo::ParseHloModule(LayeredModule({{}, {}}, 16));
  ASSERT_TRUE(again.ok());
  std::vector<emitter::KernelRequest> requests = {
      {"narrow", (*module)->entry()}, {"wide", (*wide_module)->entry()}, {"narrow_again", (*again)->entry()}};
  compiler::DistinctKernels d = compiler::DeduplicateKernels(requests, {});
  ASSERT_EQ(d.specs.size(), 2u);
  EXPECT_EQ(d.distinct_name["narrow_again"], d.distinct_name["narrow"]);
  EXPECT_NE(d.distinct_name["wide"], d.distinct_name["narrow"]);
  // Named after the first user's stem and what the kernel computes.
  EXPECT_EQ(d.distinct_name["narrow"].rfind("narrow_", 0), 0u) << d.distinct_name["narrow"];
  EXPECT_EQ(d.distinct_name["wide"].rfind("wide_", 0), 0u) << d.distinct_name["wide"];
  EXPECT_EQ(d.specs[0].name, d.distinct_name["narrow"]);
}

TEST(KernelDedupTest, NamesDependOnTheKernelNotOnItsFirstUser) {
  // Layer numbers are not part of a name; which user comes first is not
  // either: the same kernel requested first by "add_7_fusion" or by
  // "add_12_fusion" gets one name.
  auto module = hlo::ParseHloModule(LayeredModule({{}}));
  ASSERT_TRUE(module.ok());
  const hlo::HloComputation* c = (*module)->entry();
  compiler::DistinctKernels first = compiler::DeduplicateKernels({{"add_7_fusion", c}, {"add_12_fusion", c}}, {});
  compiler::DistinctKernels second = compiler::DeduplicateKernels({{"add_12_fusion", c}}, {});
  ASSERT_EQ(first.specs.size(), 1u);
  EXPECT_EQ(first.specs[0].name, second.specs[0].name);
  EXPECT_EQ(first.specs[0].name.rfind("add_fusion_", 0), 0u) << first.specs[0].name;
  // A different computation under the same stem gets another name.
  auto other = hlo::ParseHloModule(LayeredModule({{}}, 24));
  ASSERT_TRUE(other.ok());
  compiler::DistinctKernels both = compiler::DeduplicateKernels({{"add_7_fusion", c}, {"add_8_fusion", (*other)->entry()}}, {});
  ASSERT_EQ(both.specs.size(), 2u);
  EXPECT_NE(both.specs[0].name, both.specs[1].name);
}

TEST(KernelDedupTest, KernelsWhoseArgumentsAliasDifferentlyDoNotShare) {
  // The same computation launched once with an output in its operand's
  // buffer and once with distinct buffers: codegen writes the first through
  // the operand's pointer, so the two are different code.
  auto module = hlo::ParseHloModule(LayeredModule({{}}));
  ASSERT_TRUE(module.ok());
  const hlo::HloComputation* c = (*module)->entry();
  codegen::KernelArgumentAliasing in_place, distinct;
  const size_t n = c->parameter_count() + 1;
  distinct.same_buffer.assign(n, -1);
  distinct.disjoint.assign(n, true);
  in_place = distinct;
  in_place.same_buffer[n - 1] = 0;
  std::map<std::string, codegen::KernelArgumentAliasing> aliasing = {
      {"a", distinct}, {"b", in_place}, {"c", distinct}};
  compiler::DistinctKernels d = compiler::DeduplicateKernels({{"a", c}, {"b", c}, {"c", c}}, aliasing);
  ASSERT_EQ(d.specs.size(), 2u);
  EXPECT_NE(d.distinct_name["b"], d.distinct_name["a"]);
  EXPECT_EQ(d.distinct_name["c"], d.distinct_name["a"]);
  EXPECT_EQ(d.specs[1].aliasing.same_buffer, in_place.same_buffer);
}

}  // namespace
}  // namespace kiln::testing
