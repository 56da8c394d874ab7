// CudaExecutable: a program loaded on a CUDA device, and CudaBackend::Load.
//
// Memory: every allocation gets its own aligned range of device memory.
// Constants are uploaded once at Load into a constant region shared by all
// executions (a constant that is also a result is copied into the
// execution's memory, so each execution returns its own). Everything else
// lives in a per-stream workspace (device memory for the allocations plus a
// pinned host staging buffer), created on the stream's first execution and
// reused: executions on one stream run one after another on its worker
// thread and each ends with a stream sync, so a workspace is never shared
// by two executions in flight.
//
// An execution binds each allocation (Stage): a device argument the program
// only reads, or a donated one, in place; a host argument through pinned
// staging (cuMemcpyHtoDAsync; pinned arguments directly); outputs that stay
// on the device in memory of their own (from the backend's memory pool,
// handed to the caller); the rest in the workspace, zeroed only where the program may
// read before writing. The thunks are issued on the stream
// (cuda_executor.h; a multi-stream program's on one CUstream per program
// stream, forked from and joined back into the stream, with the program's
// events, cuda_program_streams.h, which the workspace holds; async
// collectives on its communication stream, cuda_comm_stream.h, also the
// workspace's, joined back at their dones and at the end), each
// recordable segment as a CUDA graph unless ExecuteOptions::cuda_graphs is
// off (cuda_graphs.h: the graphs belong to
// the workspace, so to one executable and stream); with host_outputs the results are downloaded into
// staging and then into fresh host Buffers (or a donated host argument's
// memory); one cuStreamSynchronize ends every execution.
#include <cstring>
#include <mutex>

#include "runtime/cuda_collectives.h"
#include "runtime/cuda_executor.h"
#include "runtime/cuda_graphs.h"
#include "runtime/cuda_program_streams.h"
#include "runtime/cuda_comm_stream.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

int64_t AlignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// Where each allocation and each staged argument/result lives.
struct MemoryPlan {
  // Offset of allocation a in the workspace, or -1 when it is a read-only
  // constant (then constant_offset[a] is set).
  std::vector<int64_t> workspace_offset, constant_offset;
  int64_t workspace_bytes = 0, constant_bytes = 0;
  // In the workspace: one range of copy_scratch_bytes per program stream,
  // copy_scratch_stride apart, so that two program streams never share one.
  int64_t copy_scratch = 0, copy_scratch_bytes = 0, copy_scratch_stride = 0;
  std::vector<int64_t> argument_staging, result_staging;
  int64_t scalar_staging = 0, staging_bytes = 0;
};

MemoryPlan PlanMemory(const ProgramBinding& b) {
  const th::ThunkProgram& p = b.program;
  MemoryPlan plan;
  // cuMemAlloc returns 256-byte aligned memory; keep every range so.
  auto place = [](int64_t& end, const th::Allocation& a) {
    int64_t at = AlignUp(end, std::max<int64_t>(256, a.alignment));
    end = at + std::max<int64_t>(a.size, 1);
    return at;
  };
  for (size_t a = 0; a < p.allocations.size(); ++a) {
    const th::Allocation& alloc = p.allocations[a];
    bool parameter = alloc.is_parameter() && b.argument_of_allocation[a] >= 0;
    bool constant = alloc.is_constant() && !parameter;
    plan.constant_offset.push_back(constant ? place(plan.constant_bytes, alloc) : -1);
    bool in_workspace = !constant || alloc.is_output();
    plan.workspace_offset.push_back(in_workspace ? place(plan.workspace_bytes, alloc) : -1);
  }
  th::ForEachThunk(p.root, [&](const th::Thunk& t, int) {
    const auto* c = t.As<th::CopyThunk>();
    if (c && CopyOverlaps(*c))
      plan.copy_scratch_bytes = std::max(plan.copy_scratch_bytes, c->source.size);
  });
  if (plan.copy_scratch_bytes > 0) {
    plan.copy_scratch = AlignUp(plan.workspace_bytes, 256);
    plan.copy_scratch_stride = AlignUp(plan.copy_scratch_bytes, 256);
    plan.workspace_bytes = plan.copy_scratch + plan.copy_scratch_stride * std::max<int64_t>(p.num_streams, 1);
  }
  int64_t end = 0;
  for (const th::ParameterLeaf& leaf : p.signature.parameter_leaves) {
    plan.argument_staging.push_back(end);
    end = AlignUp(end + leaf.slice.size, 64);
  }
  for (const th::ResultLeaf& leaf : p.signature.result_leaves) {
    plan.result_staging.push_back(end);
    end = AlignUp(end + leaf.slice.size, 64);
  }
  plan.scalar_staging = end;
  plan.staging_bytes = end + 64;
  return plan;
}

// cuBLAS runs the Gemm and TriangularSolve thunks and scales the inverse
// FFTs and transposes the Linalg thunks' matrices; cuSOLVER runs the
// Cholesky and Linalg thunks. A program loads its libraries
// with it, so a missing one fails Load, not a run.
bool UsesCublas(const th::ThunkProgram& p) {
  bool found = false;
  th::ForEachThunk(p.root, [&](const th::Thunk& t, int) {
    const auto* f = t.As<th::FftThunk>();
    found |= t.kind() == th::ThunkKind::kGemm || t.kind() == th::ThunkKind::kTriangularSolve ||
             t.kind() == th::ThunkKind::kLinalg ||
             (f && (f->type == th::FftType::kIfft || f->type == th::FftType::kIrfft));
  });
  return found;
}

bool UsesCusolver(const th::ThunkProgram& p) {
  bool found = false;
  th::ForEachThunk(p.root, [&](const th::Thunk& t, int) {
    found |= t.kind() == th::ThunkKind::kCholesky || t.kind() == th::ThunkKind::kLinalg;
  });
  return found;
}

bool UsesRadixSort(const th::ThunkProgram& p) {
  bool found = false;
  th::ForEachThunk(p.root, [&](const th::Thunk& t, int) { found |= t.kind() == th::ThunkKind::kRadixSort; });
  return found;
}

std::chrono::nanoseconds Milliseconds(float ms) {
  return std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(ms) * 1e6));
}

// Per-stream execution state; see the file comment.
struct Workspace {
  explicit Workspace(const CudaDriver& d) : driver(d), events(d) {}
  ~Workspace() {  // the context must be current
    graphs.reset();
    streams.reset();
    comm.reset();
    if (device) driver.cuMemFree(device);
    if (staging) driver.cuMemFreeHost(staging);
  }
  const CudaDriver& driver;
  CUdeviceptr device = 0;
  uint8_t* staging = nullptr;
  CudaEventPool events;
  std::vector<CudaTimedThunk> timed;
  std::unique_ptr<CudaGraphCache> graphs;  // made by the first execution with graphs
  // A multi-stream program's lanes and events (null for one stream).
  std::unique_ptr<CudaProgramStreams> streams;
  // Where the program's async collectives run (null when it has none
  // between devices).
  std::unique_ptr<CudaCommStream> comm;
};

class CudaExecutable : public BackendExecutable {
 public:
  CudaExecutable(CudaBackend& backend, std::shared_ptr<const ProgramBinding> binding)
      : backend_(backend),
        binding_(std::move(binding)),
        plan_(PlanMemory(*binding_)),
        workspaces_(static_cast<size_t>(backend.num_streams())) {}
  ~CudaExecutable() override;

  Status LoadKernels(const bef::Artifact& artifact);
  Status PrepareFfts();
  Status PrepareFp8Gemms();
  Status PrepareConvolutions();
  Status PrepareCollectives();
  Status UploadConstants();
  StatusOr<ExecutionResult> Run(const std::vector<Buffer>& args,
                                const ExecuteOptions& options) const override;

 private:
  StatusOr<Workspace*> AcquireWorkspace(int stream) const;
  Status Stage(const std::vector<Buffer>& args, const ExecuteOptions& options, Workspace& ws,
               CudaExecutionContext& ctx, std::vector<Buffer>& output_memory) const;
  Status StageArgument(const Buffer& in, size_t a, CUdeviceptr base, const ExecuteOptions& options,
                       Workspace& ws, CudaExecutionContext& ctx) const;
  Status Initialize(size_t a, CUdeviceptr base, const ExecuteOptions& options,
                    CudaExecutionContext& ctx) const;
  StatusOr<ExecutionResult> Issue(const std::vector<Buffer>& args, const ExecuteOptions& options,
                                  Workspace& ws) const;
  StatusOr<std::vector<Buffer>> DeviceOutputs(const std::vector<Buffer>& output_memory,
                                              CudaExecutionContext& ctx) const;
  Status Download(Workspace& ws, CudaExecutionContext& ctx) const;
  StatusOr<std::vector<Buffer>> CollectOutputs(const std::vector<Buffer>& args,
                                               const ExecuteOptions& options, Workspace& ws) const;

  CudaBackend& backend_;
  std::shared_ptr<const ProgramBinding> binding_;
  MemoryPlan plan_;
  std::unique_ptr<CudaModule> module_;  // null when the program has no kernels
  CudaFftMap ffts_;
  CudaFp8GemmMap fp8_gemms_;
  CudnnConvolutionMap convolutions_;
  std::unique_ptr<CudaCollectives> collectives_;
  CUdeviceptr constants_ = 0;
  mutable std::mutex mu_;  // guards workspaces_ creation
  mutable std::vector<std::unique_ptr<Workspace>> workspaces_;
  mutable RngStateTable rng_states_;  // advanced by every execution
};

CudaExecutable::~CudaExecutable() {
  (void)backend_.MakeCurrent();  // may run on any thread; nothing to report to
  workspaces_.clear();
  ffts_.clear();  // destroys the cuFFT plans
  fp8_gemms_.clear();  // and the cuBLASLt descriptors
  convolutions_.clear();  // and the cuDNN ones
  collectives_.reset();  // and the NCCL communicators
  module_.reset();
  if (constants_) backend_.driver().cuMemFree(constants_);
}

Status CudaExecutable::LoadKernels(const bef::Artifact& artifact) {
  std::set<std::string> kernels = LaunchedKernels(binding_->program);
  if (kernels.empty()) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(const bef::KernelImage* image, FindCudaImage(artifact));
  KILN_ASSIGN_OR_RETURN(CudaCode code, SelectCudaCode(*image, backend_.sm_arch()));
  StatusOr<std::unique_ptr<CudaModule>> module = CudaModule::Load(backend_.driver(), code, kernels);
  if (!module.ok() && code.cubin && !image->ptx.empty()) {
    // A cubin from a newer toolkit than the driver supports is rejected;
    // the PTX may still JIT (it targets an older PTX ISA).
    CudaCode ptx{nullptr, &image->ptx, "PTX (JIT for " + SmName(backend_.sm_arch()) + ")"};
    StatusOr<std::unique_ptr<CudaModule>> jit = CudaModule::Load(backend_.driver(), ptx, kernels);
    if (!jit.ok()) return module.status().WithContext(jit.status().message() + "; before that");
    module = std::move(jit);
  }
  if (!module.ok()) return module.status();
  module_ = std::move(*module);
  return Status::Ok();
}

namespace {

// The prepared form (plans, descriptors, algorithms) of every thunk of
// type T that `wanted` selects, made once per program by `create`; an error
// names the thunk.
template <typename T, typename Prepared, typename Wanted, typename Create>
Status PrepareEach(const th::SequenceThunk& root, std::unordered_map<const T*, std::unique_ptr<Prepared>>& out,
                   Wanted wanted, Create create) {
  Status status;
  th::ForEachThunk(root, [&](const th::Thunk& t, int) {
    const auto* typed = t.As<T>();
    if (!typed || !wanted(*typed) || !status.ok()) return;
    StatusOr<std::unique_ptr<Prepared>> prepared = create(*typed);
    if (!prepared.ok()) {
      status = prepared.status().WithContext("thunk '" + t.info.profile_name + "'");
      return;
    }
    out[typed] = std::move(*prepared);
  });
  return status;
}

}  // namespace

// cuFFT's plans for each FFT.
Status CudaExecutable::PrepareFfts() {
  return PrepareEach(
      binding_->program.root, ffts_, [](const th::FftThunk&) { return true; },
      [&](const th::FftThunk& f) -> StatusOr<std::unique_ptr<kernels::CudaFft>> {
        KILN_ASSIGN_OR_RETURN(const kernels::CufftLibrary* cufft, backend_.Cufft());
        return kernels::CudaFft::Create(*cufft, f, backend_.num_lanes());
      });
}

// cuBLASLt's descriptors and algorithm for each FP8 GEMM.
Status CudaExecutable::PrepareFp8Gemms() {
  return PrepareEach(
      binding_->program.root, fp8_gemms_, [](const th::GemmThunk& g) { return th::IsFp8Gemm(g); },
      [&](const th::GemmThunk& g) -> StatusOr<std::unique_ptr<kernels::CudaFp8Gemm>> {
        KILN_ASSIGN_OR_RETURN(const kernels::CublasLtLibrary* lt, backend_.CublasLt());
        KILN_ASSIGN_OR_RETURN(cublasLtHandle_t handle, backend_.CublasLtHandle());
        return kernels::CudaFp8Gemm::Create(*lt, handle, g);
      });
}

// cuDNN's descriptors and algorithm for each convolution.
Status CudaExecutable::PrepareConvolutions() {
  return PrepareEach(
      binding_->program.root, convolutions_, [](const th::ConvolutionThunk&) { return true; },
      [&](const th::ConvolutionThunk& c) -> StatusOr<std::unique_ptr<kernels::CudnnConvolution>> {
        KILN_ASSIGN_OR_RETURN(const kernels::CudnnLibrary* cudnn, backend_.Cudnn());
        KILN_ASSIGN_OR_RETURN(cudnnHandle_t handle, backend_.CudnnHandle(0));
        return kernels::CudnnConvolution::Create(*cudnn, handle, c);
      });
}

// The NCCL communicators are made on first use (every device of a group
// must call ncclCommInitRank at once, which loads on one thread cannot);
// here the reductions are checked and NCCL loaded.
Status CudaExecutable::PrepareCollectives() {
  const LoadOptions& placement = binding_->placement;
  KILN_ASSIGN_OR_RETURN(collectives_, CudaCollectives::Create(binding_->program, placement.device_id,
                                                              placement.rendezvous, backend_));
  return Status::Ok();
}

Status CudaExecutable::UploadConstants() {
  const th::ThunkProgram& p = binding_->program;
  if (plan_.constant_bytes == 0) return Status::Ok();
  const CudaDriver& d = backend_.driver();
  KILN_RETURN_IF_ERROR(d.Check(d.cuMemAlloc(&constants_, static_cast<size_t>(plan_.constant_bytes)),
                               "cuMemAlloc of the constants"));
  // Stage the whole region on the host once: one synchronous upload.
  std::vector<uint8_t> bytes(static_cast<size_t>(plan_.constant_bytes), 0);
  for (size_t a = 0; a < p.allocations.size(); ++a) {
    if (plan_.constant_offset[a] < 0) continue;
    const th::Allocation& alloc = p.allocations[a];
    const th::Constant& c = p.constants[*alloc.constant];
    std::memcpy(bytes.data() + plan_.constant_offset[a], c.bytes.data(),
                std::min<size_t>(c.bytes.size(), static_cast<size_t>(alloc.size)));
  }
  return d.Check(d.cuMemcpyHtoD(constants_, bytes.data(), bytes.size()), "uploading the constants");
}

StatusOr<Workspace*> CudaExecutable::AcquireWorkspace(int stream) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<Workspace>& ws = workspaces_[static_cast<size_t>(stream)];
  if (ws) return ws.get();
  const CudaDriver& d = backend_.driver();
  auto fresh = std::make_unique<Workspace>(d);
  if (plan_.workspace_bytes > 0) {
    KILN_RETURN_IF_ERROR(
        d.Check(d.cuMemAlloc(&fresh->device, static_cast<size_t>(plan_.workspace_bytes)),
                "cuMemAlloc of " + std::to_string(plan_.workspace_bytes) + " bytes"));
  }
  void* staging = nullptr;
  KILN_RETURN_IF_ERROR(
      d.Check(d.cuMemHostAlloc(&staging, static_cast<size_t>(plan_.staging_bytes), 0),
              "cuMemHostAlloc of " + std::to_string(plan_.staging_bytes) + " bytes"));
  fresh->staging = static_cast<uint8_t*>(staging);
  if (binding_->program.num_streams > 1) {
    KILN_ASSIGN_OR_RETURN(fresh->streams, CudaProgramStreams::Create(backend_, binding_->program, stream));
  }
  if (collectives_ && collectives_->UsesCommStream()) {
    KILN_ASSIGN_OR_RETURN(fresh->comm, CudaCommStream::Create(backend_, stream));
  }
  ws = std::move(fresh);
  return ws.get();
}

// The fill of a writable allocation before the thunks run: zeros where the
// program may read before it writes; the test hook's poison elsewhere.
Status CudaExecutable::Initialize(size_t a, CUdeviceptr base, const ExecuteOptions& options,
                                  CudaExecutionContext& ctx) const {
  const th::Allocation& alloc = binding_->program.allocations[a];
  size_t size = static_cast<size_t>(alloc.size);
  if (size == 0) return Status::Ok();
  const CudaDriver& d = backend_.driver();
  if (alloc.zero_initialize)
    return d.Check(d.cuMemsetD8Async(base, 0, size, ctx.stream), "cuMemsetD8Async");
  if (options.poison_uninitialized)
    return d.Check(d.cuMemsetD8Async(base, *options.poison_uninitialized, size, ctx.stream), "cuMemsetD8Async");
  return Status::Ok();
}

// Fills allocation `a` at `base` from its argument: device-to-device from a
// device buffer, straight from pinned memory, else through the staging
// buffer. Bytes of the allocation outside the argument's slice are
// initialized as a temporary's.
Status CudaExecutable::StageArgument(const Buffer& in, size_t a, CUdeviceptr base,
                                     const ExecuteOptions& options, Workspace& ws,
                                     CudaExecutionContext& ctx) const {
  const th::ThunkProgram& p = binding_->program;
  const CudaDriver& d = backend_.driver();
  const int64_t arg = binding_->argument_of_allocation[a];
  const th::BufferSlice& slice = p.signature.parameter_leaves[arg].slice;
  if (slice.size != p.allocations[a].size) KILN_RETURN_IF_ERROR(Initialize(a, base, options, ctx));
  if (slice.size == 0) return Status::Ok();
  CUdeviceptr to = base + static_cast<CUdeviceptr>(slice.offset);
  size_t bytes = static_cast<size_t>(slice.size);
  std::string what = "argument " + std::to_string(arg);
  if (!in.host_accessible()) {
    return d.Check(d.cuMemcpyDtoDAsync(to, static_cast<CUdeviceptr>(in.device_address()), bytes, ctx.stream),
                   "cuMemcpyDtoDAsync of " + what);
  }
  const uint8_t* from = in.data();
  if (in.memory_space() != MemorySpace::kPinnedHost || in.device_address() == 0) {
    uint8_t* staged = ws.staging + plan_.argument_staging[arg];
    std::memcpy(staged, in.data(), bytes);
    from = staged;
  }
  return d.Check(d.cuMemcpyHtoDAsync(to, from, bytes, ctx.stream), "cuMemcpyHtoDAsync of " + what);
}

// Binds allocation addresses and issues the uploads / zeroing of this
// execution's memory. A device argument the program only reads, or a
// donated one, is bound in place; an output that stays on the device gets
// memory of its own (output_memory[a]), since the caller keeps it after
// the workspace is reused.
Status CudaExecutable::Stage(const std::vector<Buffer>& args, const ExecuteOptions& options,
                             Workspace& ws, CudaExecutionContext& ctx,
                             std::vector<Buffer>& output_memory) const {
  const th::ThunkProgram& p = binding_->program;
  const CudaDriver& d = backend_.driver();
  ctx.allocation_base.resize(p.allocations.size());
  output_memory.assign(p.allocations.size(), Buffer());
  for (size_t a = 0; a < p.allocations.size(); ++a) {
    const th::Allocation& alloc = p.allocations[a];
    if (plan_.workspace_offset[a] < 0) {
      ctx.allocation_base[a] = constants_ + static_cast<CUdeviceptr>(plan_.constant_offset[a]);
      continue;
    }
    const int64_t arg = binding_->argument_of_allocation[a];
    const Buffer* in = arg >= 0 ? &args[arg] : nullptr;
    if (in && !in->host_accessible()) {
      const th::BufferSlice& slice = p.signature.parameter_leaves[arg].slice;
      bool whole = slice.offset == 0 && slice.size == alloc.size;
      if (whole && (!alloc.is_output() || binding_->DonatedArgument(a, options) >= 0)) {
        ctx.allocation_base[a] = static_cast<CUdeviceptr>(in->device_address());
        if (alloc.is_output()) output_memory[a] = *in;
        continue;
      }
    }
    CUdeviceptr base = ws.device + static_cast<CUdeviceptr>(plan_.workspace_offset[a]);
    if (alloc.is_output() && !options.host_outputs) {
      KILN_ASSIGN_OR_RETURN(output_memory[a],
                            backend_.Allocate(Shape(ElementType::kU8, {alloc.size}), alloc.size,
                                              MemorySpace::kDevice));
      base = static_cast<CUdeviceptr>(output_memory[a].device_address());
    }
    ctx.allocation_base[a] = base;
    if (in) {
      KILN_RETURN_IF_ERROR(StageArgument(*in, a, base, options, ws, ctx));
    } else if (plan_.constant_offset[a] >= 0) {
      CUdeviceptr c = constants_ + static_cast<CUdeviceptr>(plan_.constant_offset[a]);
      if (alloc.size == 0) continue;
      KILN_RETURN_IF_ERROR(d.Check(d.cuMemcpyDtoDAsync(base, c, static_cast<size_t>(alloc.size), ctx.stream),
                                   "cuMemcpyDtoDAsync"));
    } else {
      KILN_RETURN_IF_ERROR(Initialize(a, base, options, ctx));
    }
  }
  return Status::Ok();
}

// The outputs of an execution whose results stay on the device: views of
// the memory Stage gave each output allocation; a result in memory the
// execution does not own (never the case for a well-formed signature) is
// copied into a buffer of its own.
StatusOr<std::vector<Buffer>> CudaExecutable::DeviceOutputs(const std::vector<Buffer>& output_memory,
                                                            CudaExecutionContext& ctx) const {
  const th::Signature& sig = binding_->program.signature;
  const CudaDriver& d = backend_.driver();
  std::vector<Buffer> outputs;
  for (size_t i = 0; i < sig.result_leaves.size(); ++i) {
    const th::BufferSlice& s = sig.result_leaves[i].slice;
    const Shape& shape = binding_->output_shapes[i];
    const Buffer& memory = output_memory[static_cast<size_t>(s.allocation)];
    if (!memory.is_null()) {
      outputs.push_back(Buffer::View(memory, s.offset, shape, s.size));
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Buffer b, backend_.Allocate(shape, s.size, MemorySpace::kDevice));
    if (s.size > 0) {
      KILN_RETURN_IF_ERROR(d.Check(
          d.cuMemcpyDtoDAsync(static_cast<CUdeviceptr>(b.device_address()),
                              ctx.allocation_base[s.allocation] + static_cast<CUdeviceptr>(s.offset),
                              static_cast<size_t>(s.size), ctx.stream),
          "cuMemcpyDtoDAsync of output " + std::to_string(i)));
    }
    outputs.push_back(std::move(b));
  }
  return outputs;
}

// Issues the downloads of every result leaf into the staging buffer.
Status CudaExecutable::Download(Workspace& ws, CudaExecutionContext& ctx) const {
  const th::Signature& sig = binding_->program.signature;
  const CudaDriver& d = backend_.driver();
  for (size_t i = 0; i < sig.result_leaves.size(); ++i) {
    const th::BufferSlice& s = sig.result_leaves[i].slice;
    if (s.size == 0) continue;
    KILN_RETURN_IF_ERROR(d.Check(
        d.cuMemcpyDtoHAsync(ws.staging + plan_.result_staging[i],
                            ctx.allocation_base[s.allocation] + static_cast<CUdeviceptr>(s.offset),
                            static_cast<size_t>(s.size), ctx.stream),
        "cuMemcpyDtoHAsync of output " + std::to_string(i)));
  }
  return Status::Ok();
}

StatusOr<std::vector<Buffer>> CudaExecutable::CollectOutputs(const std::vector<Buffer>& args,
                                                             const ExecuteOptions& options,
                                                             Workspace& ws) const {
  const th::Signature& sig = binding_->program.signature;
  std::vector<Buffer> outputs;
  for (size_t i = 0; i < sig.result_leaves.size(); ++i) {
    const th::BufferSlice& s = sig.result_leaves[i].slice;
    const Shape& shape = binding_->output_shapes[i];
    const uint8_t* staged = ws.staging + plan_.result_staging[i];
    int64_t donated = binding_->DonatedArgument(static_cast<size_t>(s.allocation), options);
    if (donated >= 0 && args[donated].host_accessible()) {
      // Updated in place: the output shares the donated argument's memory.
      const Buffer& in = args[donated];
      std::memcpy(in.data() + s.offset, staged, static_cast<size_t>(s.size));
      outputs.push_back(Buffer::View(in, s.offset, shape, s.size));
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(shape, s.size));
    std::memcpy(b.data(), staged, static_cast<size_t>(s.size));
    outputs.push_back(std::move(b));
  }
  return outputs;
}

StatusOr<ExecutionResult> CudaExecutable::Issue(const std::vector<Buffer>& args,
                                                const ExecuteOptions& options,
                                                Workspace& ws) const {
  const th::ThunkProgram& p = binding_->program;
  const CudaDriver& d = backend_.driver();
  CudaExecutionContext ctx;
  ctx.backend = &backend_;
  ctx.lane = CudaBackend::Lane(options.stream, 0);
  ctx.stream = backend_.stream(options.stream);
  ctx.module = module_.get();
  ctx.ffts = &ffts_;
  ctx.fp8_gemms = &fp8_gemms_;
  ctx.convolutions = &convolutions_;
  ctx.host_scalar = ws.staging + plan_.scalar_staging;
  ctx.copy_scratch = ws.device + static_cast<CUdeviceptr>(plan_.copy_scratch);
  ctx.copy_scratch_bytes = plan_.copy_scratch_bytes;
  ctx.rng_states = &rng_states_;
  if (options.cuda_graphs && d.has_graphs()) {
    if (!ws.graphs) {
      // Without conditional nodes (an older driver), loops and conditionals split the graph.
      StatusOr<const CudaConditionalNodes*> conditional = backend_.ConditionalNodes();
      ws.graphs = std::make_unique<CudaGraphCache>(d, p, conditional.ok() ? *conditional : nullptr);
    }
    ctx.graphs = ws.graphs.get();
  }
  ctx.collectives = collectives_.get();
  ctx.comm = ws.comm.get();
  std::vector<Buffer> output_memory;
  KILN_RETURN_IF_ERROR(Stage(args, options, ws, ctx, output_memory));

  CUevent run_begin = nullptr, run_end = nullptr;
  ws.timed.clear();
  if (options.profile) {
    ws.events.Reset();
    ctx.events = &ws.events;
    ctx.timed = &ws.timed;
    KILN_ASSIGN_OR_RETURN(run_begin, ws.events.Next());
    KILN_RETURN_IF_ERROR(d.Check(d.cuEventRecord(run_begin, ctx.stream), "cuEventRecord"));
  }
  auto wall_begin = std::chrono::steady_clock::now();
  if (ws.streams) ws.streams->Begin(ctx, ctx.copy_scratch, plan_.copy_scratch_stride);
  KILN_RETURN_IF_ERROR(ExecuteCudaSequence(p.root, ctx));
  if (ws.comm) KILN_RETURN_IF_ERROR(ws.comm->AwaitAll(ctx.stream));
  if (options.profile) {
    KILN_ASSIGN_OR_RETURN(run_end, ws.events.Next());
    KILN_RETURN_IF_ERROR(d.Check(d.cuEventRecord(run_end, ctx.stream), "cuEventRecord"));
  }
  ExecutionResult result;
  if (options.host_outputs) {
    KILN_RETURN_IF_ERROR(Download(ws, ctx));
  } else {
    KILN_ASSIGN_OR_RETURN(result.outputs, DeviceOutputs(output_memory, ctx));
  }
  KILN_RETURN_IF_ERROR(d.Check(d.cuStreamSynchronize(ctx.stream), "cuStreamSynchronize"));

  if (options.host_outputs) {
    KILN_ASSIGN_OR_RETURN(result.outputs, CollectOutputs(args, options, ws));
  }
  result.results_computed = d.results_computed();
  if (!options.profile) {
    result.profile.total = std::chrono::steady_clock::now() - wall_begin;
    return result;
  }
  // Device times: offsets from the run's first event, as the host's are
  // from the start of its run.
  float ms = 0;
  KILN_RETURN_IF_ERROR(
      d.Check(d.cuEventElapsedTime(&ms, run_begin, run_end), "cuEventElapsedTime"));
  result.profile.total = Milliseconds(ms);
  for (const CudaTimedThunk& t : ws.timed) {
    float start = 0, duration = 0;
    KILN_RETURN_IF_ERROR(
        d.Check(d.cuEventElapsedTime(&start, run_begin, t.begin), "cuEventElapsedTime"));
    KILN_RETURN_IF_ERROR(
        d.Check(d.cuEventElapsedTime(&duration, t.begin, t.end), "cuEventElapsedTime"));
    ThunkProfileEntry entry{t.thunk->info.profile_name, &t.thunk->info, options.stream,
                            t.thunk->kind(), t.depth, Milliseconds(start),
                            Milliseconds(duration), std::nullopt, t.program_stream,
                            th::CollectiveTrafficOf(*t.thunk)};
    if (d.kilnEmuEventCounters) {
      // The emulator counts every launch exactly; the events bracket the
      // thunk's launches as they bracket its time.
      KilnEmuCounters c{};
      KILN_RETURN_IF_ERROR(d.Check(
          static_cast<CUresult>(d.kilnEmuEventCounters(t.begin, t.end, &c)), "kilnEmuEventCounters"));
      entry.counters = c;
    }
    result.profile.thunks.push_back(std::move(entry));
  }
  if (d.is_emulator()) {
    // With the timing model, event times are the model's; without it, the
    // emulator's clock (host time spent emulating).
    result.profile.modeled = d.has_timing_model();
    result.profile.time_source =
        std::string(d.has_timing_model() ? "modeled: H100 timing model on " : "emulated: ") +
        d.kilnEmuDescription();
    result.profile.sampled = !result.results_computed;
  }
  return result;
}

StatusOr<ExecutionResult> CudaExecutable::Run(const std::vector<Buffer>& args,
                                              const ExecuteOptions& options) const {
  KILN_RETURN_IF_ERROR(backend_.MakeCurrent());
  KILN_ASSIGN_OR_RETURN(Workspace * ws, AcquireWorkspace(options.stream));
  StatusOr<ExecutionResult> result = Issue(args, options, *ws);
  if (!result.ok()) {
    // Let queued work finish before the workspace is reused; the original
    // error is the one to report.
    (void)backend_.driver().cuStreamSynchronize(backend_.stream(options.stream));
    if (ws->streams) (void)ws->streams->Synchronize();
    if (ws->comm) (void)ws->comm->Synchronize();
  }
  return result;
}

}  // namespace

StatusOr<std::unique_ptr<BackendExecutable>> CudaBackend::Load(
    const bef::Artifact& artifact, std::shared_ptr<const ProgramBinding> binding) {
  KILN_RETURN_IF_ERROR(MakeCurrent());
  auto exe = std::make_unique<CudaExecutable>(*this, binding);
  KILN_RETURN_IF_ERROR(exe->LoadKernels(artifact));
  if (UsesCublas(binding->program)) KILN_RETURN_IF_ERROR(Cublas().status());
  if (UsesCusolver(binding->program)) KILN_RETURN_IF_ERROR(Cusolver().status());
  if (UsesRadixSort(binding->program)) KILN_RETURN_IF_ERROR(RadixSortModule().status());
  KILN_RETURN_IF_ERROR(exe->PrepareFfts());
  KILN_RETURN_IF_ERROR(exe->PrepareFp8Gemms());
  KILN_RETURN_IF_ERROR(exe->PrepareConvolutions());
  KILN_RETURN_IF_ERROR(exe->PrepareCollectives());
  KILN_RETURN_IF_ERROR(exe->UploadConstants());
  return std::unique_ptr<BackendExecutable>(std::move(exe));
}

}  // namespace kiln::runtime
