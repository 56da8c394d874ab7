// CudnnLibrary: cuDNN 9 (libcudnn.so.9, else libcudnn.so, or kiln's CUDA
// emulator, which doubles it) opened with dlopen at run time, as a table of
// the legacy convolution API functions kiln calls.
//
// As with cuBLAS (cublas_library.h), cuDNN is never linked: binaries must
// start on machines without it, and only a program with a Convolution thunk
// running on a CUDA device needs it. Only cudnn.h's types are used at build
// time (KILN_HAVE_CUDA_HEADERS). The legacy API (descriptors plus
// cudnnConvolution{Forward,BackwardData,BackwardFilter}) is used rather than
// the graph API: it covers what a ConvolutionThunk expresses with a fraction
// of the code, and cuDNN 9 still ships it.
#pragma once

#include <cudnn.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::kernels {

// clang-format off
#define KILN_CUDNN_FUNCTIONS(X) \
  X(cudnnGetVersion) \
  X(cudnnGetErrorString) \
  X(cudnnCreate) \
  X(cudnnDestroy) \
  X(cudnnSetStream) \
  X(cudnnCreateTensorDescriptor) \
  X(cudnnSetTensorNdDescriptor) \
  X(cudnnDestroyTensorDescriptor) \
  X(cudnnCreateFilterDescriptor) \
  X(cudnnSetFilterNdDescriptor) \
  X(cudnnDestroyFilterDescriptor) \
  X(cudnnCreateConvolutionDescriptor) \
  X(cudnnSetConvolutionNdDescriptor) \
  X(cudnnSetConvolutionGroupCount) \
  X(cudnnSetConvolutionMathType) \
  X(cudnnDestroyConvolutionDescriptor) \
  X(cudnnGetConvolutionForwardAlgorithm_v7) \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7) \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7) \
  X(cudnnGetConvolutionForwardWorkspaceSize) \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(cudnnConvolutionForward) \
  X(cudnnConvolutionBackwardData) \
  X(cudnnConvolutionBackwardFilter) \
  X(cudnnTransformTensor) \
  X(cudnnSetTensor)
// clang-format on

class CudnnLibrary {
 public:
  // Tries each name in order; the error ("cuDNN unavailable: cannot load
  // libcudnn.so.9 or libcudnn.so: <dlerror>") names them all on one line.
  static StatusOr<std::unique_ptr<CudnnLibrary>> Load(
      const std::vector<std::string>& candidates = {"libcudnn.so.9", "libcudnn.so"});
  // Stays loaded, like cuBLAS (its CUDA runtime registers exit handlers).
  ~CudnnLibrary() = default;
  CudnnLibrary(const CudnnLibrary&) = delete;
  CudnnLibrary& operator=(const CudnnLibrary&) = delete;

  // "CUDNN_STATUS_BAD_PARAM", followed by ": <detail>" when the library is
  // kiln's CUDA emulator and has a detail for the calling thread's last
  // failure (kilnEmuLastErrorDetail).
  std::string StatusText(cudnnStatus_t status) const;
  // Ok for CUDNN_STATUS_SUCCESS, else "<what> failed: <StatusText>".
  Status Check(cudnnStatus_t status, const std::string& what) const;
  const std::string& library() const { return library_; }

#define KILN_CUDNN_DECLARE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KILN_CUDNN_FUNCTIONS(KILN_CUDNN_DECLARE_MEMBER)
#undef KILN_CUDNN_DECLARE_MEMBER

 private:
  explicit CudnnLibrary(std::string library) : library_(std::move(library)) {}
  std::string library_;
  const char* (*emulator_detail_)() = nullptr;  // optional kilnEmuLastErrorDetail
};

}  // namespace kiln::kernels
