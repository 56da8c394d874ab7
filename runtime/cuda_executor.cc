// CUDA thunk interpreter; see cuda_executor.h.
#include "runtime/cuda_executor.h"

#include <climits>
#include <functional>
#include <cstring>

#include "kernels_lib/cuda_convolution.h"
#include "kernels_lib/cuda_gemm.h"
#include "kernels_lib/cuda_lapack.h"
#include "kernels_lib/cuda_linalg.h"
#include "runtime/cuda_graphs.h"
#include "runtime/cuda_program_streams.h"
#include "runtime/cuda_collectives.h"
#include "runtime/cuda_radix_sort.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

CUdeviceptr Address(const CudaExecutionContext& ctx, const th::BufferSlice& s) {
  return ctx.allocation_base[s.allocation] + static_cast<CUdeviceptr>(s.offset);
}

const CudaDriver& Driver(const CudaExecutionContext& ctx) { return ctx.backend->driver(); }

Status CheckLaunchDim(const char* what, const th::Dim3& d) {
  for (int64_t v : {d.x, d.y, d.z}) {
    if (v < 1 || v > INT_MAX) {
      return Error(std::string("kernel launch: ") + what + " dimension " + std::to_string(v) +
                   " out of range");
    }
  }
  return Status::Ok();
}

Status RunKernel(const th::KernelThunk& k, CudaExecutionContext& ctx) {
  CUfunction f = ctx.module ? ctx.module->Find(k.kernel_name) : nullptr;
  if (!f) return Error("kernel '" + k.kernel_name + "' was not resolved");
  const th::LaunchDims& l = k.launch;
  // An empty output: the code generator asks for zero blocks.
  if (l.grid.product() == 0) return Status::Ok();
  KILN_RETURN_IF_ERROR(CheckLaunchDim("grid", l.grid));
  KILN_RETURN_IF_ERROR(CheckLaunchDim("block", l.block));
  if (l.shared_memory_bytes < 0 || l.shared_memory_bytes > INT_MAX) {
    return Error("kernel launch: shared memory size " + std::to_string(l.shared_memory_bytes) +
                 " out of range");
  }
  // One device pointer per argument; kernelParams[i] points at pointer i.
  std::vector<CUdeviceptr> pointers;
  pointers.reserve(k.args.size());
  for (const th::KernelArgument& a : k.args) pointers.push_back(Address(ctx, a.slice));
  std::vector<void*> params;
  params.reserve(pointers.size());
  for (CUdeviceptr& p : pointers) params.push_back(&p);
  auto u = [](int64_t v) { return static_cast<unsigned>(v); };
  return Driver(ctx).Check(
      Driver(ctx).cuLaunchKernel(f, u(l.grid.x), u(l.grid.y), u(l.grid.z), u(l.block.x),
                                 u(l.block.y), u(l.block.z), u(l.shared_memory_bytes), ctx.stream,
                                 params.data(), nullptr),
      "cuLaunchKernel of '" + k.kernel_name + "'");
}

// cuBLASLt's FP8 GEMM: its workspace lives in the per-stream library
// scratch (the algorithm's size is known at load, not at compile time).
Status RunFp8Gemm(const th::GemmThunk& g, CudaExecutionContext& ctx) {
  if (!ctx.fp8_gemms || !ctx.fp8_gemms->count(&g)) return Error("fp8 gemm thunk was not prepared");
  const kernels::CudaFp8Gemm& gemm = *ctx.fp8_gemms->at(&g);
  CUdeviceptr workspace = 0;
  if (gemm.workspace_bytes() > 0) {
    KILN_ASSIGN_OR_RETURN(workspace, ctx.backend->LibraryScratch(ctx.lane, gemm.workspace_bytes()));
  }
  return gemm.Run(ctx.stream, Address(ctx, g.lhs), Address(ctx, g.rhs),
                  Address(ctx, g.out), workspace);
}

Status RunGemm(const th::GemmThunk& g, CudaExecutionContext& ctx) {
  if (th::IsFp8Gemm(g)) return RunFp8Gemm(g, ctx);
  KILN_ASSIGN_OR_RETURN(const kernels::CublasLibrary* cublas, ctx.backend->Cublas());
  KILN_ASSIGN_OR_RETURN(cublasHandle_t handle, ctx.backend->CublasHandle(ctx.lane));
  return kernels::CudaGemm(*cublas, handle, g, Address(ctx, g.lhs), Address(ctx, g.rhs),
                           Address(ctx, g.out));
}

// The per-stream library scratch as the libraries' callbacks take it: a
// device address of at least `bytes`, valid until the stream's next call.
std::function<StatusOr<uint64_t>(uint64_t)> LibraryScratchFor(const CudaExecutionContext& ctx) {
  return [backend = ctx.backend, lane = ctx.lane](uint64_t bytes) -> StatusOr<uint64_t> {
    KILN_ASSIGN_OR_RETURN(CUdeviceptr p, backend->LibraryScratch(lane, bytes));
    return static_cast<uint64_t>(p);
  };
}

// cuDNN's workspace and a transposed filter live in the backend's per-
// stream library scratch (grown on demand), not in the program's planned
// workspace: their size is only known from cuDNN at run time. The
// descriptors and algorithm were made at load (CudnnConvolution).
Status RunConvolution(const th::ConvolutionThunk& c, CudaExecutionContext& ctx) {
  if (!ctx.convolutions || !ctx.convolutions->count(&c)) return Error("convolution thunk was not prepared");
  KILN_ASSIGN_OR_RETURN(cudnnHandle_t handle, ctx.backend->CudnnHandle(ctx.lane));
  std::vector<uint64_t> operands;
  for (const th::BufferSlice& s : c.operands) operands.push_back(Address(ctx, s));
  return ctx.convolutions->at(&c)->Run(handle, operands, Address(ctx, c.result), LibraryScratchFor(ctx));
}

// cuFFT overwrites a complex-to-real transform's input, so that input (and
// one overlapping the output) goes through the per-stream library scratch;
// the thunk's input slice keeps its value, as XLA's semantics require.
Status RunFft(const th::FftThunk& f, CudaExecutionContext& ctx) {
  if (!ctx.ffts || !ctx.ffts->count(&f)) return Error("fft thunk was not prepared");
  kernels::CudaFft& fft = *ctx.ffts->at(&f);
  CUdeviceptr input = Address(ctx, f.input), output = Address(ctx, f.output);
  if (fft.geometry().batch == 0) return Status::Ok();
  if (fft.InputMustBeCopied(input, output)) {
    size_t bytes = static_cast<size_t>(fft.InputBytes());
    KILN_ASSIGN_OR_RETURN(CUdeviceptr copy, ctx.backend->LibraryScratch(ctx.lane, bytes));
    KILN_RETURN_IF_ERROR(
        Driver(ctx).Check(Driver(ctx).cuMemcpyDtoDAsync(copy, input, bytes, ctx.stream), "cuMemcpyDtoDAsync"));
    input = copy;
  }
  const kernels::CublasLibrary* cublas = nullptr;
  cublasHandle_t blas = nullptr;
  if (fft.geometry().inverse()) {  // the 1/N normalization is a cuBLAS scal
    KILN_ASSIGN_OR_RETURN(cublas, ctx.backend->Cublas());
    KILN_ASSIGN_OR_RETURN(blas, ctx.backend->CublasHandle(ctx.lane));
  }
  return fft.Run(ctx.lane, ctx.stream, cublas, blas, input, output);
}

// potrf's workspace lives in the library scratch too (cuSOLVER sizes it).
Status RunCholesky(const th::CholeskyThunk& c, CudaExecutionContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const kernels::CusolverLibrary* cusolver, ctx.backend->Cusolver());
  KILN_ASSIGN_OR_RETURN(cusolverDnHandle_t handle, ctx.backend->CusolverHandle(ctx.lane));
  return kernels::CudaCholesky(*cusolver, handle, c, Address(ctx, c.a), Address(ctx, c.info),
                               LibraryScratchFor(ctx));
}

// JAX's LAPACK custom calls: cuSOLVER factors column-major copies that
// cuBLAS' geam transposes, in the library scratch (cuda_lapack.h).
Status RunLinalg(const th::LinalgThunk& l, CudaExecutionContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const kernels::CusolverLibrary* cusolver, ctx.backend->Cusolver());
  KILN_ASSIGN_OR_RETURN(cusolverDnHandle_t solver, ctx.backend->CusolverHandle(ctx.lane));
  KILN_ASSIGN_OR_RETURN(const kernels::CublasLibrary* cublas, ctx.backend->Cublas());
  KILN_ASSIGN_OR_RETURN(cublasHandle_t blas, ctx.backend->CublasHandle(ctx.lane));
  kernels::CudaLinalgBuffers buffers;
  buffers.a = Address(ctx, l.a);
  if (l.op == th::LinalgOp::kOrgqr) buffers.tau = Address(ctx, l.tau);
  for (const th::BufferSlice& s : l.results) buffers.results.push_back(Address(ctx, s));
  const CudaDriver& driver = Driver(ctx);
  CUstream cu_stream = ctx.stream;
  auto zero = [&driver, cu_stream](uint64_t address, uint64_t bytes) {
    if (bytes == 0) return Status::Ok();
    return driver.Check(driver.cuMemsetD8Async(static_cast<CUdeviceptr>(address), 0, bytes, cu_stream),
                        "cuMemsetD8Async");
  };
  return kernels::CudaLinalg({*cusolver, solver, *cublas, blas, zero}, l, buffers,
                             LibraryScratchFor(ctx));
}

Status RunTriangularSolve(const th::TriangularSolveThunk& t, CudaExecutionContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const kernels::CublasLibrary* cublas, ctx.backend->Cublas());
  KILN_ASSIGN_OR_RETURN(cublasHandle_t handle, ctx.backend->CublasHandle(ctx.lane));
  return kernels::CudaTriangularSolve(*cublas, handle, t, Address(ctx, t.a), Address(ctx, t.b));
}

Status RunCopy(const th::CopyThunk& c, CudaExecutionContext& ctx) {
  if (c.source.size != c.destination.size) {
    return Error("copy sizes differ: " + c.source.ToString() + " -> " + c.destination.ToString());
  }
  if (c.source.size == 0) return Status::Ok();
  const CudaDriver& d = Driver(ctx);
  size_t size = static_cast<size_t>(c.source.size);
  if (CopyOverlaps(c)) {
    // cuMemcpy has no memmove semantics: go through the workspace's scratch
    // range (sized at Load for the largest overlapping copy).
    if (c.source.size > ctx.copy_scratch_bytes) {
      return Error("internal error: no scratch for the overlapping copy " + c.source.ToString() +
                   " -> " + c.destination.ToString());
    }
    KILN_RETURN_IF_ERROR(
        d.Check(d.cuMemcpyDtoDAsync(ctx.copy_scratch, Address(ctx, c.source), size, ctx.stream),
                "cuMemcpyDtoDAsync"));
    return d.Check(
        d.cuMemcpyDtoDAsync(Address(ctx, c.destination), ctx.copy_scratch, size, ctx.stream),
        "cuMemcpyDtoDAsync");
  }
  return d.Check(
      d.cuMemcpyDtoDAsync(Address(ctx, c.destination), Address(ctx, c.source), size, ctx.stream),
      "cuMemcpyDtoDAsync");
}

Status RunMemset(const th::MemsetThunk& m, CudaExecutionContext& ctx) {
  CUdeviceptr dst = Address(ctx, m.destination);
  size_t size = static_cast<size_t>(m.destination.size);
  if (size == 0) return Status::Ok();
  if (m.pattern == 0) {
    return Driver(ctx).Check(Driver(ctx).cuMemsetD8Async(dst, 0, size, ctx.stream),
                             "cuMemsetD8Async");
  }
  if (size % 4 != 0 || dst % 4 != 0) {
    return Error("memset with a nonzero pattern needs a 4-byte aligned size and offset, got " +
                 m.destination.ToString());
  }
  return Driver(ctx).Check(Driver(ctx).cuMemsetD32Async(dst, m.pattern, size / 4, ctx.stream),
                           "cuMemsetD32Async");
}

// The state goes to the device as four 32-bit memsets: stream-ordered,
// with no host buffer that must outlive the call.
Status RunRngGetAndUpdateState(const th::RngGetAndUpdateStateThunk& r, CudaExecutionContext& ctx) {
  if (!ctx.rng_states) return Error("rng-get-and-update-state: the executable has no RNG state table");
  RngStateTable::State state = ctx.rng_states->GetAndAdvance(r);
  CUdeviceptr dst = Address(ctx, r.state);
  if (dst % 4 != 0) return Error("rng-get-and-update-state: state slice " + r.state.ToString() + " is not 4-byte aligned");
  for (int i = 0; i < 4; ++i) {
    const unsigned int word = static_cast<unsigned int>(state >> (32 * i));
    KILN_RETURN_IF_ERROR(Driver(ctx).Check(
        Driver(ctx).cuMemsetD32Async(dst + 4 * static_cast<CUdeviceptr>(i), word, 1, ctx.stream),
        "cuMemsetD32Async"));
  }
  return Status::Ok();
}

// Copies `size` bytes of device memory to the pinned host scalar and waits
// for the stream: the only place the host blocks mid-program.
Status ReadScalar(CudaExecutionContext& ctx, const th::BufferSlice& s, size_t size) {
  const CudaDriver& d = Driver(ctx);
  KILN_RETURN_IF_ERROR(
      d.Check(d.cuMemcpyDtoHAsync(ctx.host_scalar, Address(ctx, s), size, ctx.stream),
              "cuMemcpyDtoHAsync"));
  return d.Check(d.cuStreamSynchronize(ctx.stream), "cuStreamSynchronize");
}

// A data-dependent loop or a conditional inside a capture: planned into a
// segment because the driver has conditional nodes (cuda_graphs.h).
StatusOr<const CudaConditionalNodes*> ConditionalNodes(const CudaExecutionContext& ctx) {
  if (!ctx.graphs || !ctx.graphs->conditional_nodes()) {
    return Error("internal error: control flow inside a capture without conditional nodes");
  }
  return ctx.graphs->conditional_nodes();
}

Status RunWhile(const th::WhileThunk& w, CudaExecutionContext& ctx, int depth) {
  if (ctx.capturing && !w.trip_count) {
    KILN_ASSIGN_OR_RETURN(const CudaConditionalNodes* nodes, ConditionalNodes(ctx));
    return nodes->RecordWhile(w, ctx, depth);
  }
  if (w.trip_count) {
    // Known trip count: no predicate read back, no host sync.
    for (int64_t i = 0; i < *w.trip_count; ++i) {
      KILN_RETURN_IF_ERROR(ExecuteCudaSequence(w.body, ctx, depth + 1));
    }
    return Status::Ok();
  }
  for (;;) {
    KILN_RETURN_IF_ERROR(ExecuteCudaSequence(w.condition, ctx, depth + 1));
    KILN_RETURN_IF_ERROR(ReadScalar(ctx, w.predicate, 1));
    if (ctx.host_scalar[0] == 0) return Status::Ok();
    KILN_RETURN_IF_ERROR(ExecuteCudaSequence(w.body, ctx, depth + 1));
  }
}

Status RunConditional(const th::ConditionalThunk& c, CudaExecutionContext& ctx, int depth) {
  if (c.branches.empty()) return Error("conditional without branches");
  if (ctx.capturing) {
    KILN_ASSIGN_OR_RETURN(const CudaConditionalNodes* nodes, ConditionalNodes(ctx));
    return nodes->RecordConditional(c, ctx, depth);
  }
  KILN_RETURN_IF_ERROR(ReadScalar(ctx, c.branch_index, c.is_pred ? 1 : 4));
  size_t branch;
  if (c.is_pred) {
    branch = ctx.host_scalar[0] != 0 ? 0 : 1;  // true -> branch 0 (HLO's true_computation)
  } else {
    int32_t i;
    std::memcpy(&i, ctx.host_scalar, 4);
    // XLA: an out-of-range index runs the last branch.
    branch = (i < 0 || static_cast<size_t>(i) >= c.branches.size()) ? c.branches.size() - 1
                                                                    : static_cast<size_t>(i);
  }
  if (branch >= c.branches.size()) return Error("conditional: predicate branch missing");
  return ExecuteCudaSequence(c.branches[branch], ctx, depth + 1);
}

Status RunThunk(const th::Thunk& t, CudaExecutionContext& ctx, int depth) {
  switch (t.kind()) {
    case th::ThunkKind::kKernel: return RunKernel(*t.As<th::KernelThunk>(), ctx);
    case th::ThunkKind::kGemm: return RunGemm(*t.As<th::GemmThunk>(), ctx);
    case th::ThunkKind::kConvolution: return RunConvolution(*t.As<th::ConvolutionThunk>(), ctx);
    case th::ThunkKind::kFft: return RunFft(*t.As<th::FftThunk>(), ctx);
    case th::ThunkKind::kCholesky: return RunCholesky(*t.As<th::CholeskyThunk>(), ctx);
    case th::ThunkKind::kTriangularSolve: return RunTriangularSolve(*t.As<th::TriangularSolveThunk>(), ctx);
    case th::ThunkKind::kRadixSort: return RunRadixSort(*t.As<th::RadixSortThunk>(), ctx);
    case th::ThunkKind::kLinalg: return RunLinalg(*t.As<th::LinalgThunk>(), ctx);
    case th::ThunkKind::kCopy: return RunCopy(*t.As<th::CopyThunk>(), ctx);
    case th::ThunkKind::kMemset: return RunMemset(*t.As<th::MemsetThunk>(), ctx);
    case th::ThunkKind::kRngGetAndUpdateState:
      return RunRngGetAndUpdateState(*t.As<th::RngGetAndUpdateStateThunk>(), ctx);
    case th::ThunkKind::kSequence:
      return ExecuteCudaSequence(*t.As<th::SequenceThunk>(), ctx, depth + 1);
    case th::ThunkKind::kWhile: return RunWhile(*t.As<th::WhileThunk>(), ctx, depth);
    case th::ThunkKind::kConditional:
      return RunConditional(*t.As<th::ConditionalThunk>(), ctx, depth);
    default:
      if (th::IsCollective(t.kind()) || t.kind() == th::ThunkKind::kCollectiveDone ||
          t.kind() == th::ThunkKind::kDeviceId) {
        if (!ctx.collectives) return Error("internal: no collectives for this execution");
        return ctx.collectives->Run(t, ctx);
      }
      return Error("not supported on cuda yet: " + std::string(th::ThunkKindName(t.kind())));
  }
}

// Inside a capture the record must be an event-record node of the graph
// (CU_EVENT_RECORD_EXTERNAL); a plain record there would only order work
// within the capture.
Status RecordEvent(CudaExecutionContext& ctx, CUevent* event) {
  KILN_ASSIGN_OR_RETURN(*event, ctx.events->Next());
  if (ctx.capturing) {
    return Driver(ctx).Check(Driver(ctx).cuEventRecordWithFlags(*event, ctx.stream, CU_EVENT_RECORD_EXTERNAL),
                             "cuEventRecordWithFlags");
  }
  return Driver(ctx).Check(Driver(ctx).cuEventRecord(*event, ctx.stream), "cuEventRecord");
}

}  // namespace

bool CopyOverlaps(const th::CopyThunk& c) {
  return c.source.allocation == c.destination.allocation && c.source.size > 0 &&
         c.source.offset != c.destination.offset && c.source.offset < c.destination.end() &&
         c.destination.offset < c.source.end();
}

CudaEventPool::~CudaEventPool() {
  for (CUevent e : events_) driver_.cuEventDestroy(e);
}

StatusOr<CUevent> CudaEventPool::Next() {
  if (used_ == events_.size()) {
    CUevent e = nullptr;
    KILN_RETURN_IF_ERROR(
        driver_.Check(driver_.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate"));
    events_.push_back(e);
  }
  return events_[used_++];
}

Status IssueCudaThunks(const th::SequenceThunk& seq, size_t begin, size_t end, CudaExecutionContext& ctx,
                       int depth) {
  for (size_t i = begin; i < end; ++i) {
    const th::Thunk& t = seq.thunks[i];
    const bool root = ctx.streams && &seq == &ctx.streams->root();
    Status s = Status::Ok();
    if (root) {
      // A conditional node's bodies are captured on the origin: the lanes
      // join around it (cuda_program_streams.h).
      s = ctx.capturing && RecordsConditionalNode(t) ? ctx.streams->BeforeConditionalNode(t, ctx)
                                                     : ctx.streams->BeforeThunk(t, ctx);
    }
    CudaTimedThunk timed{&t, depth, nullptr, nullptr, ctx.program_stream};
    if (s.ok() && ctx.events) s = RecordEvent(ctx, &timed.begin);
    if (s.ok()) s = RunThunk(t, ctx, depth);
    if (s.ok() && ctx.events) s = RecordEvent(ctx, &timed.end);
    if (s.ok() && root) s = ctx.streams->AfterThunk(t, ctx);
    if (!s.ok()) return s.WithContext("thunk '" + t.info.profile_name + "'");
    if (ctx.events) ctx.timed->push_back(timed);
  }
  return Status::Ok();
}

Status ExecuteCudaSequence(const th::SequenceThunk& seq, CudaExecutionContext& ctx, int depth) {
  // The root of a multi-stream program: every program stream is joined
  // back into the Device stream before a segment's graph (which forks and
  // joins inside, cuda_graphs.h) and at the end.
  CudaProgramStreams* streams = ctx.streams && &seq == &ctx.streams->root() ? ctx.streams : nullptr;
  if (!ctx.graphs || ctx.capturing) {
    KILN_RETURN_IF_ERROR(IssueCudaThunks(seq, 0, seq.thunks.size(), ctx, depth));
    return streams && !ctx.capturing ? streams->Join(ctx) : Status::Ok();
  }
  size_t next = 0;
  for (const CommandSegment& segment : ctx.graphs->segments(ctx).For(seq)) {
    KILN_RETURN_IF_ERROR(IssueCudaThunks(seq, next, segment.begin, ctx, depth));
    if (streams) KILN_RETURN_IF_ERROR(streams->Join(ctx));
    KILN_RETURN_IF_ERROR(ctx.graphs->Run(seq, segment, ctx, depth));
    if (streams) KILN_RETURN_IF_ERROR(streams->Join(ctx));
    next = segment.end;
  }
  KILN_RETURN_IF_ERROR(IssueCudaThunks(seq, next, seq.thunks.size(), ctx, depth));
  return streams ? streams->Join(ctx) : Status::Ok();
}

}  // namespace kiln::runtime
