// Synchronous executions of small host programs run on the calling thread
// (LoadedExecutable::ExecuteSync, Stream::TryRunHere). They must stay
// correct when several threads execute at once, mixed with asynchronous
// Execute calls and with large programs (which go to the stream's worker)
// on the same stream, each result the one for its own inputs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "runtime/host_execution.h"
#include "runtime/runtime.h"
#include "tests/e2e/e2e_test_util.h"

namespace kiln::testing {
namespace {

std::unique_ptr<runtime::LoadedExecutable> Load(runtime::Device& device, const std::string& text) {
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return nullptr;
  compiler::CompileOptions options;
  options.host_cpus = {"x86-64-v2"};
  StatusOr<bef::Artifact> artifact = compiler::CompileModule(**module, options);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return nullptr;
  auto exe = runtime::LoadedExecutable::Load(device, *artifact);
  EXPECT_TRUE(exe.ok()) << exe.status().message();
  return exe.ok() ? std::move(*exe) : nullptr;
}

runtime::Buffer Floats(const std::vector<float>& v, const std::vector<int64_t>& dims) {
  const int64_t bytes = static_cast<int64_t>(v.size() * sizeof(float));
  runtime::Buffer b = *runtime::Buffer::Allocate(Shape(ElementType::kF32, dims), bytes);
  std::memcpy(b.data(), v.data(), static_cast<size_t>(bytes));
  return b;
}

float First(const runtime::Buffer& b) { return reinterpret_cast<const float*>(b.data())[0]; }

constexpr char kScalarAdd[] = R"(HloModule add
ENTRY e {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
})";

// 4 MiB in and out: not small, so it runs on the stream's worker.
constexpr char kLarge[] = R"(HloModule large
ENTRY e {
  x = f32[1024,1024] parameter(0)
  two = f32[] constant(2)
  b = f32[1024,1024] broadcast(two), dimensions={}
  ROOT m = f32[1024,1024] multiply(x, b)
})";

TEST(CallerThread, ConcurrentSyncAndAsyncExecutions) {
  auto device = runtime::Device::Create(runtime::DeviceKind::kHost, 2);
  ASSERT_TRUE(device.ok()) << device.status().message();
  auto add = Load(**device, kScalarAdd);
  auto large = Load(**device, kLarge);
  ASSERT_TRUE(add && large);
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        float x = static_cast<float>(t * 1000 + i), y = 0.5f;
        runtime::ExecuteOptions options;
        options.stream = (t + i) % 2;
        if (i % 50 == 7) {
          // A large program on the same stream, asynchronously.
          StatusOr<runtime::Event> event =
              large->Execute({Floats(std::vector<float>(1024 * 1024, x), {1024, 1024})}, options);
          if (!event.ok()) { ++failed; continue; }
          StatusOr<runtime::ExecutionResult> r = event->Wait();
          if (!r.ok()) ++failed;
          else if (First(r->outputs[0]) != 2 * x) ++wrong;
          continue;
        }
        if (i % 3 == 0) {
          StatusOr<runtime::Event> event = add->Execute({Floats({x}, {}), Floats({y}, {})}, options);
          StatusOr<runtime::ExecutionResult> r = event.ok() ? event->Wait() : event.status();
          if (!r.ok()) ++failed;
          else if (First(r->outputs[0]) != x + y) ++wrong;
          continue;
        }
        StatusOr<runtime::ExecutionResult> r = add->ExecuteSync({Floats({x}, {}), Floats({y}, {})}, options);
        if (!r.ok()) ++failed;
        else if (First(r->outputs[0]) != x + y) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CallerThread, ErrorsStillReachTheCaller) {
  auto device = runtime::Device::Create(runtime::DeviceKind::kHost);
  ASSERT_TRUE(device.ok());
  auto add = Load(**device, kScalarAdd);
  ASSERT_TRUE(add);
  StatusOr<runtime::ExecutionResult> r = add->ExecuteSync({Floats({1}, {})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Execute: expected 2 arguments, got 1");
  r = add->ExecuteSync({Floats({1}, {}), Floats({2}, {})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(First(r->outputs[0]), 3.0f);
}

}  // namespace
}  // namespace kiln::testing
