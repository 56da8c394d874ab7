// Stream assignment; see stream_assignment.h.
#include "compiler/emitter/stream_assignment.h"

#include <algorithm>
#include <map>

#include "thunks/roofline.h"
#include "thunks/streams.h"
#include "thunks/thunk_effects.h"

namespace kiln::emitter {
namespace {

namespace th = ::kiln::thunks;

struct Access {
  th::BufferSlice slice;
  bool write = false;
};

bool IsControlFlow(th::ThunkKind kind) {
  return kind == th::ThunkKind::kSequence || kind == th::ThunkKind::kWhile ||
         kind == th::ThunkKind::kConditional;
}

void AddWrites(const th::Thunk& thunk, std::vector<Access>& out) {
  for (const th::BufferSlice& s : th::DirectSlices(thunk)) out.push_back({s, true});
}

// Reads and writes of a plain thunk; a slice it names that its effects do
// not classify (a GEMM workspace, a convolution scratch) is written.
void AddEffects(const th::Thunk& thunk, std::vector<Access>& out) {
  th::SliceEffects e = th::DirectEffects(thunk);
  for (const th::BufferSlice& s : e.reads) out.push_back({s, false});
  for (const th::BufferSlice& s : e.writes) out.push_back({s, true});
  for (const th::BufferSlice& s : th::DirectSlices(thunk)) {
    bool known = std::find(e.reads.begin(), e.reads.end(), s) != e.reads.end() ||
                 std::find(e.writes.begin(), e.writes.end(), s) != e.writes.end();
    if (!known) out.push_back({s, true});
  }
}

std::vector<Access> AccessesOf(const th::Thunk& thunk, const std::map<int64_t, const th::Thunk*>& starts) {
  std::vector<Access> out;
  if (IsControlFlow(thunk.kind())) {
    AddWrites(thunk, out);
    for (const th::SequenceThunk* child : th::ChildSequences(thunk)) {
      th::ForEachThunk(*child, [&](const th::Thunk& t, int) { AddWrites(t, out); });
    }
    return out;
  }
  if (const auto* done = thunk.As<th::CollectiveDoneThunk>()) {
    auto it = starts.find(done->async_id);
    if (it != starts.end()) AddWrites(*it->second, out);
    return out;
  }
  AddEffects(thunk, out);
  return out;
}

// The start thunks of async collectives, by async_id.
std::map<int64_t, const th::Thunk*> AsyncStarts(const th::SequenceThunk& root) {
  std::map<int64_t, const th::Thunk*> starts;
  th::ForEachThunk(root, [&](const th::Thunk& t, int) {
    const th::CollectiveConfig* config = th::CollectiveConfigOf(t);
    if (config && config->async_id) starts[*config->async_id] = &t;
  });
  return starts;
}

// The schedule's estimate of a thunk's time: its roofline bound plus a
// launch's overhead, so that thunks without a cost estimate still count.
double EstimatedSeconds(const th::Thunk& thunk, const th::RooflineTarget& target) {
  constexpr double kLaunchSeconds = 2e-6;
  return kLaunchSeconds + th::OptimalSeconds(thunk.info.cost, target, false);
}

// Picks each thunk's stream: the one where it could start earliest.
std::vector<int32_t> PlaceThunks(const th::ThunkProgram& program,
                                 const std::vector<std::vector<int32_t>>& deps, int max_streams) {
  // What an event costs the consumer, so that a thunk moves to another
  // stream only when that gains more than the synchronization.
  constexpr double kEventSeconds = 1e-6;
  const th::RooflineTarget target = th::HostRooflineTarget();
  const size_t n = program.root.thunks.size();
  std::vector<int32_t> stream(n, 0);
  std::vector<double> finish(n, 0), stream_free(static_cast<size_t>(max_streams), 0);
  for (size_t i = 0; i < n; ++i) {
    const th::Thunk& thunk = program.root.thunks[i];
    int32_t preferred = 0;  // the stream of the producer finishing last
    double latest = -1;
    for (int32_t d : deps[i]) {
      if (finish[static_cast<size_t>(d)] > latest) {
        latest = finish[static_cast<size_t>(d)];
        preferred = stream[static_cast<size_t>(d)];
      }
    }
    const int candidates = th::RunsOnStreamZero(thunk) ? 1 : max_streams;
    int32_t best = -1;
    double best_start = 0;
    for (int32_t s = 0; s < candidates; ++s) {
      double start = stream_free[static_cast<size_t>(s)];
      for (int32_t d : deps[i]) {
        double ready = finish[static_cast<size_t>(d)] + (stream[static_cast<size_t>(d)] != s ? kEventSeconds : 0);
        start = std::max(start, ready);
      }
      bool better = best < 0 || start < best_start || (start == best_start && s == preferred);
      if (better) best = s, best_start = start;
    }
    stream[i] = best;
    finish[i] = best_start + EstimatedSeconds(thunk, target);
    stream_free[static_cast<size_t>(best)] = finish[i];
  }
  return stream;
}

// Inserts the events for `deps` given each thunk's stream. clock[s][u] is
// the last position on stream u that stream s knows to have finished.
int32_t InsertEvents(th::ThunkProgram& program, const std::vector<std::vector<int32_t>>& deps,
                     int32_t num_streams, int64_t& cross_stream_dependencies) {
  std::vector<th::Thunk>& thunks = program.root.thunks;
  const size_t n = thunks.size(), k = static_cast<size_t>(num_streams);
  std::vector<int64_t> position(n);
  std::vector<int64_t> next_position(k, 0);
  std::vector<std::vector<int64_t>> clock(k, std::vector<int64_t>(k, -1));
  std::vector<std::vector<int64_t>> clock_after(n);
  int32_t events = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t s = static_cast<size_t>(thunks[i].stream);
    position[i] = next_position[s]++;
    // Per producer stream, the latest producer: waiting for it covers the
    // earlier ones (a stream runs in order).
    std::vector<int32_t> latest(k, -1);
    for (int32_t d : deps[i]) {
      const size_t u = static_cast<size_t>(thunks[static_cast<size_t>(d)].stream);
      if (u == s) continue;
      ++cross_stream_dependencies;
      latest[u] = std::max(latest[u], d);
    }
    std::vector<int32_t> producers;
    for (int32_t d : latest)
      if (d >= 0) producers.push_back(d);
    // Latest first: its producer knows the most about the other streams.
    std::sort(producers.rbegin(), producers.rend());
    for (int32_t d : producers) {
      const size_t u = static_cast<size_t>(thunks[static_cast<size_t>(d)].stream);
      if (clock[s][u] >= position[static_cast<size_t>(d)]) continue;  // known already
      th::Thunk& producer = thunks[static_cast<size_t>(d)];
      if (producer.record_event < 0) producer.record_event = events++;
      thunks[i].wait_events.push_back(producer.record_event);
      const std::vector<int64_t>& known = clock_after[static_cast<size_t>(d)];
      for (size_t v = 0; v < k; ++v) clock[s][v] = std::max(clock[s][v], known[v]);
    }
    clock[s][s] = position[i];
    clock_after[i] = clock[s];
  }
  return events;
}

}  // namespace

std::vector<std::vector<int32_t>> RootDependencies(const th::ThunkProgram& program) {
  const std::map<int64_t, const th::Thunk*> starts = AsyncStarts(program.root);
  const size_t n = program.root.thunks.size();
  std::vector<std::vector<int32_t>> deps(n);
  struct Seen {
    int32_t thunk;
    Access access;
  };
  std::map<int32_t, std::vector<Seen>> by_allocation;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Access> accesses = AccessesOf(program.root.thunks[i], starts);
    std::vector<bool> depends(i, false);
    for (const Access& a : accesses) {
      for (const Seen& seen : by_allocation[a.slice.allocation]) {
        if ((a.write || seen.access.write) && a.slice.Overlaps(seen.access.slice)) {
          depends[static_cast<size_t>(seen.thunk)] = true;
        }
      }
    }
    for (size_t d = 0; d < i; ++d)
      if (depends[d]) deps[i].push_back(static_cast<int32_t>(d));
    for (const Access& a : accesses) by_allocation[a.slice.allocation].push_back({static_cast<int32_t>(i), a});
  }
  return deps;
}

StreamAssignmentStats AssignStreams(th::ThunkProgram& program, int max_streams) {
  StreamAssignmentStats stats;
  if (max_streams <= 1 || program.root.thunks.size() < 2) return stats;
  const std::vector<std::vector<int32_t>> deps = RootDependencies(program);
  std::vector<int32_t> stream = PlaceThunks(program, deps, max_streams);
  int32_t used = 1 + *std::max_element(stream.begin(), stream.end());
  for (size_t i = 0; i < stream.size(); ++i) program.root.thunks[i].stream = stream[i];
  stats.streams = used;
  stats.events = used > 1 ? InsertEvents(program, deps, used, stats.cross_stream_dependencies) : 0;
  program.num_streams = used;
  program.num_events = stats.events;
  return stats;
}

}  // namespace kiln::emitter
