// Initialization analysis; see initialization_analysis.h.
#include "thunks/initialization_analysis.h"

#include "thunks/thunk_effects.h"

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
    SliceEffects e = DirectEffects(t);
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
