// The emulator's cuFFT double (and the cuBLAS scal double that normalizes
// inverse transforms), reached as the runtime reaches them: the emulator
// library opened by kernels::CufftLibrary / CublasLibrary, streams and
// handles from runtime::CudaBackend. Small transforms with hand-computed
// results through the C API (cuFFT is unnormalized), the double's
// documented overwriting of a complex-to-real input, its argument errors,
// and kernels::CudaFft (plan per stream, cuBLAS scaling, when the input
// must be copied) on the same values.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "kernels_lib/cublas_library.h"
#include "kernels_lib/cuda_fft.h"
#include "kernels_lib/cufft_library.h"
#include "tests/cuda_emulator/backend_test_util.h"

namespace kiln {
namespace {

namespace th = ::kiln::thunks;
using C64 = std::complex<float>;

class CufftDoubleTest : public testing::EmulatedBackendTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(CreateBackend(2));
    auto lib = backend_->Cufft();
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    lib_ = *lib;
  }
  cufftHandle Plan1D(int n, cufftType type) {
    cufftHandle plan = 0;
    EXPECT_EQ(lib_->cufftPlanMany(&plan, 1, &n, nullptr, 1, 0, nullptr, 1, 0, type, 1), CUFFT_SUCCESS);
    EXPECT_EQ(lib_->cufftSetStream(plan, backend_->stream(0)), CUFFT_SUCCESS);
    return plan;
  }
  template <typename T>
  T* Ptr(CUdeviceptr p) {
    return reinterpret_cast<T*>(p);
  }

  const kernels::CufftLibrary* lib_ = nullptr;
};

void ExpectNear(const std::vector<C64>& actual, const std::vector<C64>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_LE(std::abs(actual[i] - expected[i]), 1e-5) << "at " << i;
}

// [1, 2, 3, 4] -> [10, -2+2i, -2, -2-2i]; the inverse is 4x the input.
TEST_F(CufftDoubleTest, ComplexForwardAndUnnormalizedInverse) {
  cufftHandle plan = Plan1D(4, CUFFT_C2C);
  CUdeviceptr x = Upload(std::vector<C64>{1, 2, 3, 4}), y = Upload(std::vector<C64>(4));
  ASSERT_EQ(lib_->cufftExecC2C(plan, Ptr<cufftComplex>(x), Ptr<cufftComplex>(y), CUFFT_FORWARD), CUFFT_SUCCESS);
  ExpectNear(Download<C64>(y, 4), {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}});
  ASSERT_EQ(lib_->cufftExecC2C(plan, Ptr<cufftComplex>(y), Ptr<cufftComplex>(y), CUFFT_INVERSE), CUFFT_SUCCESS);
  ExpectNear(Download<C64>(y, 4), {4, 8, 12, 16});  // in place
  EXPECT_EQ(lib_->cufftDestroy(plan), CUFFT_SUCCESS);
}

TEST_F(CufftDoubleTest, ComplexToRealOverwritesItsInput) {
  cufftHandle plan = Plan1D(4, CUFFT_C2R);
  // The imaginary parts of the DC and Nyquist terms are ignored.
  CUdeviceptr x = Upload(std::vector<C64>{{10, 5}, {-2, 2}, {-2, 7}}), y = Upload(std::vector<float>(4));
  ASSERT_EQ(lib_->cufftExecC2R(plan, Ptr<cufftComplex>(x), Ptr<cufftReal>(y)), CUFFT_SUCCESS);
  std::vector<float> out = Download<float>(y, 4);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], 4.0f * (i + 1), 1e-5);
  for (C64 v : Download<C64>(x, 3)) EXPECT_TRUE(std::isnan(v.real()) && std::isnan(v.imag()));
  lib_->cufftDestroy(plan);
}

TEST_F(CufftDoubleTest, RejectsBadArguments) {
  cufftHandle plan = 0;
  int n[4] = {4, 4, 4, 4};
  cufftResult r = lib_->cufftPlanMany(&plan, 4, n, nullptr, 1, 0, nullptr, 1, 0, CUFFT_C2C, 1);
  EXPECT_EQ(lib_->StatusText(r), "CUFFT_INVALID_SIZE: cufftPlanMany: rank must be 1, 2 or 3");
  r = lib_->cufftPlanMany(&plan, 1, n, nullptr, 1, 0, nullptr, 1, 0, CUFFT_C2C, 0);
  EXPECT_EQ(r, CUFFT_INVALID_SIZE);
  r = lib_->cufftPlanMany(&plan, 1, n, nullptr, 1, 0, nullptr, 1, 0, static_cast<cufftType>(7), 1);
  EXPECT_EQ(r, CUFFT_INVALID_TYPE);
  r = lib_->cufftPlanMany(&plan, 1, n, n, 1, 4, nullptr, 1, 4, CUFFT_C2C, 1);
  EXPECT_EQ(r, CUFFT_NOT_SUPPORTED);

  plan = Plan1D(4, CUFFT_R2C);
  CUdeviceptr x = Upload(std::vector<C64>(4)), y = Upload(std::vector<C64>(4));
  r = lib_->cufftExecC2C(plan, Ptr<cufftComplex>(x), Ptr<cufftComplex>(y), CUFFT_FORWARD);
  EXPECT_EQ(lib_->StatusText(r), "CUFFT_INVALID_PLAN: cufftExecC2C: the plan is R2C, not C2C");
  lib_->cufftDestroy(plan);
  plan = Plan1D(4, CUFFT_C2C);
  r = lib_->cufftExecC2C(plan, Ptr<cufftComplex>(x), Ptr<cufftComplex>(y), 0);
  EXPECT_EQ(r, CUFFT_INVALID_VALUE);
  // Partly overlapping buffers: the double does not guess what cuFFT does.
  r = lib_->cufftExecC2C(plan, Ptr<cufftComplex>(x), Ptr<cufftComplex>(x + 8), CUFFT_FORWARD);
  EXPECT_EQ(r, CUFFT_NOT_SUPPORTED);
  EXPECT_EQ(lib_->cufftDestroy(plan), CUFFT_SUCCESS);
  EXPECT_EQ(lib_->cufftDestroy(plan), CUFFT_INVALID_PLAN);
  EXPECT_EQ(lib_->cufftSetStream(plan, backend_->stream(0)), CUFFT_INVALID_PLAN);
}

TEST_F(CufftDoubleTest, ScalDouble) {
  auto cublas = backend_->Cublas();
  ASSERT_TRUE(cublas.ok()) << cublas.status().message();
  auto handle = backend_->CublasHandle(0);
  ASSERT_TRUE(handle.ok()) << handle.status().message();
  const kernels::CublasLibrary& b = **cublas;
  CUdeviceptr x = Upload(std::vector<C64>{{1, 2}, {3, -4}});
  float half = 0.5f;
  ASSERT_EQ(b.cublasCsscal_v2(*handle, 2, &half, Ptr<cuComplex>(x), 1), CUBLAS_STATUS_SUCCESS);
  ExpectNear(Download<C64>(x, 2), {{0.5f, 1}, {1.5f, -2}});
  EXPECT_EQ(b.cublasCsscal_v2(*handle, 0, &half, nullptr, 1), CUBLAS_STATUS_SUCCESS);  // nothing to do
  EXPECT_EQ(b.cublasSscal_v2(*handle, 2, nullptr, Ptr<float>(x), 1), CUBLAS_STATUS_INVALID_VALUE);
}

// kernels::CudaFft, as the runtime's Fft thunk uses it.
TEST_F(CufftDoubleTest, CudaFftScalesInverseTransformsOnEachStream) {
  auto cublas = backend_->Cublas();
  ASSERT_TRUE(cublas.ok()) << cublas.status().message();
  th::FftThunk thunk{th::FftType::kIrfft, {4}, {}, {}, Shape(ElementType::kC64, {2, 3}),
                     Shape(ElementType::kF32, {2, 4})};
  auto fft = kernels::CudaFft::Create(*lib_, thunk, backend_->num_lanes());
  ASSERT_TRUE(fft.ok()) << fft.status().message();
  const std::vector<C64> spectrum{{10, 0}, {-2, 2}, {-2, 0}, {4, 0}, {0, 0}, {0, 0}};
  for (int stream = 0; stream < 2; ++stream) {
    const int lane = runtime::CudaBackend::Lane(stream, 0);  // the Device stream's own CUstream
    auto handle = backend_->CublasHandle(lane);
    ASSERT_TRUE(handle.ok()) << handle.status().message();
    CUdeviceptr x = Upload(spectrum), y = Upload(std::vector<float>(8));
    EXPECT_TRUE((*fft)->InputMustBeCopied(x, y));  // C2R overwrites its input
    ASSERT_TRUE((*fft)->Run(lane, backend_->stream(stream), *cublas, *handle, x, y).ok());
    std::vector<float> out = Download<float>(y, 8, stream);
    const float expected[8] = {1, 2, 3, 4, 1, 1, 1, 1};
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(out[i], expected[i], 1e-5) << "at " << i;
  }
  th::FftThunk forward{th::FftType::kFft, {4}, {}, {}, Shape(ElementType::kC64, {4}), Shape(ElementType::kC64, {4})};
  auto c2c = kernels::CudaFft::Create(*lib_, forward, 1);
  ASSERT_TRUE(c2c.ok()) << c2c.status().message();
  EXPECT_FALSE((*c2c)->InputMustBeCopied(0x1000, 0x1020));  // 32 bytes apart: disjoint
  EXPECT_TRUE((*c2c)->InputMustBeCopied(0x1000, 0x1010));
  EXPECT_FALSE((*c2c)->Run(0, backend_->stream(0), nullptr, nullptr, 0, 0).ok());  // null data pointers
}

}  // namespace
}  // namespace kiln
