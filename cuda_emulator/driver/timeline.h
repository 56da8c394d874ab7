// Streams and events of the emulated device: a modeled clock per stream and
// the counters of the launches issued on it.
//
// Every operation runs to completion when it is enqueued, which is one valid
// execution of stream order, so streams hold no queue. What they hold is a
// timeline: each launch, copy or memset advances its stream's clock by its
// modeled duration (the H100 timing model, docs/gpu_timing_model.md: a
// launch by its counters' model_ns, a copy or memset by
// model::TransferSeconds) and each launch appends its counters. An event records a stream's clock and launch index; the
// difference of two events is the elapsed time cuEventElapsedTime returns
// and the launch range kilnEmuEventCounters sums.
//
// Every stream's clock counts only its own stream's work (streams are
// independent queues on a GPU, and the model gives each the whole device:
// work on two streams overlaps completely, the most concurrency could
// gain), so the time between events recorded on two different streams
// compares two such clocks. cuStreamWaitEvent moves the waiting stream's
// clock up to the event's: work after the wait starts when the work before
// the record has finished. A stream forked from another by such a wait
// therefore shares its time base, and two streams' independent work
// overlaps in modeled time although the emulator runs it one after the
// other. A graph launch gives each lane of the graph a clock of its own
// the same way (graphs.h).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "cuda_emulator/include/kiln_cuda_emulator.h"

namespace kiln::emu::driver {

class StreamTimeline : public std::enable_shared_from_this<StreamTimeline> {
 public:
  // A kernel launch or library call: the clock advances by its modeled
  // time, counters.model_ns.
  void AddLaunch(const KilnEmuCounters& counters);
  // A library double's call: one launch of the modeled and optimal times
  // (seconds) of its call model.
  void AddLibraryCall(double model_seconds, double optimal_seconds);
  // A copy or memset.
  void Advance(double duration_us);
  // The stream's clock, and moving it forward to `clock_us` (a collective
  // starts when its last rank arrives; earlier clocks wait for it).
  double clock_us();
  void AdvanceTo(double clock_us);

  // What an event records.
  struct Mark {
    double clock_us = 0;
    uint64_t launch_index = 0;  // launches issued before the mark
  };
  // The current mark, which the stream keeps the launches after until
  // Unpin (events pin the launches they may be asked to sum).
  Mark PinCurrent();
  void Unpin(uint64_t launch_index);
  // Sum of launches [begin, end); both must be pinned.
  KilnEmuCounters Sum(uint64_t begin, uint64_t end);

 private:
  void DropUnpinned();  // under mu_

  std::mutex mu_;
  double clock_us_ = 0;
  uint64_t launch_count_ = 0;
  // Launches [first_kept_, launch_count_); older ones no event can ask for.
  std::deque<KilnEmuCounters> kept_;
  uint64_t first_kept_ = 0;
  std::multiset<uint64_t> pins_;
};

// The live streams and events; handles are the objects' addresses.
class Timeline {
 public:
  Timeline();

  CUresult CreateStream(unsigned flags, CUstream* out);
  CUresult DestroyStream(CUstream stream);
  // The stream's timeline (the default stream's for 0, CU_STREAM_LEGACY
  // and CU_STREAM_PER_THREAD), or nullptr when `stream` is not live.
  std::shared_ptr<StreamTimeline> Find(CUstream stream);

  CUresult CreateEvent(unsigned flags, CUevent* out);
  CUresult DestroyEvent(CUevent event);
  CUresult Record(CUevent event, CUstream stream);
  // The same on a timeline (a graph launch's lane, which no stream owns).
  CUresult RecordOn(CUevent event, StreamTimeline& timeline);
  // cuStreamWaitEvent outside a capture: the stream's clock moves up to
  // the event's (an event never recorded is complete: no change).
  CUresult Wait(CUstream stream, CUevent event);
  // Whether the event was last recorded inside a stream capture.
  bool InCapture(CUevent event);
  // cuEventRecord on a capturing stream: the event only orders work inside
  // the capture, so it has no time until recorded outside one again.
  CUresult RecordInCapture(CUevent event);
  CUresult CheckEvent(CUevent event);  // CUDA_SUCCESS when live
  CUresult ElapsedMs(CUevent start, CUevent end, float* ms);
  CUresult CountersBetween(CUevent start, CUevent end, KilnEmuCounters* out);

  // Destroys every stream and event (context destruction).
  void Clear();
  // Live streams made by cuStreamCreate (the default stream not counted)
  // and live events.
  uint64_t stream_count();
  uint64_t event_count();

 private:
  struct Event {
    unsigned flags = 0;
    std::shared_ptr<StreamTimeline> stream;  // null until recorded
    StreamTimeline::Mark mark;
    bool in_capture = false;  // last recorded inside a stream capture
  };
  // Both events live and recorded, or the error to return.
  CUresult RecordedPair(CUevent start, CUevent end, Event** a, Event** b);

  std::mutex mu_;
  std::shared_ptr<StreamTimeline> default_stream_;
  std::map<CUstream, std::shared_ptr<StreamTimeline>> streams_;
  std::map<CUevent, std::unique_ptr<Event>> events_;
};

}  // namespace kiln::emu::driver
