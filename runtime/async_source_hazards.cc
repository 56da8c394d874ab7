// Async starts whose sources compute may touch before their done; see
// async_source_hazards.h.
#include "runtime/async_source_hazards.h"

#include "runtime/collective_common.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

// The sources of a collective that are not their own destinations.
std::vector<th::BufferSlice> ExposedSources(const th::Thunk& start) {
  std::vector<th::CollectiveBuffer> buffers = CollectiveBuffersOf(start);
  if (const auto* permute = start.As<th::CollectivePermuteThunk>()) buffers.push_back(permute->buffer);
  std::vector<th::BufferSlice> out;
  for (const th::CollectiveBuffer& b : buffers)
    if (b.source.size > 0 && !(b.source == b.destination)) out.push_back(b.source);
  return out;
}

bool Touches(const th::Thunk& thunk, const std::vector<th::BufferSlice>& sources) {
  bool touched = false;
  auto check = [&](const th::Thunk& t) {
    for (const th::BufferSlice& s : th::DirectSlices(t))
      for (const th::BufferSlice& source : sources) touched = touched || s.Overlaps(source);
  };
  check(thunk);
  for (const th::SequenceThunk* child : th::ChildSequences(thunk))
    th::ForEachThunk(*child, [&](const th::Thunk& t, int) { check(t); });
  return touched;
}

// The starts of `seq` (not below it) that need a snapshot, into `out`.
void Scan(const th::SequenceThunk& seq, bool always, std::set<int64_t>& out) {
  for (size_t i = 0; i < seq.thunks.size(); ++i) {
    const th::CollectiveConfig* config = th::CollectiveConfigOf(seq.thunks[i]);
    if (!config || !config->async_id) continue;
    const int64_t id = *config->async_id;
    const std::vector<th::BufferSlice> sources = ExposedSources(seq.thunks[i]);
    if (sources.empty()) continue;
    bool needed = always, done = false;
    for (size_t j = i + 1; j < seq.thunks.size() && !needed && !done; ++j) {
      const auto* d = seq.thunks[j].As<th::CollectiveDoneThunk>();
      done = d && d->async_id == id;
      if (!done) needed = Touches(seq.thunks[j], sources);
    }
    if (needed || !done) out.insert(id);
  }
}

}  // namespace

std::set<int64_t> AsyncStartsNeedingSnapshots(const th::ThunkProgram& program) {
  std::set<int64_t> out;
  const bool always = program.num_streams > 1;
  Scan(program.root, always, out);
  th::ForEachThunk(program.root, [&](const th::Thunk& t, int) {
    for (const th::SequenceThunk* child : th::ChildSequences(t)) Scan(*child, always, out);
  });
  return out;
}

}  // namespace kiln::runtime
