// Host thunk interpreter; see executor.h.
#include "runtime/executor.h"

#include <algorithm>
#include <cstring>

#include "kernels_lib/host_convolution.h"
#include "kernels_lib/host_fft.h"
#include "kernels_lib/host_gemm.h"
#include "kernels_lib/host_lapack.h"
#include "kernels_lib/host_linalg.h"
#include "kernels_lib/host_radix_sort.h"
#include "runtime/host_collectives.h"
#include "runtime/host_streams.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

uint8_t* Address(const ExecutionContext& ctx, const th::BufferSlice& s) {
  return ctx.allocation_base[s.allocation] + s.offset;
}

Status RunKernel(const PreparedKernel& kernel, ExecutionContext& ctx) {
  void** args = const_cast<void**>(ctx.kernel_arguments + kernel.first_argument);
  bool split = ctx.pool && kernel.units > 1 && kernel.work >= kMinElementsToSplit && ctx.pool->num_threads() > 1;
  if (!split) {
    kernel.fn(args, 0, kernel.units);
    return Status::Ok();
  }
  ctx.pool->ParallelFor(kernel.units, [&](int64_t begin, int64_t end) { kernel.fn(args, begin, end); });
  return Status::Ok();
}

Status RunFft(const th::FftThunk& f, ExecutionContext& ctx) {
  if (!ctx.ffts || !ctx.ffts->count(&f)) return Error("fft thunk was not prepared");
  kernels::ParallelForFn parallel_for;
  if (ctx.pool && ctx.pool->num_threads() > 1) {
    ThreadPool* pool = ctx.pool;
    parallel_for = [pool](int64_t n, const std::function<void(int64_t, int64_t)>& fn) { pool->ParallelFor(n, fn); };
  }
  return ctx.ffts->at(&f)->Run(Address(ctx, f.input), Address(ctx, f.output), parallel_for);
}

Status RunCopy(const th::CopyThunk& c, ExecutionContext& ctx) {
  if (c.source.size != c.destination.size) {
    return Error("copy sizes differ: " + c.source.ToString() + " -> " + c.destination.ToString());
  }
  // memmove: a copy between overlapping slices of one allocation is legal.
  std::memmove(Address(ctx, c.destination), Address(ctx, c.source),
               static_cast<size_t>(c.source.size));
  return Status::Ok();
}

Status RunMemset(const th::MemsetThunk& m, ExecutionContext& ctx) {
  uint8_t* dst = Address(ctx, m.destination);
  if (m.pattern == 0) {
    std::memset(dst, 0, static_cast<size_t>(m.destination.size));
    return Status::Ok();
  }
  if (m.destination.size % 4 != 0) {
    return Error("memset with a nonzero pattern needs a size multiple of 4, got " +
                 m.destination.ToString());
  }
  for (int64_t i = 0; i < m.destination.size; i += 4) std::memcpy(dst + i, &m.pattern, 4);
  return Status::Ok();
}

Status RunRngGetAndUpdateState(const th::RngGetAndUpdateStateThunk& r, ExecutionContext& ctx) {
  if (!ctx.rng_states) return Error("rng-get-and-update-state: the executable has no RNG state table");
  RngStateTable::State state = ctx.rng_states->GetAndAdvance(r);
  const uint64_t words[2] = {static_cast<uint64_t>(state), static_cast<uint64_t>(state >> 64)};
  std::memcpy(Address(ctx, r.state), words, sizeof words);  // u64[2], low word first
  return Status::Ok();
}

Status RunWhile(const th::WhileThunk& w, const std::vector<PreparedSequence>& children, ExecutionContext& ctx,
                int depth) {
  const PreparedSequence& condition = children[0];
  const PreparedSequence& body = children[1];
  if (w.trip_count) {
    // Known trip count: the compiler proved the condition's outcome, so the
    // predicate is not read back (matches the CUDA runtime's no-sync path).
    for (int64_t i = 0; i < *w.trip_count; ++i) {
      KILN_RETURN_IF_ERROR(ExecuteSequence(w.body, body, ctx, depth + 1));
    }
    return Status::Ok();
  }
  // The condition ran on this thread: the predicate is a plain load.
  const uint8_t* predicate = Address(ctx, w.predicate);
  for (;;) {
    KILN_RETURN_IF_ERROR(ExecuteSequence(w.condition, condition, ctx, depth + 1));
    if (*predicate == 0) return Status::Ok();
    KILN_RETURN_IF_ERROR(ExecuteSequence(w.body, body, ctx, depth + 1));
  }
}

Status RunConditional(const th::ConditionalThunk& c, const std::vector<PreparedSequence>& branches,
                      ExecutionContext& ctx, int depth) {
  if (c.branches.empty()) return Error("conditional without branches");
  const uint8_t* index = Address(ctx, c.branch_index);
  size_t branch;
  if (c.is_pred) {
    branch = *index != 0 ? 0 : 1;  // true -> branch 0 (HLO's true_computation)
  } else {
    int32_t i;
    std::memcpy(&i, index, 4);
    // XLA: an out-of-range index runs the last branch.
    branch = (i < 0 || static_cast<size_t>(i) >= c.branches.size()) ? c.branches.size() - 1
                                                                     : static_cast<size_t>(i);
  }
  if (branch >= c.branches.size()) return Error("conditional: predicate branch missing");
  return ExecuteSequence(c.branches[branch], branches[branch], ctx, depth + 1);
}

// Runs thunk `i` of a sequence prepared as `prepared`.
Status RunThunk(const th::Thunk& t, const PreparedSequence& prepared, size_t i, ExecutionContext& ctx, int depth) {
  switch (t.kind()) {
    case th::ThunkKind::kKernel: return RunKernel(ctx.kernels->kernels[prepared.kernel[i]], ctx);
    case th::ThunkKind::kGemm: {
      const th::GemmThunk& g = *t.As<th::GemmThunk>();
      return kernels::HostGemm(g, Address(ctx, g.lhs), Address(ctx, g.rhs), Address(ctx, g.out));
    }
    case th::ThunkKind::kConvolution: {
      const th::ConvolutionThunk& c = *t.As<th::ConvolutionThunk>();
      if (c.operands.size() != 2) return Error("convolution: expected 2 operands");
      return kernels::HostConvolution(c, Address(ctx, c.operands[0]), Address(ctx, c.operands[1]),
                                      Address(ctx, c.result));
    }
    case th::ThunkKind::kFft: return RunFft(*t.As<th::FftThunk>(), ctx);
    case th::ThunkKind::kCholesky: {
      const th::CholeskyThunk& c = *t.As<th::CholeskyThunk>();
      return kernels::HostCholesky(c, Address(ctx, c.a), reinterpret_cast<int32_t*>(Address(ctx, c.info)));
    }
    case th::ThunkKind::kTriangularSolve: {
      const th::TriangularSolveThunk& s = *t.As<th::TriangularSolveThunk>();
      return kernels::HostTriangularSolve(s, Address(ctx, s.a), Address(ctx, s.b));
    }
    case th::ThunkKind::kLinalg: {
      const th::LinalgThunk& l = *t.As<th::LinalgThunk>();
      kernels::LinalgBuffers buffers{Address(ctx, l.a), nullptr, {}};
      if (l.op == th::LinalgOp::kOrgqr) buffers.tau = Address(ctx, l.tau);
      for (const th::BufferSlice& r : l.results) buffers.results.push_back(Address(ctx, r));
      return kernels::HostLinalg(l, buffers);
    }
    case th::ThunkKind::kRadixSort: {
      const th::RadixSortThunk& r = *t.As<th::RadixSortThunk>();
      return kernels::HostRadixSort(r, Address(ctx, r.keys), Address(ctx, r.keys_out),
                                    r.values ? Address(ctx, *r.values) : nullptr,
                                    r.values_out ? Address(ctx, *r.values_out) : nullptr);
    }
    case th::ThunkKind::kCopy: return RunCopy(*t.As<th::CopyThunk>(), ctx);
    case th::ThunkKind::kMemset: return RunMemset(*t.As<th::MemsetThunk>(), ctx);
    case th::ThunkKind::kRngGetAndUpdateState:
      return RunRngGetAndUpdateState(*t.As<th::RngGetAndUpdateStateThunk>(), ctx);
    case th::ThunkKind::kSequence:
      return ExecuteSequence(*t.As<th::SequenceThunk>(), prepared.children[i][0], ctx, depth + 1);
    case th::ThunkKind::kWhile: return RunWhile(*t.As<th::WhileThunk>(), prepared.children[i], ctx, depth);
    case th::ThunkKind::kConditional:
      return RunConditional(*t.As<th::ConditionalThunk>(), prepared.children[i], ctx, depth);
    case th::ThunkKind::kAllReduce:
    case th::ThunkKind::kAllGather:
    case th::ThunkKind::kReduceScatter:
    case th::ThunkKind::kAllToAll:
    case th::ThunkKind::kCollectivePermute:
    case th::ThunkKind::kCollectiveBroadcast:
    case th::ThunkKind::kCollectiveDone:
    case th::ThunkKind::kDeviceId:
      if (!ctx.collectives || !ctx.pending_collectives) return Error("internal: no collectives for this execution");
      return ctx.collectives->Run(t, ctx.allocation_base, *ctx.pending_collectives);
    default:
      return Error("not supported on host yet: " + std::string(th::ThunkKindName(t.kind())));
  }
}

}  // namespace

Status ExecuteThunk(const thunks::SequenceThunk& seq, const PreparedSequence& prepared, size_t i,
                    ExecutionContext& ctx, int depth) {
  using Clock = std::chrono::steady_clock;
  const th::Thunk& t = seq.thunks[i];
  if (!ctx.profile) {
    Status s = RunThunk(t, prepared, i, ctx, depth);
    if (!s.ok()) [[unlikely]] return s.WithContext("thunk '" + t.info.profile_name + "'");
    return s;
  }
  Clock::time_point begin = Clock::now();
  Status s = RunThunk(t, prepared, i, ctx, depth);
  Clock::time_point end = Clock::now();
  if (!s.ok()) return s.WithContext("thunk '" + t.info.profile_name + "'");
  ThunkProfileEntry entry{t.info.profile_name, &t.info, ctx.stream, t.kind(), depth,
                          begin - ctx.start, end - begin, std::nullopt, ctx.program_stream};
  entry.collective = th::CollectiveTrafficOf(t);
  ctx.profile->thunks.push_back(std::move(entry));
  return Status::Ok();
}

Status ExecuteSequence(const thunks::SequenceThunk& seq, const PreparedSequence& prepared, ExecutionContext& ctx,
                       int depth) {
  const size_t n = seq.thunks.size();
  if (!ctx.profile) {
    // The loop bodies' path: no profile branch per thunk.
    for (size_t i = 0; i < n; ++i) {
      Status s = RunThunk(seq.thunks[i], prepared, i, ctx, depth);
      if (!s.ok()) [[unlikely]] return s.WithContext("thunk '" + seq.thunks[i].info.profile_name + "'");
    }
    return Status::Ok();
  }
  for (size_t i = 0; i < n; ++i) KILN_RETURN_IF_ERROR(ExecuteThunk(seq, prepared, i, ctx, depth));
  return Status::Ok();
}

Status ExecuteRoot(const thunks::ThunkProgram& program, ExecutionContext& ctx) {
  if (program.num_streams <= 1) return ExecuteSequence(program.root, ctx.kernels->root, ctx);
  return ExecuteStreams(program, ctx.kernels->root, ctx);
}

}  // namespace kiln::runtime
