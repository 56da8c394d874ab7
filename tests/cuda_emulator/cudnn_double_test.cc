// The emulator's cuDNN double, reached as the runtime reaches it: the
// emulator library opened by kernels::CudnnLibrary, a handle and scratch
// from runtime::CudaBackend. One tiny 2D convolution per direction with
// hand-computed results (x 3x3, w 2x2, no padding, unit stride), the
// CUDNN_CONVOLUTION mode, and cuDNN's rejection of output dims it does not
// derive. Then kernels::CudaConvolution on the backward ConvolutionThunk
// kinds, which the compiler does not emit (its gradients are forward
// convolutions): asymmetric and negative padding (the staged input) and a
// filter gradient in HWIO order (the staged filter), hand-computed too.
#include <gtest/gtest.h>

#include <vector>

#include "kernels_lib/cuda_convolution.h"
#include "kernels_lib/cudnn_library.h"
#include "runtime/cuda_backend.h"

namespace kiln {
namespace {

class CudnnDoubleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = runtime::CudaBackend::Create(KILN_CUDA_EMULATOR_PATH, 0, 1);
    ASSERT_TRUE(backend.ok()) << backend.status().message();
    backend_ = std::move(*backend);
    auto lib = backend_->Cudnn();
    ASSERT_TRUE(lib.ok()) << lib.status().message();
    lib_ = *lib;
    auto handle = backend_->CudnnHandle(0);
    ASSERT_TRUE(handle.ok()) << handle.status().message();
    handle_ = *handle;
    ASSERT_EQ(lib_->cudnnCreateTensorDescriptor(&x_), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(lib_->cudnnCreateTensorDescriptor(&y_), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(lib_->cudnnCreateFilterDescriptor(&w_), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(lib_->cudnnCreateConvolutionDescriptor(&conv_), CUDNN_STATUS_SUCCESS);
    SetTensor(x_, 3, 3);
    SetTensor(y_, 2, 2);
    int filter[4] = {1, 1, 2, 2};
    ASSERT_EQ(lib_->cudnnSetFilterNdDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, filter),
              CUDNN_STATUS_SUCCESS);
    SetMode(CUDNN_CROSS_CORRELATION);
  }
  void TearDown() override {
    if (!lib_) return;
    lib_->cudnnDestroyTensorDescriptor(x_);
    lib_->cudnnDestroyTensorDescriptor(y_);
    lib_->cudnnDestroyFilterDescriptor(w_);
    lib_->cudnnDestroyConvolutionDescriptor(conv_);
  }

  // [1, 1, h, w], packed.
  void SetTensor(cudnnTensorDescriptor_t t, int h, int w) {
    int dims[4] = {1, 1, h, w}, strides[4] = {h * w, h * w, w, 1};
    ASSERT_EQ(lib_->cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, dims, strides), CUDNN_STATUS_SUCCESS);
  }
  void SetMode(cudnnConvolutionMode_t mode) {
    int pad[2] = {0, 0}, stride[2] = {1, 1}, dilation[2] = {1, 1};
    ASSERT_EQ(lib_->cudnnSetConvolutionNdDescriptor(conv_, 2, pad, stride, dilation, mode, CUDNN_DATA_FLOAT),
              CUDNN_STATUS_SUCCESS);
  }
  // Device copy of `values`.
  CUdeviceptr Upload(const std::vector<float>& values) {
    const runtime::CudaDriver& d = backend_->driver();
    CUdeviceptr p = 0;
    EXPECT_EQ(d.cuMemAlloc(&p, values.size() * sizeof(float)), CUDA_SUCCESS);
    EXPECT_EQ(d.cuMemcpyHtoD(p, values.data(), values.size() * sizeof(float)), CUDA_SUCCESS);
    allocations_.push_back(p);
    return p;
  }
  std::vector<float> Download(CUdeviceptr p, size_t count) {
    const runtime::CudaDriver& d = backend_->driver();
    std::vector<float> out(count);
    EXPECT_EQ(d.cuMemcpyDtoHAsync(out.data(), p, count * sizeof(float), backend_->stream(0)), CUDA_SUCCESS);
    EXPECT_EQ(d.cuStreamSynchronize(backend_->stream(0)), CUDA_SUCCESS);
    return out;
  }
  void* Ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

  std::unique_ptr<runtime::CudaBackend> backend_;
  const kernels::CudnnLibrary* lib_ = nullptr;
  cudnnHandle_t handle_ = nullptr;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  std::vector<CUdeviceptr> allocations_;
  const std::vector<float> x_values_{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<float> w_values_{1, 2, 3, 4};
  const std::vector<float> dy_values_{1, 0, 0, 2};
  const float one_ = 1, zero_ = 0;
};

TEST_F(CudnnDoubleTest, Forward) {
  // y[i][j] = x[i][j] + 2 x[i][j+1] + 3 x[i+1][j] + 4 x[i+1][j+1].
  CUdeviceptr x = Upload(x_values_), w = Upload(w_values_), y = Upload({-1, -1, -1, -1});
  ASSERT_EQ(lib_->cudnnConvolutionForward(handle_, &one_, x_, Ptr(x), w_, Ptr(w), conv_,
                                          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &zero_, y_, Ptr(y)),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(Download(y, 4), (std::vector<float>{37, 47, 67, 77}));
  // CUDNN_CONVOLUTION flips the filter: y[0][0] = 4*1 + 3*2 + 2*4 + 1*5.
  SetMode(CUDNN_CONVOLUTION);
  float beta = 1;  // adds to y's previous values
  ASSERT_EQ(lib_->cudnnConvolutionForward(handle_, &one_, x_, Ptr(x), w_, Ptr(w), conv_,
                                          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &beta, y_, Ptr(y)),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(Download(y, 4), (std::vector<float>{37 + 23, 47 + 33, 67 + 53, 77 + 63}));
}

TEST_F(CudnnDoubleTest, BackwardData) {
  // dy[0][0] = 1 spreads w over dx[0..1][0..1], dy[1][1] = 2 spreads 2w
  // over dx[1..2][1..2].
  CUdeviceptr dy = Upload(dy_values_), w = Upload(w_values_), dx = Upload(std::vector<float>(9, -1));
  ASSERT_EQ(lib_->cudnnConvolutionBackwardData(handle_, &one_, w_, Ptr(w), y_, Ptr(dy), conv_,
                                               CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, nullptr, 0, &zero_, x_, Ptr(dx)),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(Download(dx, 9), (std::vector<float>{1, 2, 0, 3, 6, 4, 0, 6, 8}));
}

TEST_F(CudnnDoubleTest, BackwardFilter) {
  // dw[r] = x[r] * 1 + x[r + (1, 1)] * 2.
  CUdeviceptr x = Upload(x_values_), dy = Upload(dy_values_), dw = Upload({-1, -1, -1, -1});
  ASSERT_EQ(lib_->cudnnConvolutionBackwardFilter(handle_, &one_, x_, Ptr(x), y_, Ptr(dy), conv_,
                                                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, nullptr, 0, &zero_, w_, Ptr(dw)),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(Download(dw, 4), (std::vector<float>{11, 14, 20, 23}));
}

TEST_F(CudnnDoubleTest, TransformTensorTransposes) {
  // A 2x3 row-major matrix read through column-major strides.
  int dims[4] = {1, 1, 3, 2}, src_strides[4] = {6, 6, 1, 3}, dst_strides[4] = {6, 6, 2, 1};
  cudnnTensorDescriptor_t src = nullptr, dst = nullptr;
  ASSERT_EQ(lib_->cudnnCreateTensorDescriptor(&src), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(lib_->cudnnCreateTensorDescriptor(&dst), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(lib_->cudnnSetTensorNdDescriptor(src, CUDNN_DATA_FLOAT, 4, dims, src_strides), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(lib_->cudnnSetTensorNdDescriptor(dst, CUDNN_DATA_FLOAT, 4, dims, dst_strides), CUDNN_STATUS_SUCCESS);
  CUdeviceptr a = Upload({1, 2, 3, 4, 5, 6}), b = Upload(std::vector<float>(6, 0));
  ASSERT_EQ(lib_->cudnnTransformTensor(handle_, &one_, src, Ptr(a), &zero_, dst, Ptr(b)), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(Download(b, 6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  lib_->cudnnDestroyTensorDescriptor(src);
  lib_->cudnnDestroyTensorDescriptor(dst);
}

TEST_F(CudnnDoubleTest, RejectsOutputDimsCudnnDoesNotDerive) {
  SetTensor(y_, 3, 3);  // a 2x2 filter over 3x3 without padding gives 2x2
  CUdeviceptr x = Upload(x_values_), w = Upload(w_values_), y = Upload(std::vector<float>(9, 0));
  cudnnStatus_t s = lib_->cudnnConvolutionForward(handle_, &one_, x_, Ptr(x), w_, Ptr(w), conv_,
                                                  CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &zero_, y_,
                                                  Ptr(y));
  EXPECT_EQ(s, CUDNN_STATUS_BAD_PARAM);
  EXPECT_NE(lib_->StatusText(s).find("output dims"), std::string::npos) << lib_->StatusText(s);
}

// The forward convolution both backward thunks below differentiate: 1x4 x,
// 1x2 filter, padding (0, 0) x (1, -1): y[o] = x[o-1] w[0] + x[o] w[1],
// o < 3 (x[-1] is padding, x[3] is cropped).
thunks::ConvolutionThunk BackwardThunk(thunks::ConvolutionKind kind, Shape a, Shape b, Shape result) {
  thunks::ConvolutionThunk c;
  c.kind = kind;
  c.operands.resize(2);
  c.operand_shapes = {std::move(a), std::move(b)};
  c.result_shape = std::move(result);
  c.window = {thunks::WindowDimension{1, 1, 0, 0, 1, 1, false}, thunks::WindowDimension{2, 1, 1, -1, 1, 1, false}};
  return c;
}

thunks::ConvolutionDimensions Nchw(bool hwio_filter) {
  thunks::ConvolutionDimensions d;
  d.input_batch = d.output_batch = 0;
  d.input_feature = d.output_feature = 1;
  d.input_spatial = d.output_spatial = {2, 3};
  if (hwio_filter) {
    d.kernel_spatial = {0, 1}, d.kernel_input_feature = 2, d.kernel_output_feature = 3;
  } else {
    d.kernel_output_feature = 0, d.kernel_input_feature = 1, d.kernel_spatial = {2, 3};
  }
  return d;
}

TEST_F(CudnnDoubleTest, BackwardInputThunkWithCroppedInput) {
  // dx[i] = dy[i+1] w[0] + dy[i] w[1]; dx[3] was cropped: no gradient.
  using ET = ElementType;
  thunks::ConvolutionThunk c = BackwardThunk(thunks::ConvolutionKind::kBackwardInput, Shape(ET::kF32, {1, 1, 1, 3}),
                                             Shape(ET::kF32, {1, 1, 1, 2}), Shape(ET::kF32, {1, 1, 1, 4}));
  c.dimensions = Nchw(false);
  CUdeviceptr dy = Upload({1, 10, 100}), w = Upload({1, 2}), dx = Upload({-1, -1, -1, -1});
  runtime::CudaBackend* backend = backend_.get();
  Status s = kernels::CudaConvolution(*lib_, handle_, c, {dy, w}, dx, [backend](uint64_t bytes) -> StatusOr<uint64_t> {
    KILN_ASSIGN_OR_RETURN(CUdeviceptr p, backend->LibraryScratch(0, bytes));
    return static_cast<uint64_t>(p);
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Download(dx, 4), (std::vector<float>{12, 120, 200, 0}));
}

TEST_F(CudnnDoubleTest, BackwardFilterThunkInHwioOrder) {
  // dw[r][o] = sum over t of x[t - 1 + r] dy[o][t]; dy's second feature is
  // 1000 times its first. dw is stored HWIO: (r, o) at 2r + o.
  using ET = ElementType;
  thunks::ConvolutionThunk c = BackwardThunk(thunks::ConvolutionKind::kBackwardFilter, Shape(ET::kF32, {1, 1, 1, 4}),
                                             Shape(ET::kF32, {1, 2, 1, 3}), Shape(ET::kF32, {1, 2, 1, 2}));
  c.dimensions = Nchw(true);
  auto plan = kernels::PlanCudnnConvolution(c);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->filter_source.has_value());  // HWIO is not KCRS
  EXPECT_TRUE(plan->x_staging.has_value());      // padding 1_-1 has no symmetric form
  CUdeviceptr x = Upload({1, 2, 3, 4}), dy = Upload({1, 10, 100, 1000, 10000, 100000}), dw = Upload({-1, -1, -1, -1});
  runtime::CudaBackend* backend = backend_.get();
  Status s = kernels::CudaConvolution(*lib_, handle_, c, {x, dy}, dw, [backend](uint64_t bytes) -> StatusOr<uint64_t> {
    KILN_ASSIGN_OR_RETURN(CUdeviceptr p, backend->LibraryScratch(0, bytes));
    return static_cast<uint64_t>(p);
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Download(dw, 4), (std::vector<float>{210, 210000, 321, 321000}));
}

TEST(CudnnLibraryTest, MissingLibraryIsOneLineError) {
  auto lib = kernels::CudnnLibrary::Load({"libkiln_no_such_cudnn.so.9"});
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.status().message().find("cuDNN unavailable: cannot load libkiln_no_such_cudnn.so.9"),
            std::string::npos)
      << lib.status().message();
  EXPECT_EQ(lib.status().message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace kiln
