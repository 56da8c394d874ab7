// A host executable keeps its outputs and temporaries of at least
// RetainedBuffers::kMinBytes (128 KiB, glibc's threshold for handing an
// allocation fresh pages) for the next execution, once the caller drops
// the result: the next execution writes the same memory instead of
// faulting in new pages. Below the threshold the allocator recycles.
#include <gtest/gtest.h>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "runtime/runtime.h"

namespace kiln::testing {
namespace {

TEST(HostRetainedBuffersTest, AnOutputOf256KiBIsReusedOnceDropped) {
  auto module = hlo::ParseHloModule(R"(HloModule m
ENTRY e {
  p = f32[65536] parameter(0)
  ROOT r = f32[65536] negate(p)
})");
  ASSERT_TRUE(module.ok()) << module.status().message();
  compiler::CompileOptions options;
  options.host = true;
  auto artifact = compiler::CompileModule(**module, options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  auto device = runtime::Device::Create(runtime::DeviceKind::kHost);
  ASSERT_TRUE(device.ok()) << device.status().message();
  auto exe = runtime::LoadedExecutable::Load(**device, *artifact);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  auto arg = runtime::Buffer::Allocate((*exe)->argument_shapes()[0]);
  ASSERT_TRUE(arg.ok()) << arg.status().message();
  float* in = reinterpret_cast<float*>(arg->data());
  for (int i = 0; i < 65536; ++i) in[i] = static_cast<float>(i % 97) - 48.0f;

  const uint8_t* first = nullptr;
  for (int run = 0; run < 3; ++run) {
    in[run] = 1000.0f + run;  // each run's result differs from the last
    auto result = (*exe)->ExecuteSync({*arg}, runtime::ExecuteOptions{});
    ASSERT_TRUE(result.ok()) << result.status().message();
    ASSERT_EQ(result->outputs.size(), 1u);
    const float* out = reinterpret_cast<const float*>(result->outputs[0].data());
    for (int i = 0; i < 65536; ++i) ASSERT_EQ(out[i], -in[i]) << "run " << run << " element " << i;
    if (run == 0) first = result->outputs[0].data();
    else EXPECT_EQ(result->outputs[0].data(), first) << "run " << run;
  }
}

}  // namespace
}  // namespace kiln::testing
