// CudaBackend: device discovery, context, streams, cuBLAS, cuDNN and
// cuSOLVER handles, cuFFT; see cuda_backend.h. CudaBackend::Load is in
// cuda_executable.cc.
#include "runtime/cuda_backend.h"

#include <algorithm>
#include <cstdlib>

#include "kernels_lib/radix_sort_image.h"
#include "runtime/cuda_conditional_nodes.h"
#include "runtime/cuda_radix_sort.h"

namespace kiln::runtime {

std::string SmName(int sm_arch) { return "sm_" + std::to_string(sm_arch); }

StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(const std::string& library, int ordinal,
                                                           int num_streams) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CudaDriver> driver, CudaDriver::Load(library));
  return Create(std::move(driver), ordinal, num_streams);
}

StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(std::unique_ptr<CudaDriver> driver,
                                                           int ordinal, int num_streams) {
  std::unique_ptr<CudaBackend> b(new CudaBackend());
  b->driver_ = std::move(driver);
  const CudaDriver& d = *b->driver_;
  KILN_RETURN_IF_ERROR(d.Check(d.cuInit(0), "cuInit"));
  int count = 0;
  KILN_RETURN_IF_ERROR(d.Check(d.cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (ordinal < 0 || ordinal >= count) {
    return Error("no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(count) +
                 " present; KILN_CUDA_DEVICE selects one)");
  }
  KILN_RETURN_IF_ERROR(d.Check(d.cuDeviceGet(&b->device_, ordinal), "cuDeviceGet"));
  b->ordinal_ = ordinal;
  int major = 0, minor = 0;
  KILN_RETURN_IF_ERROR(d.Check(
      d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, b->device_),
      "cuDeviceGetAttribute"));
  KILN_RETURN_IF_ERROR(d.Check(
      d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, b->device_),
      "cuDeviceGetAttribute"));
  b->sm_arch_ = major * 10 + minor;
  char name[256] = {};
  if (d.cuDeviceGetName(name, sizeof(name) - 1, b->device_) == CUDA_SUCCESS) b->name_ = name;
  KILN_RETURN_IF_ERROR(
      d.Check(d.cuDevicePrimaryCtxRetain(&b->context_, b->device_), "cuDevicePrimaryCtxRetain"));
  KILN_RETURN_IF_ERROR(b->MakeCurrent());
  for (int i = 0; i < num_streams; ++i) {
    CUstream s = nullptr;
    KILN_RETURN_IF_ERROR(d.Check(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
    b->streams_.push_back(s);
  }
  const size_t lanes = static_cast<size_t>(b->num_lanes());
  b->lane_streams_.assign(lanes, nullptr);
  for (int i = 0; i < num_streams; ++i) b->lane_streams_[static_cast<size_t>(Lane(i, 0))] = b->streams_[static_cast<size_t>(i)];
  b->cublas_handles_.assign(lanes, nullptr);
  b->cudnn_handles_.assign(lanes, nullptr);
  b->cusolver_handles_.assign(lanes, nullptr);
  b->scratch_.assign(lanes, GrowableDeviceArea{});
  const char* pool = std::getenv("KILN_CUDA_MEMORY_POOL");
  if (pool && std::string(pool) != "on" && std::string(pool) != "off")
    return Error(std::string("KILN_CUDA_MEMORY_POOL must be on or off, got '") + pool + "'");
  if (!pool || std::string(pool) == "on") b->pool_ = std::make_unique<CudaMemoryPool>(*b->driver_);
  return b;
}

CudaBackend::~CudaBackend() {
  if (!driver_ || !context_) return;
  // Errors here cannot be reported; the context goes away regardless.
  (void)MakeCurrent();
  for (cublasHandle_t h : cublas_handles_) {
    if (h) cublas_->cublasDestroy_v2(h);
  }
  if (cublaslt_handle_) cublaslt_->cublasLtDestroy(cublaslt_handle_);
  for (cudnnHandle_t h : cudnn_handles_) {
    if (h) cudnn_->cudnnDestroy(h);
  }
  for (cusolverDnHandle_t h : cusolver_handles_) {
    if (h) cusolver_->cusolverDnDestroy(h);
  }
  radix_sort_.reset();
  conditional_.reset();
  pool_.reset();
  for (GrowableDeviceArea& s : scratch_) s.Release(*driver_);
  for (size_t lane = 0; lane < lane_streams_.size(); ++lane) {
    if (lane % kLanesPerStream != 0 && lane_streams_[lane]) driver_->cuStreamDestroy(lane_streams_[lane]);
  }
  for (CUstream s : streams_) driver_->cuStreamDestroy(s);
  driver_->cuDevicePrimaryCtxRelease(device_);
}

std::string CudaBackend::Description() const {
  std::string arch = SmName(sm_arch_);
  if (name_.find(arch) != std::string::npos) return name_;
  return (name_.empty() ? std::string("CUDA device") : name_) + " (" + arch + ")";
}

Status CudaBackend::MakeCurrent() const {
  return driver_->Check(driver_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

StatusOr<const kernels::CublasLibrary*> CudaBackend::Cublas() {
  std::lock_guard<std::mutex> lock(cublas_mu_);
  if (!cublas_) {
    // The emulator doubles cuBLAS in the same library.
    KILN_ASSIGN_OR_RETURN(cublas_, driver_->is_emulator()
                                       ? kernels::CublasLibrary::Load({driver_->library()})
                                       : kernels::CublasLibrary::Load());
  }
  return cublas_.get();
}

StatusOr<CUstream> CudaBackend::LaneStream(int lane) {
  std::lock_guard<std::mutex> lock(lanes_mu_);
  CUstream& s = lane_streams_[static_cast<size_t>(lane)];
  if (s) return s;
  KILN_RETURN_IF_ERROR(MakeCurrent());
  CUstream created = nullptr;
  KILN_RETURN_IF_ERROR(driver_->Check(driver_->cuStreamCreate(&created, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  s = created;
  return s;
}

StatusOr<cublasHandle_t> CudaBackend::CublasHandle(int i) {
  KILN_ASSIGN_OR_RETURN(const kernels::CublasLibrary* lib, Cublas());
  KILN_ASSIGN_OR_RETURN(CUstream stream, LaneStream(i));
  std::lock_guard<std::mutex> lock(cublas_mu_);
  cublasHandle_t& h = cublas_handles_[static_cast<size_t>(i)];
  if (h) return h;
  // cuBLAS' runtime uses the context current on this thread (ours).
  KILN_RETURN_IF_ERROR(MakeCurrent());
  cublasHandle_t created = nullptr;
  KILN_RETURN_IF_ERROR(lib->Check(lib->cublasCreate_v2(&created), "cublasCreate"));
  Status bound = lib->Check(lib->cublasSetStream_v2(created, stream),
                            "cublasSetStream");
  if (!bound.ok()) {
    lib->cublasDestroy_v2(created);
    return bound;
  }
  h = created;
  return h;
}

StatusOr<const kernels::CublasLtLibrary*> CudaBackend::CublasLt() {
  std::lock_guard<std::mutex> lock(cublaslt_mu_);
  if (!cublaslt_) {
    // The emulator doubles cuBLASLt in the same library, as it does cuBLAS.
    KILN_ASSIGN_OR_RETURN(cublaslt_, driver_->is_emulator() ? kernels::CublasLtLibrary::Load({driver_->library()})
                                                            : kernels::CublasLtLibrary::Load());
  }
  return cublaslt_.get();
}

StatusOr<cublasLtHandle_t> CudaBackend::CublasLtHandle() {
  KILN_ASSIGN_OR_RETURN(const kernels::CublasLtLibrary* lib, CublasLt());
  std::lock_guard<std::mutex> lock(cublaslt_mu_);
  if (cublaslt_handle_) return cublaslt_handle_;
  KILN_RETURN_IF_ERROR(MakeCurrent());
  KILN_RETURN_IF_ERROR(lib->Check(lib->cublasLtCreate(&cublaslt_handle_), "cublasLtCreate"));
  return cublaslt_handle_;
}

StatusOr<const kernels::NcclLibrary*> CudaBackend::Nccl() {
  std::lock_guard<std::mutex> lock(nccl_mu_);
  if (!nccl_) {
    // The emulator doubles NCCL in the same library, as it does cuBLAS.
    KILN_ASSIGN_OR_RETURN(nccl_, driver_->is_emulator() ? kernels::NcclLibrary::Load({driver_->library()})
                                                        : kernels::NcclLibrary::Load());
  }
  return nccl_.get();
}

StatusOr<const kernels::CudnnLibrary*> CudaBackend::Cudnn() {
  std::lock_guard<std::mutex> lock(cudnn_mu_);
  if (!cudnn_) {
    // The emulator doubles cuDNN in the same library, as it does cuBLAS.
    KILN_ASSIGN_OR_RETURN(cudnn_, driver_->is_emulator() ? kernels::CudnnLibrary::Load({driver_->library()})
                                                         : kernels::CudnnLibrary::Load());
  }
  return cudnn_.get();
}

StatusOr<cudnnHandle_t> CudaBackend::CudnnHandle(int i) {
  KILN_ASSIGN_OR_RETURN(const kernels::CudnnLibrary* lib, Cudnn());
  KILN_ASSIGN_OR_RETURN(CUstream stream, LaneStream(i));
  std::lock_guard<std::mutex> lock(cudnn_mu_);
  cudnnHandle_t& h = cudnn_handles_[static_cast<size_t>(i)];
  if (h) return h;
  KILN_RETURN_IF_ERROR(MakeCurrent());
  cudnnHandle_t created = nullptr;
  KILN_RETURN_IF_ERROR(lib->Check(lib->cudnnCreate(&created), "cudnnCreate"));
  Status bound = lib->Check(lib->cudnnSetStream(created, stream), "cudnnSetStream");
  if (!bound.ok()) {
    lib->cudnnDestroy(created);
    return bound;
  }
  h = created;
  return h;
}

StatusOr<const kernels::CufftLibrary*> CudaBackend::Cufft() {
  std::lock_guard<std::mutex> lock(cufft_mu_);
  if (!cufft_) {
    // The emulator doubles cuFFT in the same library, as it does cuBLAS.
    KILN_ASSIGN_OR_RETURN(cufft_, driver_->is_emulator() ? kernels::CufftLibrary::Load({driver_->library()})
                                                         : kernels::CufftLibrary::Load());
  }
  return cufft_.get();
}

StatusOr<const CudaModule*> CudaBackend::RadixSortModule() {
  std::lock_guard<std::mutex> lock(radix_sort_mu_);
  if (radix_sort_) return radix_sort_.get();
  if (!kernels::RadixSortKernelsAvailable())
    return Error("this kiln was built without the radix sort kernels (no nvcc at build time)");
  const std::string ptx(kernels::RadixSortPtx());
  CudaCode code;
  code.ptx = &ptx;
  code.description = "radix sort PTX";
  KILN_RETURN_IF_ERROR(MakeCurrent());
  KILN_ASSIGN_OR_RETURN(radix_sort_, CudaModule::Load(*driver_, code, RadixSortKernelNames()));
  return radix_sort_.get();
}

StatusOr<const CudaConditionalNodes*> CudaBackend::ConditionalNodes() {
  std::lock_guard<std::mutex> lock(conditional_mu_);
  if (conditional_) return conditional_.get();
  if (conditional_error_) return *conditional_error_;
  KILN_RETURN_IF_ERROR(MakeCurrent());
  StatusOr<std::unique_ptr<CudaConditionalNodes>> loaded = CudaConditionalNodes::Load(*driver_, sm_arch_);
  if (!loaded.ok()) {
    conditional_error_ = loaded.status();
    return loaded.status();
  }
  conditional_ = std::move(*loaded);
  return conditional_.get();
}

StatusOr<const kernels::CusolverLibrary*> CudaBackend::Cusolver() {
  std::lock_guard<std::mutex> lock(cusolver_mu_);
  if (!cusolver_) {
    // The emulator doubles cuSOLVER in the same library, as it does cuBLAS.
    KILN_ASSIGN_OR_RETURN(cusolver_, driver_->is_emulator()
                                         ? kernels::CusolverLibrary::Load({driver_->library()})
                                         : kernels::CusolverLibrary::Load());
  }
  return cusolver_.get();
}

StatusOr<cusolverDnHandle_t> CudaBackend::CusolverHandle(int i) {
  KILN_ASSIGN_OR_RETURN(const kernels::CusolverLibrary* lib, Cusolver());
  KILN_ASSIGN_OR_RETURN(CUstream stream, LaneStream(i));
  std::lock_guard<std::mutex> lock(cusolver_mu_);
  cusolverDnHandle_t& h = cusolver_handles_[static_cast<size_t>(i)];
  if (h) return h;
  KILN_RETURN_IF_ERROR(MakeCurrent());
  cusolverDnHandle_t created = nullptr;
  KILN_RETURN_IF_ERROR(lib->Check(lib->cusolverDnCreate(&created), "cusolverDnCreate"));
  Status bound =
      lib->Check(lib->cusolverDnSetStream(created, stream), "cusolverDnSetStream");
  if (!bound.ok()) {
    lib->cusolverDnDestroy(created);
    return bound;
  }
  h = created;
  return h;
}

StatusOr<Buffer> CudaBackend::Allocate(const Shape& shape, int64_t bytes, MemorySpace space) {
  KILN_RETURN_IF_ERROR(MakeCurrent());
  const CudaDriver& d = *driver_;
  // Whole 256-byte granules (cuMemAlloc's alignment), never 0 bytes: a
  // kernel's vector loads may read up to the end of the granule holding
  // a buffer's last element, as they may in an execution's workspace.
  size_t size = static_cast<size_t>((std::max<int64_t>(bytes, 1) + 255) / 256 * 256);
  if (space == MemorySpace::kPinnedHost) {
    void* host = nullptr;
    KILN_RETURN_IF_ERROR(d.Check(d.cuMemHostAlloc(&host, size, 0),
                                 "cuMemHostAlloc of " + std::to_string(bytes) + " bytes"));
    return Buffer::Adopt(shape, bytes, space, owner(), static_cast<uint8_t*>(host),
                         reinterpret_cast<uint64_t>(host), [this, host] {
                           (void)MakeCurrent();
                           driver_->cuMemFreeHost(host);
                         });
  }
  if (pool_) {
    KILN_ASSIGN_OR_RETURN(CUdeviceptr block, pool_->Allocate(size));
    return Buffer::Adopt(shape, bytes, MemorySpace::kDevice, owner(), nullptr, block,
                         [this, block, size] { pool_->Release(block, size); });
  }
  CUdeviceptr address = 0;
  KILN_RETURN_IF_ERROR(
      d.Check(d.cuMemAlloc(&address, size), "cuMemAlloc of " + std::to_string(bytes) + " bytes"));
  return Buffer::Adopt(shape, bytes, MemorySpace::kDevice, owner(), nullptr, address, [this, address] {
    (void)MakeCurrent();
    driver_->cuMemFree(address);
  });
}

Status CudaBackend::CopyToDevice(const Buffer& host, const Buffer& device, int64_t bytes, int stream) {
  if (bytes == 0) return Status::Ok();
  KILN_RETURN_IF_ERROR(MakeCurrent());
  const CudaDriver& d = *driver_;
  CUstream s = streams_[static_cast<size_t>(stream)];
  KILN_RETURN_IF_ERROR(d.Check(d.cuMemcpyHtoDAsync(static_cast<CUdeviceptr>(device.device_address()),
                                                   host.data(), static_cast<size_t>(bytes), s),
                               "cuMemcpyHtoDAsync"));
  return d.Check(d.cuStreamSynchronize(s), "cuStreamSynchronize");
}

Status CudaBackend::CopyToHost(const Buffer& device, const Buffer& host, int64_t bytes, int stream) {
  if (bytes == 0) return Status::Ok();
  KILN_RETURN_IF_ERROR(MakeCurrent());
  const CudaDriver& d = *driver_;
  CUstream s = streams_[static_cast<size_t>(stream)];
  KILN_RETURN_IF_ERROR(d.Check(d.cuMemcpyDtoHAsync(host.data(),
                                                   static_cast<CUdeviceptr>(device.device_address()),
                                                   static_cast<size_t>(bytes), s),
                               "cuMemcpyDtoHAsync"));
  return d.Check(d.cuStreamSynchronize(s), "cuStreamSynchronize");
}

StatusOr<CUdeviceptr> CudaBackend::LibraryScratch(int i, uint64_t bytes) {
  GrowableDeviceArea& s = scratch_[static_cast<size_t>(i)];
  if (s.Fits(bytes)) return s.address();
  // Work queued on the lane's stream may still use the old block.
  KILN_ASSIGN_OR_RETURN(CUstream stream, LaneStream(i));
  return s.Reserve(*driver_, bytes, stream, "of library scratch");
}

namespace {

StatusOr<int> DeviceOrdinalFromEnvironment() {
  const char* v = std::getenv("KILN_CUDA_DEVICE");
  if (!v || !*v) return 0;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > 1024) {
    return Error(std::string("KILN_CUDA_DEVICE must be a device ordinal, got '") + v + "'");
  }
  return static_cast<int>(n);
}

// The driver library: $KILN_CUDA_EMULATOR (kiln's CUDA emulator,
// libkiln_cuda_emulator.so) when set, else the NVIDIA driver.
StatusOr<std::unique_ptr<CudaDriver>> LoadDriver() {
  const char* emulator = std::getenv("KILN_CUDA_EMULATOR");
  if (emulator && *emulator) return CudaDriver::Load(emulator, "named by KILN_CUDA_EMULATOR");
  return CudaDriver::Load("libcuda.so.1");
}

}  // namespace

StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(int num_streams, std::optional<int> device_ordinal) {
  int ordinal = 0;
  if (device_ordinal) {
    ordinal = *device_ordinal;
  } else {
    KILN_ASSIGN_OR_RETURN(ordinal, DeviceOrdinalFromEnvironment());
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CudaDriver> driver, LoadDriver());
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CudaBackend> b,
                        CudaBackend::Create(std::move(driver), ordinal, num_streams));
  return std::unique_ptr<Backend>(std::move(b));
}

}  // namespace kiln::runtime
