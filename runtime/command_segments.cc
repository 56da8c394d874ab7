// The recordable segments of a thunk program; see command_segments.h.
#include "runtime/command_segments.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

// Thunks issued when `seq` runs once, loops unrolled; -1 when not
// recordable.
int64_t RecordedThunks(const th::SequenceThunk& seq);

int64_t RecordedThunks(const th::Thunk& t) {
  switch (t.kind()) {
    case th::ThunkKind::kKernel:
    case th::ThunkKind::kGemm:
    case th::ThunkKind::kConvolution:
    case th::ThunkKind::kFft:
    case th::ThunkKind::kTriangularSolve:
    case th::ThunkKind::kCopy:
    case th::ThunkKind::kMemset:
      return 1;
    case th::ThunkKind::kSequence: return RecordedThunks(*t.As<th::SequenceThunk>());
    case th::ThunkKind::kWhile: {
      const th::WhileThunk& w = *t.As<th::WhileThunk>();
      if (!w.trip_count || *w.trip_count < 0) return -1;
      int64_t body = RecordedThunks(w.body);
      if (body < 0) return -1;
      if (body > 0 && *w.trip_count > kMaxUnrolledRecordedThunks / body) return -1;
      return body * *w.trip_count;
    }
    default: return -1;
  }
}

int64_t RecordedThunks(const th::SequenceThunk& seq) {
  int64_t total = 0;
  for (const th::Thunk& t : seq.thunks) {
    int64_t n = RecordedThunks(t);
    if (n < 0) return -1;
    total += n;
    if (total > kMaxUnrolledRecordedThunks) return -1;
  }
  return total;
}

}  // namespace

bool IsRecordable(const th::Thunk& thunk) { return RecordedThunks(thunk) >= 0; }

CommandSegments::CommandSegments(const th::ThunkProgram& program) { Plan(program.root); }

void CommandSegments::Plan(const th::SequenceThunk& seq) {
  std::vector<CommandSegment>& out = segments_[&seq];
  size_t i = 0;
  while (i < seq.thunks.size()) {
    if (!IsRecordable(seq.thunks[i])) {
      // Not recorded: its own sequences are issued one by one, so they get
      // segments of their own.
      for (const th::SequenceThunk* child : th::ChildSequences(seq.thunks[i])) Plan(*child);
      ++i;
      continue;
    }
    size_t begin = i;
    while (i < seq.thunks.size() && IsRecordable(seq.thunks[i])) ++i;
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
