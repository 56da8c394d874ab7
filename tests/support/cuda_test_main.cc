// main() of the tests that need a GPU: without a usable CUDA device the
// whole binary exits 77, which ctest reports as SKIPPED (never as passed),
// with the reason on stdout.
#include <gtest/gtest.h>

#include <cstdio>

#include "runtime/runtime.h"

int main(int argc, char** argv) {
  auto device = kiln::runtime::Device::Create(kiln::runtime::DeviceKind::kCuda);
  if (!device.ok()) {
    std::printf("SKIPPED: no usable CUDA device: %s\n", device.status().message().c_str());
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
