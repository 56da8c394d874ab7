// Host kernels past 2^31 elements: compiled for the host target alone, the
// artifact validates, loads and runs. A host kernel's work units (grid.x of
// its host entry) and iterations per unit (block.x) are int64 counts, not
// CUDA launch dimensions (bounded at 2^31), and never reach a Kernel
// thunk's launch. The kernels compute from an iota, so the 2^31 elements
// of their inputs never exist in memory; the expected values are computed
// by hand (the reference evaluator would need 16 GiB for one s64 operand).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "runtime/runtime.h"
#include "serialization/artifact.h"

namespace kiln::testing {
namespace {

constexpr int64_t kElements = (int64_t{1} << 31) + 256;  // a multiple of 256

struct Loaded {
  bef::Artifact artifact;  // as read back from its .bef bytes
  std::unique_ptr<runtime::Device> device;
  std::unique_ptr<runtime::LoadedExecutable> executable;
};

// Compiles `text` for the host alone, serializes, loads and validates the
// .bef bytes, and prepares the artifact on a host device.
void CompileForHost(const std::string& text, Loaded& out) {
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  compiler::CompileOptions options;
  options.host = true;
  options.cuda = false;
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  StatusOr<std::vector<uint8_t>> bytes = bef::SerializeArtifact(*artifact);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  StatusOr<bef::Artifact> loaded = bef::LoadArtifact(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  out.artifact = std::move(*loaded);
  // The Kernel thunks of a host-only artifact keep the default launch.
  thunks::ForEachThunk(out.artifact.program.root, [](const thunks::Thunk& t, int) {
    if (const auto* k = t.As<thunks::KernelThunk>()) {
      EXPECT_EQ(k->launch, thunks::LaunchDims{}) << k->kernel_name;
    }
  });
  auto device = runtime::Device::Create(runtime::DeviceKind::kHost);
  ASSERT_TRUE(device.ok()) << device.status().message();
  out.device = std::move(*device);
  auto exe = runtime::LoadedExecutable::Load(*out.device, out.artifact);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  out.executable = std::move(*exe);
}

// The largest grid.x and block.x among the host image's kernel entries.
std::pair<int64_t, int64_t> LargestHostEntry(const bef::Artifact& artifact) {
  std::pair<int64_t, int64_t> largest{0, 0};
  for (const bef::KernelImage& image : artifact.kernel_images) {
    if (image.kind != bef::TargetKind::kHost) continue;
    for (const bef::KernelEntry& e : image.kernels) {
      largest.first = std::max(largest.first, e.launch.grid.x);
      largest.second = std::max(largest.second, e.launch.block.x);
    }
  }
  return largest;
}

// The executable's only argument, a scalar holding `value`.
template <typename T>
runtime::Buffer Scalar(const runtime::LoadedExecutable& exe, T value) {
  auto b = runtime::Buffer::Allocate(exe.argument_shapes().at(0));
  EXPECT_TRUE(b.ok() && b->size() == sizeof value);
  std::memcpy(b->data(), &value, sizeof value);
  return *b;
}

// The failing kernel of llama3_8b's training step, in miniature: a sum
// over more than 2^31 elements is one host unit of more than 2^31
// iterations (block.x past the CUDA bound).
TEST(HugeHostKernelTest, ReductionOfMoreThan2To31ElementsIsOneUnit) {
  const std::string n = std::to_string(kElements);
  Loaded c;
  ASSERT_NO_FATAL_FAILURE(CompileForHost(R"(
HloModule huge_sum
add {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  ROOT s = s64[] add(a, b)
}
ENTRY e {
  p = s64[] parameter(0)
  i = s64[)" + n + R"(] iota(), iota_dimension=0
  byte = u8[)" + n + R"(] convert(i)
  wide = s64[)" + n + R"(] convert(byte)
  bp = s64[)" + n + R"(] broadcast(p), dimensions={}
  v = s64[)" + n + R"(] add(wide, bp)
  zero = s64[] constant(0)
  ROOT r = s64[] reduce(v, zero), dimensions={0}, to_apply=add
}
)", c));
  EXPECT_GT(LargestHostEntry(c.artifact).second, int64_t{1} << 31);
  auto result = c.executable->ExecuteSync({Scalar<int64_t>(*c.executable, 3)});
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->outputs.size(), 1u);
  int64_t sum = 0;
  std::memcpy(&sum, result->outputs[0].data(), sizeof sum);
  // sum over i < n of (i mod 256) + 3: n/256 full cycles of 0+1+...+255.
  EXPECT_EQ(sum, kElements / 256 * (255 * 256 / 2) + 3 * kElements);
}

// An elementwise kernel of more than 2^31 elements splits into more than
// 2^31 host units (one per element of its only dimension), which the
// host's thread pool runs as ranges; every element is checked.
TEST(HugeHostKernelTest, MoreThan2To31UnitsRunOnTheThreadPool) {
  const std::string n = std::to_string(kElements);
  Loaded c;
  ASSERT_NO_FATAL_FAILURE(CompileForHost(R"(
HloModule huge_iota
ENTRY e {
  p = u8[] parameter(0)
  i = s64[)" + n + R"(] iota(), iota_dimension=0
  byte = u8[)" + n + R"(] convert(i)
  bp = u8[)" + n + R"(] broadcast(p), dimensions={}
  ROOT r = u8[)" + n + R"(] add(byte, bp)
}
)", c));
  EXPECT_EQ(LargestHostEntry(c.artifact).first, kElements);
  auto result = c.executable->ExecuteSync({Scalar<uint8_t>(*c.executable, 7)});
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->outputs.size(), 1u);
  ASSERT_EQ(result->outputs[0].size(), kElements);
  const uint8_t* r = result->outputs[0].data();
  int64_t wrong = 0, first_wrong = -1;
  for (int64_t i = 0; i < kElements; ++i) {
    if (r[i] != static_cast<uint8_t>(i + 7) && wrong++ == 0) first_wrong = i;
  }
  EXPECT_EQ(wrong, 0) << "first at " << first_wrong;
}

}  // namespace
}  // namespace kiln::testing
