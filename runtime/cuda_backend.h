// CudaBackend: one CUDA device as a runtime Backend: the dlopen'ed driver,
// the device's primary context, one CUstream per Device stream, the device
// memory pool (cuda_memory_pool.h), cuBLAS (loaded when the first program
// with a Gemm, TriangularSolve or inverse Fft thunk is loaded), cuBLASLt
// (loaded with the first program with an FP8 Gemm thunk; one handle, which
// no stream binds), cuDNN (loaded with the first program with a
// Convolution thunk), cuSOLVER (loaded with the first program with a
// Cholesky thunk), each with one handle per lane, one grown-on-demand
// library scratch block per lane, cuFFT (loaded when the first program
// with an Fft thunk is loaded; its plans belong to the executables), and
// kiln's radix sort kernels (loaded with the first program with a
// RadixSort thunk), NCCL (loaded with the first program whose collectives
// need peers). Internal to the runtime; needs the CUDA headers.
//
// A lane is one program stream (thunks/streams.h) of one Device stream:
// lane Lane(s, 0) is Device stream s's CUstream itself, lanes Lane(s, p)
// for p > 0 get CUstreams of their own, created on first use and kept, so
// that a multi-stream program's thunks run on one CUstream per program
// stream (cuda_program_streams.h). Library handles and scratch are per
// lane: two program streams never share a scratch block or a handle bound
// to another stream. Each Device stream has one more lane, CommLane(s),
// on which async collectives run beside the program's compute
// (cuda_comm_stream.h).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernels_lib/cublas_library.h"
#include "kernels_lib/cublaslt_library.h"
#include "kernels_lib/cudnn_library.h"
#include "kernels_lib/cufft_library.h"
#include "kernels_lib/cusolver_library.h"
#include "kernels_lib/nccl_library.h"
#include "runtime/backend.h"
#include "runtime/cuda_device_area.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_memory_pool.h"
#include "runtime/cuda_module.h"
#include "thunks/streams.h"

namespace kiln::runtime {

class CudaConditionalNodes;  // cuda_conditional_nodes.h

class CudaBackend : public Backend {
 public:
  // Opens `library` (libcuda.so.1), cuInit, device `ordinal`, primary
  // context, `num_streams` non-blocking streams.
  static StatusOr<std::unique_ptr<CudaBackend>> Create(const std::string& library, int ordinal,
                                                       int num_streams);
  // The same on an already loaded driver table.
  static StatusOr<std::unique_ptr<CudaBackend>> Create(std::unique_ptr<CudaDriver> driver,
                                                       int ordinal, int num_streams);
  ~CudaBackend() override;

  StatusOr<std::unique_ptr<BackendExecutable>> Load(
      const bef::Artifact& artifact, std::shared_ptr<const ProgramBinding> binding) override;

  // The allocator: device memory from the backend's CudaMemoryPool
  // (cached for reuse when the last handle goes; KILN_CUDA_MEMORY_POOL=off
  // at creation: cuMemAlloc and cuMemFree each time), pinned host memory
  // from cuMemHostAlloc, freed with the last handle (from any thread: the
  // context is made current first). The backend outlives its buffers, as
  // the Device does.
  StatusOr<Buffer> Allocate(const Shape& shape, int64_t bytes, MemorySpace space) override;
  // cuMemcpy{HtoD,DtoH}Async on the stream, then a stream sync.
  Status CopyToDevice(const Buffer& host, const Buffer& device, int64_t bytes, int stream) override;
  Status CopyToHost(const Buffer& device, const Buffer& host, int64_t bytes, int stream) override;

  const CudaDriver& driver() const { return *driver_; }
  // Makes the primary context current on the calling thread (every runtime
  // thread that issues CUDA work calls this first).
  Status MakeCurrent() const;
  CUstream stream(int i) const { return streams_[i]; }
  int num_streams() const { return static_cast<int>(streams_.size()); }
  // Lanes: see the file comment. The last lane of a Device stream is its
  // communication lane (cuda_comm_stream.h).
  static constexpr int kLanesPerStream = thunks::kMaxStreams + 1;
  static int Lane(int device_stream, int program_stream) {
    return device_stream * kLanesPerStream + program_stream;
  }
  static int CommLane(int device_stream) { return Lane(device_stream, thunks::kMaxStreams); }
  int num_lanes() const { return num_streams() * kLanesPerStream; }
  // The lane's CUstream, created on first use (non-blocking).
  StatusOr<CUstream> LaneStream(int lane);
  // Compute capability as major*10+minor (90 for an H100).
  int sm_arch() const { return sm_arch_; }
  const std::string& name() const { return name_; }
  // "<device name> (sm_90)"; the emulator's name already gives its arch.
  std::string Description() const override;

  // Loads cuBLAS once (error "cuBLAS unavailable: ...").
  StatusOr<const kernels::CublasLibrary*> Cublas();
  // The cuBLAS handle bound to lane `i`'s stream, created on first use.
  StatusOr<cublasHandle_t> CublasHandle(int i);
  // Loads cuBLASLt once (error "cuBLASLt unavailable: ...").
  StatusOr<const kernels::CublasLtLibrary*> CublasLt();
  // The device's cuBLASLt handle, created on first use (every call names
  // its stream, so the streams share it).
  StatusOr<cublasLtHandle_t> CublasLtHandle();
  // Loads cuDNN once (error "cuDNN unavailable: ...").
  StatusOr<const kernels::CudnnLibrary*> Cudnn();
  // The cuDNN handle bound to lane `i`'s stream, created on first use.
  StatusOr<cudnnHandle_t> CudnnHandle(int i);
  // Loads cuFFT once (error "cuFFT unavailable: ...").
  StatusOr<const kernels::CufftLibrary*> Cufft();
  // Loads cuSOLVER once (error "cuSOLVER unavailable: ...").
  StatusOr<const kernels::CusolverLibrary*> Cusolver();
  // Loads NCCL once (error "NCCL unavailable: ..."): the collectives of
  // multi-device programs (cuda_collectives.h).
  StatusOr<const kernels::NcclLibrary*> Nccl();
  // The device's ordinal (what NCCL names a rank's device by).
  int ordinal() const { return ordinal_; }
  // The cuSOLVER handle bound to lane `i`'s stream, created on first use.
  StatusOr<cusolverDnHandle_t> CusolverHandle(int i);
  // Device scratch of at least `bytes` for library calls on lane `i`
  // (cuDNN's and potrf's workspaces, a transposed filter, an FFT's input
  // copy), kept and grown on demand: a larger request waits for the stream
  // before the old block is freed.
  StatusOr<CUdeviceptr> LibraryScratch(int i, uint64_t bytes);
  // Where lane i's library scratch is now (0 before its first use): a
  // CUDA graph captured with another address must be captured again.
  CUdeviceptr LibraryScratchAddress(int i) const { return scratch_[static_cast<size_t>(i)].address(); }
  // kiln's radix sort kernels (kernels_lib/radix_sort_image.h), loaded once
  // (error "this kiln was built without the radix sort kernels" when the
  // build had no nvcc).
  StatusOr<const CudaModule*> RadixSortModule();
  // Conditional nodes for CUDA graphs (cuda_conditional_nodes.h), set up
  // once; the error (kept) says why the driver has none, and loops and
  // conditionals then split the graph.
  StatusOr<const CudaConditionalNodes*> ConditionalNodes();
  // The device memory pool's counters; none when the pool is off.
  std::optional<CudaMemoryPool::Stats> memory_pool_stats() const {
    return pool_ ? std::optional<CudaMemoryPool::Stats>(pool_->stats()) : std::nullopt;
  }

 private:
  CudaBackend() = default;
  std::unique_ptr<CudaDriver> driver_;
  CUdevice device_ = 0;
  int ordinal_ = 0;
  CUcontext context_ = nullptr;  // retained primary context
  std::vector<CUstream> streams_;
  std::mutex lanes_mu_;
  std::vector<CUstream> lane_streams_;  // by lane; null until used
  int sm_arch_ = 0;
  std::string name_;
  std::unique_ptr<CudaMemoryPool> pool_;  // null: KILN_CUDA_MEMORY_POOL=off

  std::mutex cublas_mu_;
  std::unique_ptr<kernels::CublasLibrary> cublas_;
  std::vector<cublasHandle_t> cublas_handles_;  // by lane; null until used

  std::mutex cublaslt_mu_;
  std::unique_ptr<kernels::CublasLtLibrary> cublaslt_;
  cublasLtHandle_t cublaslt_handle_ = nullptr;

  std::mutex cudnn_mu_;
  std::unique_ptr<kernels::CudnnLibrary> cudnn_;
  std::vector<cudnnHandle_t> cudnn_handles_;  // by lane; null until used

  std::mutex cufft_mu_;
  std::unique_ptr<kernels::CufftLibrary> cufft_;

  std::mutex cusolver_mu_;
  std::unique_ptr<kernels::CusolverLibrary> cusolver_;
  std::vector<cusolverDnHandle_t> cusolver_handles_;  // by lane; null until used
  std::mutex nccl_mu_;
  std::unique_ptr<kernels::NcclLibrary> nccl_;
  std::mutex radix_sort_mu_;
  std::unique_ptr<CudaModule> radix_sort_;
  std::mutex conditional_mu_;
  std::unique_ptr<CudaConditionalNodes> conditional_;
  std::optional<Status> conditional_error_;
  std::vector<GrowableDeviceArea> scratch_;  // by lane; used by its Device stream's thread only
};

// "sm_90".
std::string SmName(int sm_arch);

}  // namespace kiln::runtime
