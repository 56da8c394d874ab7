// CUDA convolution: executes a ConvolutionThunk on device memory with
// cuDNN's legacy convolution API, stream-ordered on the stream the handle is
// bound to (cudnnSetStream).
//
// The thunk is reduced to cuDNN's [N, C, spatial...] / KCRS form by roles
// (x: the forward input, w: the filter, y: the forward output; which of
// them are operands and which the result depends on the kind). Activations
// keep their memory order: any dimension numbers and layouts become strided
// tensor descriptors. cuDNN's filter descriptor has no strides, so a filter
// that is not packed KCRS (the canonical HWIO one, for instance) is
// transposed through device scratch with cudnnTransformTensor. cuDNN pads
// symmetrically; negative padding becomes an offset and a smaller extent of
// x, and asymmetric padding is expressed by an extent of x that gives the
// same output and the same taps where one exists, else by staging x in
// scratch with its padding written out (cudnnSetTensor + cudnnTransformTensor;
// for a written x, the other way after the call).
//
// A forward thunk with lhs_dilation (a transposed convolution) runs as
// cudnnConvolutionBackwardData of the strided convolution it is the input
// gradient of; batch_group_count > 1 as one call per batch group; window
// reversal as CUDNN_CONVOLUTION when every spatial dimension is reversed,
// else by reversing the staged filter's taps.
//
// What cuDNN cannot express is an Unimplemented error naming it:
// lhs_dilation together with a window stride or batch groups, more than 3
// spatial dimensions, mixed element types, padding that leaves nothing of x. Types: f32, f64, and f16 / bf16 with f32 compute.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/status.h"
#include "kernels_lib/cudnn_library.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// A tensor as cudnnSetTensorNdDescriptor takes it: [N, C, spatial...].
struct CudnnTensorShape {
  std::vector<int> dims, strides;
};

// x through scratch, its padding written out as zeros, where cuDNN's one
// symmetric padding cannot express the thunk's.
struct CudnnXStaging {
  CudnnTensorShape padded;     // [N, C, spatial...] packed, all batch groups; convolved with padding 0
  CudnnTensorShape interior;   // the thunk's (cropped) x inside `padded`, at interior_offset
  int64_t interior_offset = 0;
  CudnnTensorShape source;     // the same elements in the thunk's x (at x_offset_elements)
  // A written x (backward input) with cropped parts: zeroed whole first.
  std::optional<CudnnTensorShape> whole;
  int64_t elements = 0;        // of `padded`
};

// Everything the descriptors of one convolution hold.
struct CudnnConvolutionPlan {
  thunks::ConvolutionKind kind = thunks::ConvolutionKind::kForward;
  cudnnDataType_t data_type = CUDNN_DATA_FLOAT, compute_type = CUDNN_DATA_FLOAT;
  cudnnMathType_t math = CUDNN_FMA_MATH;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  int64_t element_bytes = 4;
  CudnnTensorShape x, y;
  int64_t x_offset_elements = 0;  // added to x's address (negative low padding)
  std::optional<CudnnXStaging> x_staging;
  std::vector<int> filter_dims;   // [K, C / groups, spatial...] (one batch group's)
  // How cuDNN's filter is packed: KCRS (NCHW), or KRSC (NHWC) for a
  // backward-data convolution over channel-minor tensors, where cuDNN's
  // algorithms want the filter in the tensors' layout.
  cudnnTensorFormat_t filter_format = CUDNN_TENSOR_NCHW;
  // The thunk's filter as a strided tensor [K, C / groups, spatial...] (for
  // a grouped transposed convolution [G, C / G, K / G, spatial...]) when it
  // is not packed KCRS or some spatial dimensions are reversed: it then
  // goes through scratch (cudnnTransformTensor), reversing the taps of the
  // filter_flip dimensions on the way.
  std::optional<CudnnTensorShape> filter_source;
  std::vector<bool> filter_flip;
  std::vector<int> padding, stride, dilation;
  int groups = 1;
  // batch_group_count > 1 runs one cuDNN call per batch group: group g's x
  // (batch slice), y (feature slice) and packed filter (K slice) start g
  // times these many elements after group 0's.
  int batch_groups = 1;
  int64_t x_group_offset = 0, y_group_offset = 0, filter_group_offset = 0;
  int64_t x_elements = 0, filter_elements = 0, y_elements = 0;
};

// Checks the thunk and derives the plan, or an "Unimplemented: cuDNN ..."
// error for what cuDNN cannot express.
StatusOr<CudnnConvolutionPlan> PlanCudnnConvolution(const thunks::ConvolutionThunk& conv);

// Device scratch of at least `bytes` (> 0), usable by work issued on the
// handle's stream until the next request.
using CudaScratch = std::function<StatusOr<uint64_t>(uint64_t bytes)>;

class CudnnDescriptorSet;

// One convolution thunk prepared for cuDNN: its plan, descriptors, the
// algorithm cuDNN's heuristics rank first and that algorithm's workspace
// size are made once (when the program is loaded: the heuristics cost more
// than a small convolution), then every execution only issues the calls.
// Run may be called from several streams at once (each with its own handle
// and scratch): nothing in here changes after Create.
class CudnnConvolution {
 public:
  // `handle` serves the heuristics' queries only.
  static StatusOr<std::unique_ptr<CudnnConvolution>> Create(const CudnnLibrary& cudnn, cudnnHandle_t handle,
                                                           const thunks::ConvolutionThunk& conv);
  ~CudnnConvolution();
  CudnnConvolution(const CudnnConvolution&) = delete;
  CudnnConvolution& operator=(const CudnnConvolution&) = delete;

  // operands / result: device addresses (CUdeviceptr values) of the
  // thunk's operands and result; the work is issued on `handle`'s stream.
  Status Run(cudnnHandle_t handle, const std::vector<uint64_t>& operands, uint64_t result,
             const CudaScratch& scratch) const;

 private:
  CudnnConvolution(const CudnnLibrary& cudnn, CudnnConvolutionPlan plan);
  Status Prepare(cudnnHandle_t handle);
  Status PrepareFilterStaging();
  Status StageFilter(cudnnHandle_t handle, uint64_t thunk_filter, uint64_t packed, bool to_packed, const void* one,
                     const void* zero) const;
  bool empty_result() const;

  const CudnnLibrary& lib_;
  CudnnConvolutionPlan plan_;
  std::unique_ptr<CudnnDescriptorSet> descriptors_;  // owns every descriptor below
  cudnnTensorDescriptor_t xd_ = nullptr, yd_ = nullptr;
  cudnnFilterDescriptor_t wd_ = nullptr;
  cudnnConvolutionDescriptor_t cd_ = nullptr;
  cudnnTensorDescriptor_t interior_d_ = nullptr, source_d_ = nullptr, padded_d_ = nullptr, whole_d_ = nullptr;
  cudnnTensorDescriptor_t filter_piece_source_d_ = nullptr, filter_piece_packed_d_ = nullptr;
  std::vector<int> filter_packed_strides_;
  int64_t filter_pieces_ = 1;
  int algo_ = 0;
  size_t workspace_ = 0;
  uint64_t filter_bytes_ = 0, x_bytes_ = 0;
};

// Create and Run in one call (tests; the runtime prepares once per thunk).
Status CudaConvolution(const CudnnLibrary& cudnn, cudnnHandle_t handle, const thunks::ConvolutionThunk& conv,
                       const std::vector<uint64_t>& operands, uint64_t result, const CudaScratch& scratch);

}  // namespace kiln::kernels
