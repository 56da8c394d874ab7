// A fixture for the library doubles' tests: the runtime's CudaBackend on
// the emulator library (KILN_CUDA_EMULATOR_PATH), as the runtime reaches
// the doubles, with device buffers uploaded from and downloaded to host
// vectors (freed when the test ends).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "runtime/cuda_backend.h"

namespace kiln::testing {

class EmulatedBackendTest : public ::testing::Test {
 protected:
  // A backend with `streams` streams.
  void CreateBackend(int streams = 1) {
    auto backend = runtime::CudaBackend::Create(KILN_CUDA_EMULATOR_PATH, 0, streams);
    ASSERT_TRUE(backend.ok()) << backend.status().message();
    backend_ = std::move(*backend);
  }
  void TearDown() override {
    if (backend_)
      for (CUdeviceptr p : allocations_) backend_->driver().cuMemFree(p);
  }

  template <typename T>
  CUdeviceptr Upload(const std::vector<T>& values) {
    const runtime::CudaDriver& d = backend_->driver();
    CUdeviceptr p = 0;
    EXPECT_EQ(d.cuMemAlloc(&p, values.size() * sizeof(T)), CUDA_SUCCESS);
    EXPECT_EQ(d.cuMemcpyHtoD(p, values.data(), values.size() * sizeof(T)), CUDA_SUCCESS);
    allocations_.push_back(p);
    return p;
  }
  // `count` elements at `p`, read on stream `stream` once its work is done.
  template <typename T>
  std::vector<T> Download(CUdeviceptr p, size_t count, int stream = 0) {
    const runtime::CudaDriver& d = backend_->driver();
    std::vector<T> out(count);
    EXPECT_EQ(d.cuMemcpyDtoHAsync(out.data(), p, count * sizeof(T), backend_->stream(stream)), CUDA_SUCCESS);
    EXPECT_EQ(d.cuStreamSynchronize(backend_->stream(stream)), CUDA_SUCCESS);
    return out;
  }

  std::unique_ptr<runtime::CudaBackend> backend_;
  std::vector<CUdeviceptr> allocations_;
};

}  // namespace kiln::testing
