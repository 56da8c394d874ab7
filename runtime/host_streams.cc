// Host multi-stream execution; see host_streams.h.
#include "runtime/host_streams.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

// The shared state of one execution's streams, guarded by mu_.
class StreamScheduler {
 public:
  StreamScheduler(const th::ThunkProgram& program, const PreparedSequence& prepared)
      : root_(program.root),
        prepared_(prepared),
        streams_(static_cast<size_t>(program.num_streams)),
        recorded_(static_cast<size_t>(program.num_events), false) {
    for (size_t i = 0; i < root_.thunks.size(); ++i)
      streams_[static_cast<size_t>(root_.thunks[i].stream)].thunks.push_back(i);
    for (const Stream& s : streams_) unfinished_ += !s.thunks.empty();
  }

  // One worker: runs streams with `ctx` (its own copy) until every stream
  // has finished or one failed.
  void Work(ExecutionContext& ctx) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (!error_.ok() || unfinished_ == 0) return;
      Stream* stream = TakeRunnable();
      if (!stream) {
        // Another worker holds a stream and runs it: it notifies when it
        // records an event, lets go of its stream or fails.
        cv_.wait(lock);
        continue;
      }
      RunStream(*stream, ctx, lock);
    }
  }

  Status status() const { return error_; }

 private:
  struct Stream {
    std::vector<size_t> thunks;  // indices into the root sequence
    size_t next = 0;
    bool taken = false;  // a worker runs it
  };

  bool Ready(const th::Thunk& t) const {
    return std::all_of(t.wait_events.begin(), t.wait_events.end(),
                       [&](int32_t e) { return recorded_[static_cast<size_t>(e)]; });
  }

  Stream* TakeRunnable() {
    for (Stream& s : streams_) {
      if (s.taken || s.next == s.thunks.size() || !Ready(root_.thunks[s.thunks[s.next]])) continue;
      s.taken = true;
      return &s;
    }
    return nullptr;
  }

  // Runs `stream`'s thunks (lock released meanwhile) until it ends, its
  // next thunk must wait, or a thunk fails; then lets go of it.
  void RunStream(Stream& stream, ExecutionContext& ctx, std::unique_lock<std::mutex>& lock) {
    for (;;) {
      const size_t i = stream.thunks[stream.next];
      const th::Thunk& t = root_.thunks[i];
      ctx.program_stream = t.stream;
      lock.unlock();
      Status s = ExecuteThunk(root_, prepared_, i, ctx);
      lock.lock();
      if (!s.ok()) {
        if (error_.ok()) error_ = std::move(s);
        break;
      }
      if (t.record_event >= 0) recorded_[static_cast<size_t>(t.record_event)] = true;
      if (++stream.next == stream.thunks.size()) {
        --unfinished_;
        break;
      }
      if (!error_.ok() || !Ready(root_.thunks[stream.thunks[stream.next]])) break;
      if (t.record_event >= 0) cv_.notify_all();  // a waiting worker may run now
    }
    stream.taken = false;
    cv_.notify_all();
  }

  const th::SequenceThunk& root_;
  const PreparedSequence& prepared_;  // root_'s prepared kernels
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Stream> streams_;
  std::vector<bool> recorded_;  // by event
  int unfinished_ = 0;          // streams with thunks left
  Status error_ = Status::Ok();
};

// Appends the workers' profile entries to `profile` in start order.
void MergeProfiles(std::vector<ExecutionProfile>& parts, ExecutionProfile& profile) {
  size_t first = profile.thunks.size();
  for (ExecutionProfile& part : parts)
    for (ThunkProfileEntry& e : part.thunks) profile.thunks.push_back(std::move(e));
  // A control-flow thunk ends after its children, which it encloses, so
  // ordering by end keeps each worker's children-first order.
  std::stable_sort(profile.thunks.begin() + static_cast<std::ptrdiff_t>(first), profile.thunks.end(),
                   [](const ThunkProfileEntry& a, const ThunkProfileEntry& b) {
                     return a.start + a.duration < b.start + b.duration;
                   });
}

}  // namespace

Status ExecuteStreams(const th::ThunkProgram& program, const PreparedSequence& prepared, ExecutionContext& ctx) {
  StreamScheduler scheduler(program, prepared);
  int threads = ctx.pool ? ctx.pool->num_threads() : 1;
  const int workers = std::max(1, std::min(program.num_streams, threads));
  std::vector<ExecutionContext> contexts(static_cast<size_t>(workers), ctx);
  std::vector<ExecutionProfile> profiles(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    if (ctx.profile) contexts[static_cast<size_t>(w)].profile = &profiles[static_cast<size_t>(w)];
  }
  auto work = [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) scheduler.Work(contexts[static_cast<size_t>(w)]);
  };
  if (workers == 1) {
    work(0, 1);
  } else {
    ctx.pool->ParallelFor(workers, work);
  }
  if (ctx.profile) MergeProfiles(profiles, *ctx.profile);
  return scheduler.status();
}

}  // namespace kiln::runtime
