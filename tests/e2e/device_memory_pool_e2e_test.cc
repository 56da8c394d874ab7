// The CUDA backend's device memory pool (runtime/cuda_memory_pool.h) and
// load-time preparation of cuDNN convolutions, on the emulated CUDA device
// (KILN_E2E_DEVICE=cuda; the host run only checks the size classes). The
// emulator's own counts of live allocations and cuDNN descriptors
// (kilnEmuLiveObjects) are the independent witness: a released block stays
// allocated in the driver and its address comes back for the next request
// of its class; an allocation the driver refuses for lack of memory
// succeeds after the pool gives its cached blocks back; with
// KILN_CUDA_MEMORY_POOL=off every block goes back to the driver; a
// convolution's descriptors exist from load to unload and no execution
// makes more.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>

#include "compiler/driver/compiler.h"
#include "cuda_emulator/include/kiln_cuda_emulator.h"
#include "runtime/runtime.h"
#include "tests/e2e/e2e_test_util.h"
#ifdef KILN_HAVE_CUDA_HEADERS
#include "runtime/cuda_memory_pool.h"
#endif

namespace kiln::testing {
namespace {

using runtime::Buffer;
using runtime::MemorySpace;

struct Emulator {
  int (*live)(KilnEmuLiveObjects*) = nullptr;
  int (*inject)(int, int64_t) = nullptr;
};

std::optional<Emulator> FindEmulator() {
  const char* path = std::getenv("KILN_CUDA_EMULATOR");
  if (!path || !*path) return std::nullopt;
  void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return std::nullopt;
  Emulator e;
  e.live = reinterpret_cast<int (*)(KilnEmuLiveObjects*)>(dlsym(lib, "kilnEmuLiveObjects"));
  e.inject = reinterpret_cast<int (*)(int, int64_t)>(dlsym(lib, "kilnEmuInjectFault"));
  if (!e.live || !e.inject) return std::nullopt;
  return e;
}

#ifdef KILN_HAVE_CUDA_HEADERS
TEST(CudaMemoryPoolClasses, RoundUpByAtMostAQuarter) {
  using runtime::CudaMemoryPool;
  EXPECT_EQ(CudaMemoryPool::ClassBytes(0), 256u);
  EXPECT_EQ(CudaMemoryPool::ClassBytes(1), 256u);
  EXPECT_EQ(CudaMemoryPool::ClassBytes(256), 256u);
  EXPECT_EQ(CudaMemoryPool::ClassBytes(257), 512u);
  EXPECT_EQ(CudaMemoryPool::ClassBytes(1000), 1024u);
  EXPECT_EQ(CudaMemoryPool::ClassBytes(1300), 1536u);   // 1024 * 1.5
  EXPECT_EQ(CudaMemoryPool::ClassBytes(4097), 5120u);   // 4096 * 1.25
  EXPECT_EQ(CudaMemoryPool::ClassBytes(7169), 8192u);   // past 4096 * 1.75
  EXPECT_EQ(CudaMemoryPool::ClassBytes((64 << 20) + 1), uint64_t{66} << 20);  // whole 2 MiB
  uint64_t previous = 0;
  for (uint64_t bytes = 1; bytes < (uint64_t{256} << 20); bytes = bytes * 9 / 8 + 7) {
    uint64_t c = CudaMemoryPool::ClassBytes(bytes);
    EXPECT_GE(c, bytes);
    EXPECT_EQ(c % 256, 0u) << bytes;
    EXPECT_LE(c, bytes + bytes / 4 + 256) << bytes;
    EXPECT_GE(c, previous) << bytes;  // monotone
    previous = c;
  }
}
#endif

class DeviceMemoryPoolTest : public E2EDeviceTest {
 protected:
  void SetUp() override {
    if (E2EDeviceKind() != runtime::DeviceKind::kCuda) GTEST_SKIP() << "CUDA only (KILN_E2E_DEVICE=cuda)";
    E2EDeviceTest::SetUp();
    emulator_ = FindEmulator();
    if (!emulator_) GTEST_SKIP() << "needs kiln's CUDA emulator (KILN_CUDA_EMULATOR)";
  }
  KilnEmuLiveObjects Live() const {
    KilnEmuLiveObjects l{};
    EXPECT_EQ(emulator_->live(&l), 0);
    return l;
  }
  Buffer DeviceBuffer(runtime::Device& device, int64_t bytes) {
    StatusOr<Buffer> b = device.Allocate(Shape(ElementType::kU8, {bytes}), MemorySpace::kDevice);
    EXPECT_TRUE(b.ok()) << b.status().message();
    return b.ok() ? *b : Buffer();
  }
  std::optional<Emulator> emulator_;
};

TEST_F(DeviceMemoryPoolTest, ReleasedBlockServesTheNextRequestOfItsClass) {
  uint64_t first_address = 0;
  {
    Buffer a = DeviceBuffer(*device_, 1000);
    first_address = a.device_address();
    ASSERT_NE(first_address, 0u);
  }
  const KilnEmuLiveObjects cached = Live();
  Buffer b = DeviceBuffer(*device_, 900);  // the same 1024-byte class
  EXPECT_EQ(b.device_address(), first_address);
  EXPECT_EQ(Live().device_allocations, cached.device_allocations);
  Buffer c = DeviceBuffer(*device_, 900);  // the cached one is taken: a new block
  EXPECT_NE(c.device_address(), first_address);
  EXPECT_EQ(Live().device_allocations, cached.device_allocations + 1);
}

constexpr const char* kScale = R"(
HloModule scale
ENTRY main {
  x = f32[1000] parameter(0)
  two = f32[] constant(2)
  b = f32[1000] broadcast(two), dimensions={}
  ROOT y = f32[1000] multiply(x, b)
})";

TEST_F(DeviceMemoryPoolTest, ExecutionOutputsReuseTheirBlocks) {
  std::optional<bef::Artifact> artifact = CompileForHostAndCuda(kScale);
  ASSERT_TRUE(artifact);
  auto exe = runtime::LoadedExecutable::Load(*device_, *artifact);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  StatusOr<Buffer> x = Buffer::Allocate(Shape(ElementType::kF32, {1000}));
  ASSERT_TRUE(x.ok());
  auto* xs = reinterpret_cast<float*>(x->data());
  for (int i = 0; i < 1000; ++i) xs[i] = static_cast<float>(i % 17) - 8;
  auto up = device_->TransferToDevice(*x);
  ASSERT_TRUE(up.ok()) << up.status().message();
  ASSERT_TRUE(up->done.Wait().ok());
  uint64_t output_address = 0;
  KilnEmuLiveObjects after_first{};
  for (int run = 0; run < 6; ++run) {
    StatusOr<runtime::Event> done = (*exe)->Execute({up->buffer});
    ASSERT_TRUE(done.ok()) << done.status().message();
    StatusOr<runtime::ExecutionResult> r = done->Wait();
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->outputs.size(), 1u);
    ASSERT_EQ(r->outputs[0].memory_space(), MemorySpace::kDevice);
    if (run == 0) output_address = r->outputs[0].device_address();
    EXPECT_EQ(r->outputs[0].device_address(), output_address) << "run " << run;
    auto down = device_->TransferToHost(r->outputs[0]);
    ASSERT_TRUE(down.ok());
    ASSERT_TRUE(down->done.Wait().ok());
    const auto* ys = reinterpret_cast<const float*>(down->buffer.data());
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(ys[i], 2 * xs[i]) << "run " << run << " element " << i;
    r->outputs.clear();
    if (run == 0) after_first = Live();
  }
  EXPECT_EQ(Live().device_allocations, after_first.device_allocations);
}

TEST_F(DeviceMemoryPoolTest, OutOfMemoryReturnsTheCacheToTheDriverAndRetries) {
  const KilnEmuLiveObjects before = Live();
  for (int64_t mib : {1, 2, 3}) DeviceBuffer(*device_, mib << 20);  // each released at once: cached
  ASSERT_EQ(Live().device_allocations, before.device_allocations + 3);
  ASSERT_EQ(emulator_->inject(KILN_EMU_FAULT_ALLOC, 0), 0);  // the next cuMemAlloc fails
  Buffer big = DeviceBuffer(*device_, 5 << 20);
  EXPECT_NE(big.device_address(), 0u);
  // The three cached blocks went back to the driver before the retry.
  EXPECT_EQ(Live().device_allocations, before.device_allocations + 1);
}

TEST_F(DeviceMemoryPoolTest, PoolOffGivesEveryBlockBack) {
  ASSERT_EQ(setenv("KILN_CUDA_MEMORY_POOL", "sometimes", 1), 0);
  auto refused = runtime::Device::Create(runtime::DeviceKind::kCuda);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("KILN_CUDA_MEMORY_POOL must be on or off"), std::string::npos)
      << refused.status().message();
  ASSERT_EQ(setenv("KILN_CUDA_MEMORY_POOL", "off", 1), 0);
  auto direct = runtime::Device::Create(runtime::DeviceKind::kCuda);
  unsetenv("KILN_CUDA_MEMORY_POOL");
  ASSERT_TRUE(direct.ok()) << direct.status().message();
  const KilnEmuLiveObjects before = Live();
  { Buffer a = DeviceBuffer(**direct, 1000); EXPECT_EQ(Live().device_allocations, before.device_allocations + 1); }
  EXPECT_EQ(Live().device_allocations, before.device_allocations);
}

constexpr const char* kConvolution = R"(
HloModule conv
ENTRY main {
  x = f32[2,6,6,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  ROOT y = f32[2,6,6,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})";

TEST_F(DeviceMemoryPoolTest, ConvolutionDescriptorsAreMadeOnceAtLoad) {
  auto module = hlo::ParseHloModule(kConvolution);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::optional<bef::Artifact> artifact = CompileForHostAndCuda(kConvolution);
  ASSERT_TRUE(artifact);
  const KilnEmuLiveObjects before = Live();
  {
    auto exe = runtime::LoadedExecutable::Load(*device_, *artifact);
    ASSERT_TRUE(exe.ok()) << exe.status().message();
    const KilnEmuLiveObjects loaded = Live();
    // x, y, the filter and the convolution at least.
    EXPECT_GE(loaded.library_descriptors, before.library_descriptors + 4);
    std::vector<Literal> args = RandomArgs(**module, 3);
    StatusOr<Literal> expected = hlo::Evaluator().Evaluate(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    for (int run = 0; run < 3; ++run) {
      std::vector<Buffer> buffers;
      for (const Literal& a : args) {
        StatusOr<std::vector<Buffer>> leaves = tools::LiteralToBuffers(a);
        ASSERT_TRUE(leaves.ok());
        buffers.push_back((*leaves)[0]);
      }
      runtime::ExecuteOptions options;
      options.host_outputs = true;
      StatusOr<runtime::Event> done = (*exe)->Execute(buffers, options);
      ASSERT_TRUE(done.ok()) << done.status().message();
      StatusOr<runtime::ExecutionResult> r = done->Wait();
      ASSERT_TRUE(r.ok()) << r.status().message();
      StatusOr<Literal> actual = tools::BuffersToLiteral((*exe)->result_shape(), r->outputs);
      ASSERT_TRUE(actual.ok());
      EXPECT_TRUE(CompareValues(*actual, *expected, "result", {}).ok()) << "run " << run;
      EXPECT_EQ(Live().library_descriptors, loaded.library_descriptors) << "run " << run;
    }
  }
  EXPECT_EQ(Live().library_descriptors, before.library_descriptors);
}

}  // namespace
}  // namespace kiln::testing
