// Stream and event validation and text; see streams.h.
#include "thunks/streams.h"

#include <string>
#include <vector>

namespace kiln::thunks {
namespace {

std::string EventList(const std::vector<int32_t>& events) {
  std::string out;
  for (size_t i = 0; i < events.size(); ++i) out += (i ? ",e" : "e") + std::to_string(events[i]);
  return out;
}

bool HasEffectsBeyondSlices(ThunkKind kind) {
  return IsCollective(kind) || kind == ThunkKind::kCollectiveDone || kind == ThunkKind::kCustomCall ||
         kind == ThunkKind::kRngGetAndUpdateState || kind == ThunkKind::kDeviceId;
}

bool HasStreamFields(const Thunk& thunk) {
  return thunk.stream != 0 || !thunk.wait_events.empty() || thunk.record_event != -1;
}

// Nested thunks run on their parent's stream: they carry no stream fields.
Status CheckNested(const SequenceThunk& root) {
  Status status = Status::Ok();
  for (const Thunk& top : root.thunks) {
    for (const SequenceThunk* child : ChildSequences(top)) {
      ForEachThunk(*child, [&](const Thunk& t, int) {
        if (status.ok() && HasStreamFields(t)) {
          status = Error("nested thunk '" + t.info.profile_name + "' has a stream or events");
        }
      });
    }
  }
  return status;
}

}  // namespace

bool RunsOnStreamZero(const Thunk& thunk) {
  bool pinned = HasEffectsBeyondSlices(thunk.kind());
  for (const SequenceThunk* child : ChildSequences(thunk)) {
    ForEachThunk(*child, [&](const Thunk& t, int) { pinned = pinned || HasEffectsBeyondSlices(t.kind()); });
  }
  return pinned;
}

Status ValidateStreams(const ThunkProgram& program) {
  const int64_t size = static_cast<int64_t>(program.root.thunks.size());
  if (program.num_streams < 1 || program.num_streams > kMaxStreams) {
    return Error("num_streams " + std::to_string(program.num_streams) + " is outside [1, " +
                 std::to_string(kMaxStreams) + "]");
  }
  if (program.num_events < 0 || program.num_events > size) {
    return Error("num_events " + std::to_string(program.num_events) + " is outside [0, " +
                 std::to_string(size) + "] (one per root thunk at most)");
  }
  std::vector<bool> recorded(static_cast<size_t>(program.num_events), false);
  for (int64_t i = 0; i < size; ++i) {
    const Thunk& t = program.root.thunks[static_cast<size_t>(i)];
    const std::string what = "root thunk " + std::to_string(i) + " '" + t.info.profile_name + "'";
    if (t.stream < 0 || t.stream >= program.num_streams) {
      return Error(what + ": stream " + std::to_string(t.stream) + " is outside [0, " +
                   std::to_string(program.num_streams) + ")");
    }
    if (t.stream != 0 && RunsOnStreamZero(t)) {
      return Error(what + ": a " + std::string(ThunkKindName(t.kind())) + " thunk must run on stream 0");
    }
    for (int32_t e : t.wait_events) {
      // Recorded by an earlier thunk: waits never form a cycle, and the
      // root run in order satisfies them all.
      if (e < 0 || e >= program.num_events || !recorded[static_cast<size_t>(e)]) {
        return Error(what + ": waits for event " + std::to_string(e) +
                     ", which no earlier root thunk records");
      }
    }
    if (t.record_event == -1) continue;
    if (t.record_event < 0 || t.record_event >= program.num_events) {
      return Error(what + ": records event " + std::to_string(t.record_event) + ", outside [0, " +
                   std::to_string(program.num_events) + ")");
    }
    if (recorded[static_cast<size_t>(t.record_event)]) {
      return Error(what + ": records event " + std::to_string(t.record_event) + " a second time");
    }
    recorded[static_cast<size_t>(t.record_event)] = true;
  }
  return CheckNested(program.root);
}

std::string StreamSummary(const ThunkProgram& program) {
  return "streams " + std::to_string(program.num_streams) + ", events " + std::to_string(program.num_events);
}

std::string StreamAnnotation(const Thunk& thunk) {
  if (!HasStreamFields(thunk)) return "";
  std::string out = " stream " + std::to_string(thunk.stream);
  if (!thunk.wait_events.empty()) out += " wait " + EventList(thunk.wait_events);
  if (thunk.record_event != -1) out += " record e" + std::to_string(thunk.record_event);
  return out;
}

}  // namespace kiln::thunks
