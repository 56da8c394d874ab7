// The recordable segments of a thunk program; see command_segments.h.
#include "runtime/command_segments.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

// Thunks recorded when `seq` runs once, loops with a trip count unrolled,
// a conditional node's sequences once each; -1 when not recordable.
int64_t RecordedThunks(const th::SequenceThunk& seq, bool cond);

// The thunks of `seqs` together, -1 if one is not recordable.
int64_t RecordedSum(const std::vector<const th::SequenceThunk*>& seqs, bool cond) {
  int64_t total = 1;  // the node
  for (const th::SequenceThunk* s : seqs) {
    int64_t n = RecordedThunks(*s, cond);
    if (n < 0) return -1;
    total += n;
  }
  return total > kMaxUnrolledRecordedThunks ? -1 : total;
}

int64_t RecordedThunks(const th::Thunk& t, bool cond) {
  switch (t.kind()) {
    case th::ThunkKind::kKernel:
    case th::ThunkKind::kGemm:
    case th::ThunkKind::kConvolution:
    case th::ThunkKind::kFft:
    case th::ThunkKind::kTriangularSolve:
    case th::ThunkKind::kCopy:
    case th::ThunkKind::kMemset:
      return 1;
    case th::ThunkKind::kSequence: return RecordedThunks(*t.As<th::SequenceThunk>(), cond);
    case th::ThunkKind::kConditional: {
      const th::ConditionalThunk& c = *t.As<th::ConditionalThunk>();
      if (!cond || c.branches.empty()) return -1;
      std::vector<const th::SequenceThunk*> seqs;
      for (const th::SequenceThunk& b : c.branches) seqs.push_back(&b);
      return RecordedSum(seqs, cond);
    }
    case th::ThunkKind::kWhile: {
      const th::WhileThunk& w = *t.As<th::WhileThunk>();
      // The condition is recorded twice: before the node and in its body.
      if (!w.trip_count) return cond ? RecordedSum({&w.condition, &w.condition, &w.body}, cond) : -1;
      if (*w.trip_count < 0) return -1;
      int64_t body = RecordedThunks(w.body, cond);
      if (body < 0) return -1;
      if (body > 0 && *w.trip_count > kMaxUnrolledRecordedThunks / body) return -1;
      return body * *w.trip_count;
    }
    default: return -1;
  }
}

int64_t RecordedThunks(const th::SequenceThunk& seq, bool cond) {
  int64_t total = 0;
  for (const th::Thunk& t : seq.thunks) {
    int64_t n = RecordedThunks(t, cond);
    if (n < 0) return -1;
    total += n;
    if (total > kMaxUnrolledRecordedThunks) return -1;
  }
  return total;
}

}  // namespace

bool IsRecordable(const th::Thunk& thunk, bool conditional_nodes) {
  return RecordedThunks(thunk, conditional_nodes) >= 0;
}

bool RecordsConditionalNode(const th::Thunk& thunk) {
  switch (thunk.kind()) {
    case th::ThunkKind::kConditional: return true;
    case th::ThunkKind::kWhile: {
      const th::WhileThunk& w = *thunk.As<th::WhileThunk>();
      if (!w.trip_count) return true;
      for (const th::Thunk& t : w.body.thunks) {
        if (RecordsConditionalNode(t)) return true;
      }
      return false;
    }
    case th::ThunkKind::kSequence:
      for (const th::Thunk& t : thunk.As<th::SequenceThunk>()->thunks) {
        if (RecordsConditionalNode(t)) return true;
      }
      return false;
    default: return false;
  }
}

CommandSegments::CommandSegments(const th::ThunkProgram& program, bool conditional_nodes) {
  Plan(program.root, conditional_nodes);
}

void CommandSegments::Plan(const th::SequenceThunk& seq, bool cond) {
  std::vector<CommandSegment>& out = segments_[&seq];
  size_t i = 0;
  while (i < seq.thunks.size()) {
    if (!IsRecordable(seq.thunks[i], cond)) {
      // Not recorded: its own sequences are issued one by one, so they get
      // segments of their own.
      for (const th::SequenceThunk* child : th::ChildSequences(seq.thunks[i])) Plan(*child, cond);
      ++i;
      continue;
    }
    size_t begin = i;
    while (i < seq.thunks.size() && IsRecordable(seq.thunks[i], cond)) ++i;
    out.push_back({begin, i});
    ++count_;
  }
}

const std::vector<CommandSegment>& CommandSegments::For(const th::SequenceThunk& seq) const {
  static const std::vector<CommandSegment> kNone;
  auto it = segments_.find(&seq);
  return it == segments_.end() ? kNone : it->second;
}

}  // namespace kiln::runtime
