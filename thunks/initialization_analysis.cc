// Initialization analysis; see initialization_analysis.h.
#include "thunks/initialization_analysis.h"

#include <algorithm>
#include <utility>

namespace kiln::thunks {
namespace {

// The written bytes of one allocation: disjoint, sorted [begin, end) ranges.
class ByteRanges {
 public:
  void Add(int64_t begin, int64_t end) {
    if (begin >= end) return;
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (const auto& r : ranges_) {
      if (r.second < begin || r.first > end) {
        merged.push_back(r);
      } else {
        begin = std::min(begin, r.first);
        end = std::max(end, r.second);
      }
    }
    merged.emplace_back(begin, end);
    std::sort(merged.begin(), merged.end());
    ranges_ = std::move(merged);
  }
  bool Covers(int64_t begin, int64_t end) const {
    if (begin >= end) return true;
    for (const auto& r : ranges_)
      if (r.first <= begin && end <= r.second) return true;
    return false;
  }
  ByteRanges Intersect(const ByteRanges& other) const {
    ByteRanges out;
    for (const auto& a : ranges_)
      for (const auto& b : other.ranges_) {
        int64_t lo = std::max(a.first, b.first), hi = std::min(a.second, b.second);
        if (lo < hi) out.ranges_.emplace_back(lo, hi);
      }
    std::sort(out.ranges_.begin(), out.ranges_.end());
    return out;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

using Written = std::vector<ByteRanges>;  // by allocation

// The slices a non-control-flow thunk reads (before it writes) and writes.
struct Effects {
  std::vector<BufferSlice> reads, writes;
  void ReadWrite(const BufferSlice& s) {
    reads.push_back(s);
    writes.push_back(s);
  }
};

void CollectiveEffects(const std::vector<CollectiveBuffer>& buffers, Effects& e) {
  for (const CollectiveBuffer& b : buffers) {
    e.reads.push_back(b.source);
    e.writes.push_back(b.destination);
  }
}

Effects KernelEffects(const KernelThunk& k) {
  Effects e;
  // An in-place kernel's output is one of its operand slices, read here.
  for (const KernelArgument& a : k.args) (a.written ? e.writes : e.reads).push_back(a.slice);
  return e;
}

Effects LibraryEffects(const Thunk& t) {
  Effects e;
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

Effects ThunkEffects(const Thunk& t) {
  Effects e;
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

class Analysis {
 public:
  explicit Analysis(const ThunkProgram& p) : p_(p), needs_(p.allocations.size(), false) {}

  std::vector<bool> Run() {
    Written w(p_.allocations.size());
    for (size_t a = 0; a < p_.allocations.size(); ++a) {
      const Allocation& alloc = p_.allocations[a];
      if (alloc.is_constant() && !alloc.is_parameter()) w[a].Add(0, alloc.size);
    }
    for (const ParameterLeaf& leaf : p_.signature.parameter_leaves) Write(w, leaf.slice);
    Sequence(p_.root, w);
    for (const ResultLeaf& leaf : p_.signature.result_leaves) Read(w, leaf.slice);
    return needs_;
  }

 private:
  void Read(const Written& w, const BufferSlice& s) {
    size_t a = static_cast<size_t>(s.allocation);
    if (a < w.size() && !w[a].Covers(s.offset, s.end())) needs_[a] = true;
  }
  static void Write(Written& w, const BufferSlice& s) {
    size_t a = static_cast<size_t>(s.allocation);
    if (a < w.size()) w[a].Add(s.offset, s.end());
  }

  void Sequence(const SequenceThunk& seq, Written& w) {
    for (const Thunk& t : seq.thunks) Step(t, w);
  }

  void Step(const Thunk& t, Written& w) {
    if (const auto* s = t.As<SequenceThunk>()) return Sequence(*s, w);
    if (const auto* loop = t.As<WhileThunk>()) return While(*loop, w);
    if (const auto* c = t.As<ConditionalThunk>()) return Conditional(*c, w);
    Effects e = ThunkEffects(t);
    for (const BufferSlice& s : e.reads) Read(w, s);
    for (const BufferSlice& s : e.writes) Write(w, s);
  }

  // With a known trip count the runtime runs the body alone (no condition).
  void While(const WhileThunk& loop, Written& w) {
    if (loop.trip_count) {
      Written body = w;
      Sequence(loop.body, body);
      if (*loop.trip_count >= 1) w = std::move(body);
      return;
    }
    Sequence(loop.condition, w);
    Read(w, loop.predicate);
    Written body = w;
    Sequence(loop.body, body);
  }

  void Conditional(const ConditionalThunk& c, Written& w) {
    Read(w, c.branch_index);
    if (c.branches.empty()) return;
    std::vector<Written> outcomes;
    for (const SequenceThunk& branch : c.branches) {
      outcomes.push_back(w);
      Sequence(branch, outcomes.back());
    }
    for (size_t a = 0; a < w.size(); ++a) {
      ByteRanges all = outcomes[0][a];
      for (size_t b = 1; b < outcomes.size(); ++b) all = all.Intersect(outcomes[b][a]);
      w[a] = std::move(all);
    }
  }

  const ThunkProgram& p_;
  std::vector<bool> needs_;
};

}  // namespace

std::vector<bool> AllocationsReadBeforeWritten(const ThunkProgram& program) {
  return Analysis(program).Run();
}

void MarkZeroInitializedAllocations(ThunkProgram& program) {
  std::vector<bool> needs = AllocationsReadBeforeWritten(program);
  for (size_t a = 0; a < program.allocations.size(); ++a) program.allocations[a].zero_initialize = needs[a];
}

}  // namespace kiln::thunks
