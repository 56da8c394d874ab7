// Thunk effects; see thunk_effects.h.
#include "thunks/thunk_effects.h"

namespace kiln::thunks {
namespace {

void CollectiveEffects(const std::vector<CollectiveBuffer>& buffers, SliceEffects& e) {
  for (const CollectiveBuffer& b : buffers) {
    e.reads.push_back(b.source);
    e.writes.push_back(b.destination);
  }
}

SliceEffects KernelEffects(const KernelThunk& k) {
  SliceEffects e;
  // An in-place kernel's output is one of its operand slices, read here.
  for (const KernelArgument& a : k.args) (a.written ? e.writes : e.reads).push_back(a.slice);
  return e;
}

SliceEffects LibraryEffects(const Thunk& t) {
  SliceEffects e;
  if (const auto* g = t.As<GemmThunk>()) {
    e.reads = {g->lhs, g->rhs};
    if (g->beta != 0) e.reads.push_back(g->out);
    e.writes.push_back(g->out);
  } else if (const auto* c = t.As<ConvolutionThunk>()) {
    e.reads = c->operands;
    e.writes.push_back(c->result);
  } else if (const auto* f = t.As<FftThunk>()) {
    e.reads.push_back(f->input);
    e.writes.push_back(f->output);
  } else if (const auto* c = t.As<CholeskyThunk>()) {
    e.ReadWrite(c->a);
    e.writes.push_back(c->info);
  } else if (const auto* s = t.As<TriangularSolveThunk>()) {
    e.reads.push_back(s->a);
    e.ReadWrite(s->b);
  } else if (const auto* l = t.As<LinalgThunk>()) {
    e.ReadWrite(l->a);
    if (l->op == LinalgOp::kOrgqr) e.reads.push_back(l->tau);
    for (const BufferSlice& r : l->results) e.ReadWrite(r);
  } else if (const auto* r = t.As<RadixSortThunk>()) {
    e.reads.push_back(r->keys);
    e.writes.push_back(r->keys_out);
    if (r->values) e.reads.push_back(*r->values);
    if (r->values_out) e.writes.push_back(*r->values_out);
  }
  return e;
}

}  // namespace

SliceEffects DirectEffects(const Thunk& t) {
  SliceEffects e;
  switch (t.kind()) {
    case ThunkKind::kKernel: return KernelEffects(*t.As<KernelThunk>());
    case ThunkKind::kCopy:
      e.reads.push_back(t.As<CopyThunk>()->source);
      e.writes.push_back(t.As<CopyThunk>()->destination);
      return e;
    case ThunkKind::kMemset: e.writes.push_back(t.As<MemsetThunk>()->destination); return e;
    case ThunkKind::kRngGetAndUpdateState:
      e.writes.push_back(t.As<RngGetAndUpdateStateThunk>()->state);
      return e;
    case ThunkKind::kAllReduce: CollectiveEffects(t.As<AllReduceThunk>()->buffers, e); return e;
    case ThunkKind::kAllGather: CollectiveEffects(t.As<AllGatherThunk>()->buffers, e); return e;
    case ThunkKind::kReduceScatter: CollectiveEffects(t.As<ReduceScatterThunk>()->buffers, e); return e;
    case ThunkKind::kAllToAll: CollectiveEffects(t.As<AllToAllThunk>()->buffers, e); return e;
    case ThunkKind::kCollectivePermute: {
      // A device no pair sends to keeps its destination as it was.
      const CollectiveBuffer& b = t.As<CollectivePermuteThunk>()->buffer;
      e.reads.push_back(b.source);
      e.ReadWrite(b.destination);
      return e;
    }
    case ThunkKind::kCollectiveBroadcast:  // every rank receives the root's buffers
      CollectiveEffects(t.As<CollectiveBroadcastThunk>()->buffers, e);
      return e;
    case ThunkKind::kDeviceId: e.writes.push_back(t.As<DeviceIdThunk>()->destination); return e;
    case ThunkKind::kCollectiveDone: return e;  // its start thunk wrote the results
    case ThunkKind::kCustomCall: {
      const auto* c = t.As<CustomCallThunk>();
      e.reads = c->operands;
      for (const BufferSlice& r : c->results) e.ReadWrite(r);
      return e;
    }
    default: return LibraryEffects(t);
  }
}

}  // namespace kiln::thunks
