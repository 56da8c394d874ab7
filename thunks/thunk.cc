// Names of thunk kinds and enums, and the generic slice / child walkers that
// validation, printing and the runtime share (see thunk.h).
#include "thunks/thunk.h"

namespace kiln::thunks {
namespace {

void AddBuffers(const std::vector<CollectiveBuffer>& buffers, std::vector<BufferSlice>& out) {
  for (const CollectiveBuffer& b : buffers) {
    out.push_back(b.source);
    out.push_back(b.destination);
  }
}

}  // namespace

bool IsFp8GemmOperandType(ElementType type) {
  return type == ElementType::kF8E4M3FN || type == ElementType::kF8E5M2;
}

bool IsFp8Gemm(const GemmThunk& g) {
  const bool out_ok =
      g.out_type == ElementType::kF32 || g.out_type == ElementType::kBF16 || g.out_type == ElementType::kF16;
  return IsFp8GemmOperandType(g.lhs_type) && IsFp8GemmOperandType(g.rhs_type) &&
         !(g.lhs_type == ElementType::kF8E5M2 && g.rhs_type == ElementType::kF8E5M2) && out_ok;
}

std::string_view ThunkKindName(ThunkKind kind) {
  switch (kind) {
    case ThunkKind::kKernel: return "kernel";
    case ThunkKind::kGemm: return "gemm";
    case ThunkKind::kConvolution: return "convolution";
    case ThunkKind::kFft: return "fft";
    case ThunkKind::kCopy: return "copy";
    case ThunkKind::kMemset: return "memset";
    case ThunkKind::kSequence: return "sequence";
    case ThunkKind::kWhile: return "while";
    case ThunkKind::kConditional: return "conditional";
    case ThunkKind::kAllReduce: return "all-reduce";
    case ThunkKind::kAllGather: return "all-gather";
    case ThunkKind::kReduceScatter: return "reduce-scatter";
    case ThunkKind::kAllToAll: return "all-to-all";
    case ThunkKind::kCollectivePermute: return "collective-permute";
    case ThunkKind::kCustomCall: return "custom-call";
    case ThunkKind::kRngGetAndUpdateState: return "rng-get-and-update-state";
    case ThunkKind::kCholesky: return "cholesky";
    case ThunkKind::kTriangularSolve: return "triangular-solve";
    case ThunkKind::kLinalg: return "linalg";
    case ThunkKind::kRadixSort: return "radix-sort";
    case ThunkKind::kCollectiveBroadcast: return "collective-broadcast";
    case ThunkKind::kCollectiveDone: return "collective-done";
    case ThunkKind::kDeviceId: return "device-id";
  }
  return "?";
}

std::string_view DeviceIdKindName(DeviceIdKind kind) {
  return kind == DeviceIdKind::kReplica ? "replica" : "partition";
}

bool IsCollective(ThunkKind kind) {
  switch (kind) {
    case ThunkKind::kAllReduce:
    case ThunkKind::kAllGather:
    case ThunkKind::kReduceScatter:
    case ThunkKind::kAllToAll:
    case ThunkKind::kCollectivePermute:
    case ThunkKind::kCollectiveBroadcast: return true;
    default: return false;
  }
}

const CollectiveConfig* CollectiveConfigOf(const Thunk& thunk) {
  return std::visit(
      [](const auto& body) -> const CollectiveConfig* {
        if constexpr (requires { body.config; }) return &body.config;
        return nullptr;
      },
      thunk.body);
}

std::string_view ConvolutionKindName(ConvolutionKind kind) {
  switch (kind) {
    case ConvolutionKind::kForward: return "forward";
    case ConvolutionKind::kBackwardInput: return "backward-input";
    case ConvolutionKind::kBackwardFilter: return "backward-filter";
  }
  return "?";
}

std::string_view FftTypeName(FftType type) {
  switch (type) {
    case FftType::kFft: return "FFT";
    case FftType::kIfft: return "IFFT";
    case FftType::kRfft: return "RFFT";
    case FftType::kIrfft: return "IRFFT";
  }
  return "?";
}

std::string_view LinalgOpName(LinalgOp op) {
  switch (op) {
    case LinalgOp::kGetrf: return "getrf";
    case LinalgOp::kGeqrf: return "geqrf";
    case LinalgOp::kOrgqr: return "orgqr";
    case LinalgOp::kSyevd: return "syevd";
    case LinalgOp::kGesdd: return "gesdd";
  }
  return "?";
}

std::string_view TriangularSolveTransposeName(TriangularSolveTranspose transpose) {
  switch (transpose) {
    case TriangularSolveTranspose::kNoTranspose: return "NO_TRANSPOSE";
    case TriangularSolveTranspose::kTranspose: return "TRANSPOSE";
    case TriangularSolveTranspose::kAdjoint: return "ADJOINT";
  }
  return "?";
}

std::string_view RadixKeyOrderName(RadixKeyOrder order) {
  switch (order) {
    case RadixKeyOrder::kUnsigned: return "unsigned";
    case RadixKeyOrder::kSigned: return "signed";
    case RadixKeyOrder::kFloatTotal: return "float-total";
    case RadixKeyOrder::kFloatPartial: return "float-partial";
    case RadixKeyOrder::kFloatNumpy: return "float-numpy";
  }
  return "?";
}

std::string_view ReductionKindName(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum: return "sum";
    case ReductionKind::kProduct: return "product";
    case ReductionKind::kMin: return "min";
    case ReductionKind::kMax: return "max";
    case ReductionKind::kAnd: return "and";
    case ReductionKind::kOr: return "or";
  }
  return "?";
}

std::vector<BufferSlice> DirectSlices(const Thunk& thunk) {
  std::vector<BufferSlice> out;
  switch (thunk.kind()) {
    case ThunkKind::kKernel:
      for (const KernelArgument& a : thunk.As<KernelThunk>()->args) out.push_back(a.slice);
      break;
    case ThunkKind::kGemm: {
      const GemmThunk& g = *thunk.As<GemmThunk>();
      out = {g.lhs, g.rhs, g.out};
      if (g.workspace) out.push_back(*g.workspace);
      break;
    }
    case ThunkKind::kConvolution: {
      const ConvolutionThunk& c = *thunk.As<ConvolutionThunk>();
      out = c.operands;
      out.push_back(c.result);
      if (c.scratch) out.push_back(*c.scratch);
      break;
    }
    case ThunkKind::kFft: {
      const FftThunk& f = *thunk.As<FftThunk>();
      out = {f.input, f.output};
      break;
    }
    case ThunkKind::kCopy: {
      const CopyThunk& c = *thunk.As<CopyThunk>();
      out = {c.source, c.destination};
      break;
    }
    case ThunkKind::kMemset: out = {thunk.As<MemsetThunk>()->destination}; break;
    case ThunkKind::kSequence: break;
    case ThunkKind::kWhile: out = {thunk.As<WhileThunk>()->predicate}; break;
    case ThunkKind::kConditional: out = {thunk.As<ConditionalThunk>()->branch_index}; break;
    case ThunkKind::kAllReduce: AddBuffers(thunk.As<AllReduceThunk>()->buffers, out); break;
    case ThunkKind::kAllGather: AddBuffers(thunk.As<AllGatherThunk>()->buffers, out); break;
    case ThunkKind::kReduceScatter:
      AddBuffers(thunk.As<ReduceScatterThunk>()->buffers, out);
      break;
    case ThunkKind::kAllToAll: AddBuffers(thunk.As<AllToAllThunk>()->buffers, out); break;
    case ThunkKind::kCollectivePermute:
      AddBuffers({thunk.As<CollectivePermuteThunk>()->buffer}, out);
      break;
    case ThunkKind::kCollectiveBroadcast:
      AddBuffers(thunk.As<CollectiveBroadcastThunk>()->buffers, out);
      break;
    case ThunkKind::kCollectiveDone: break;
    case ThunkKind::kDeviceId: out = {thunk.As<DeviceIdThunk>()->destination}; break;
    case ThunkKind::kCustomCall: {
      const CustomCallThunk& c = *thunk.As<CustomCallThunk>();
      out = c.operands;
      out.insert(out.end(), c.results.begin(), c.results.end());
      break;
    }
    case ThunkKind::kRngGetAndUpdateState: out = {thunk.As<RngGetAndUpdateStateThunk>()->state}; break;
    case ThunkKind::kCholesky: {
      const CholeskyThunk& c = *thunk.As<CholeskyThunk>();
      out = {c.a, c.info};
      break;
    }
    case ThunkKind::kTriangularSolve: {
      const TriangularSolveThunk& t = *thunk.As<TriangularSolveThunk>();
      out = {t.a, t.b};
      break;
    }
    case ThunkKind::kLinalg: {
      const LinalgThunk& l = *thunk.As<LinalgThunk>();
      out = {l.a};
      if (l.op == LinalgOp::kOrgqr) out.push_back(l.tau);
      out.insert(out.end(), l.results.begin(), l.results.end());
      break;
    }
    case ThunkKind::kRadixSort: {
      const RadixSortThunk& r = *thunk.As<RadixSortThunk>();
      out = {r.keys, r.keys_out};
      if (r.values) out.push_back(*r.values);
      if (r.values_out) out.push_back(*r.values_out);
      break;
    }
  }
  return out;
}

std::vector<const SequenceThunk*> ChildSequences(const Thunk& thunk) {
  if (const auto* s = thunk.As<SequenceThunk>()) return {s};
  if (const auto* w = thunk.As<WhileThunk>()) return {&w->condition, &w->body};
  std::vector<const SequenceThunk*> out;
  if (const auto* c = thunk.As<ConditionalThunk>()) {
    for (const SequenceThunk& b : c->branches) out.push_back(&b);
  }
  return out;
}

}  // namespace kiln::thunks
