// Stream clocks, launch counters and events; see timeline.h.
#include "cuda_emulator/driver/timeline.h"

#include <algorithm>
#include <cmath>

#include "cuda_emulator/driver/driver_errors.h"

namespace kiln::emu::driver {

void StreamTimeline::AddLaunch(const KilnEmuCounters& counters) {
  std::lock_guard<std::mutex> lock(mu_);
  clock_us_ += static_cast<double>(counters.model_ns) / 1000.0;
  kept_.push_back(counters);
  ++launch_count_;
  DropUnpinned();
}

void StreamTimeline::AddLibraryCall(double model_seconds, double optimal_seconds) {
  KilnEmuCounters counters{};
  counters.launches = 1;
  counters.model_ns = static_cast<uint64_t>(std::llround(model_seconds * 1e9));
  counters.optimal_ns = static_cast<uint64_t>(std::llround(optimal_seconds * 1e9));
  AddLaunch(counters);
}

void StreamTimeline::Advance(double duration_us) {
  std::lock_guard<std::mutex> lock(mu_);
  clock_us_ += duration_us;
}

double StreamTimeline::clock_us() {
  std::lock_guard<std::mutex> lock(mu_);
  return clock_us_;
}

void StreamTimeline::AdvanceTo(double clock_us) {
  std::lock_guard<std::mutex> lock(mu_);
  clock_us_ = std::max(clock_us_, clock_us);
}

StreamTimeline::Mark StreamTimeline::PinCurrent() {
  std::lock_guard<std::mutex> lock(mu_);
  pins_.insert(launch_count_);
  return Mark{clock_us_, launch_count_};
}

void StreamTimeline::Unpin(uint64_t launch_index) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pins_.find(launch_index);
  if (it != pins_.end()) pins_.erase(it);
  DropUnpinned();
}

void StreamTimeline::DropUnpinned() {
  // Events recorded from now on pin launch_count_ or later, so launches
  // before the oldest pin can never be asked for again.
  uint64_t keep_from = pins_.empty() ? launch_count_ : *pins_.begin();
  while (first_kept_ < keep_from && !kept_.empty()) {
    kept_.pop_front();
    ++first_kept_;
  }
}

KilnEmuCounters StreamTimeline::Sum(uint64_t begin, uint64_t end) {
  std::lock_guard<std::mutex> lock(mu_);
  KilnEmuCounters sum{};
  for (uint64_t i = std::max(begin, first_kept_); i < end && i - first_kept_ < kept_.size(); ++i) {
    kilnEmuAddCounters(&sum, &kept_[i - first_kept_]);
  }
  return sum;
}

Timeline::Timeline() : default_stream_(std::make_shared<StreamTimeline>()) {}

CUresult Timeline::CreateStream(unsigned flags, CUstream* out) {
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate: the stream pointer is null");
  if (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate: unknown flags " + std::to_string(flags));
  }
  auto stream = std::make_shared<StreamTimeline>();
  CUstream handle = reinterpret_cast<CUstream>(stream.get());
  std::lock_guard<std::mutex> lock(mu_);
  streams_[handle] = std::move(stream);
  *out = handle;
  return CUDA_SUCCESS;
}

CUresult Timeline::DestroyStream(CUstream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  // Events recorded on it keep its timeline alive for elapsed times.
  if (streams_.erase(stream) == 0) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy: not a stream created by cuStreamCreate");
  }
  return CUDA_SUCCESS;
}

std::shared_ptr<StreamTimeline> Timeline::Find(CUstream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) {
    return default_stream_;
  }
  auto it = streams_.find(stream);
  return it == streams_.end() ? nullptr : it->second;
}

CUresult Timeline::CreateEvent(unsigned flags, CUevent* out) {
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "cuEventCreate: the event pointer is null");
  unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING;
  if (flags & CU_EVENT_INTERPROCESS) {
    return Fail(CUDA_ERROR_NOT_SUPPORTED, "cuEventCreate: the emulator has no interprocess events");
  }
  if (flags & ~known) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuEventCreate: unknown flags " + std::to_string(flags));
  }
  auto event = std::make_unique<Event>();
  event->flags = flags;
  CUevent handle = reinterpret_cast<CUevent>(event.get());
  std::lock_guard<std::mutex> lock(mu_);
  events_[handle] = std::move(event);
  *out = handle;
  return CUDA_SUCCESS;
}

CUresult Timeline::DestroyEvent(CUevent event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy: not an event created by cuEventCreate");
  }
  if (it->second->stream) it->second->stream->Unpin(it->second->mark.launch_index);
  events_.erase(it);
  return CUDA_SUCCESS;
}

CUresult Timeline::Record(CUevent event, CUstream stream) {
  std::shared_ptr<StreamTimeline> timeline = Find(stream);
  if (!timeline) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord: not a live stream");
  return RecordOn(event, *timeline);
}

CUresult Timeline::RecordOn(CUevent event, StreamTimeline& timeline) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord: not an event created by cuEventCreate");
  }
  Event& e = *it->second;
  if (e.stream) e.stream->Unpin(e.mark.launch_index);
  e.mark = timeline.PinCurrent();
  e.stream = timeline.shared_from_this();
  e.in_capture = false;
  return CUDA_SUCCESS;
}

CUresult Timeline::Wait(CUstream stream, CUevent event) {
  std::shared_ptr<StreamTimeline> timeline = Find(stream);
  if (!timeline) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamWaitEvent: not a live stream");
  double clock_us = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = events_.find(event);
    if (it == events_.end()) {
      return Fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamWaitEvent: not an event created by cuEventCreate");
    }
    if (!it->second->stream) return CUDA_SUCCESS;
    clock_us = it->second->mark.clock_us;
  }
  timeline->AdvanceTo(clock_us);
  return CUDA_SUCCESS;
}

bool Timeline::InCapture(CUevent event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  return it != events_.end() && it->second->in_capture;
}

CUresult Timeline::RecordInCapture(CUevent event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord: not an event created by cuEventCreate");
  }
  it->second->in_capture = true;
  return CUDA_SUCCESS;
}

namespace {

const char kInCapture[] =
    "the event was last recorded inside a stream capture (record it with CU_EVENT_RECORD_EXTERNAL to get an event "
    "record node)";

}  // namespace

CUresult Timeline::CheckEvent(CUevent event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) return Fail(CUDA_ERROR_INVALID_HANDLE, "not an event created by cuEventCreate");
  if (it->second->in_capture) return Fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, kInCapture);
  return CUDA_SUCCESS;
}

CUresult Timeline::RecordedPair(CUevent start, CUevent end, Event** a, Event** b) {
  auto s = events_.find(start), e = events_.find(end);
  if (s == events_.end() || e == events_.end()) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "not an event created by cuEventCreate");
  }
  if (s->second->in_capture || e->second->in_capture) return Fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, kInCapture);
  if (!s->second->stream || !e->second->stream) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "the event was never recorded (cuEventRecord)");
  }
  *a = s->second.get();
  *b = e->second.get();
  return CUDA_SUCCESS;
}

CUresult Timeline::ElapsedMs(CUevent start, CUevent end, float* ms) {
  if (!ms) return Fail(CUDA_ERROR_INVALID_VALUE, "cuEventElapsedTime: the result pointer is null");
  std::lock_guard<std::mutex> lock(mu_);
  Event *a = nullptr, *b = nullptr;
  if (CUresult r = RecordedPair(start, end, &a, &b); r != CUDA_SUCCESS) return r;
  if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "the event was created with CU_EVENT_DISABLE_TIMING");
  }
  *ms = static_cast<float>((b->mark.clock_us - a->mark.clock_us) / 1000.0);
  return CUDA_SUCCESS;
}

CUresult Timeline::CountersBetween(CUevent start, CUevent end, KilnEmuCounters* out) {
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "kilnEmuEventCounters: the result pointer is null");
  std::lock_guard<std::mutex> lock(mu_);
  Event *a = nullptr, *b = nullptr;
  if (CUresult r = RecordedPair(start, end, &a, &b); r != CUDA_SUCCESS) return r;
  if (a->stream != b->stream) {
    return Fail(CUDA_ERROR_INVALID_VALUE,
                "kilnEmuEventCounters: the events were recorded on different streams");
  }
  if (b->mark.launch_index < a->mark.launch_index) {
    return Fail(CUDA_ERROR_INVALID_VALUE,
                "kilnEmuEventCounters: the end event was recorded before the start event");
  }
  *out = a->stream->Sum(a->mark.launch_index, b->mark.launch_index);
  return CUDA_SUCCESS;
}

uint64_t Timeline::stream_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_.size();
}

uint64_t Timeline::event_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return events_.size();
}

void Timeline::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  events_.clear();
  streams_.clear();
  default_stream_ = std::make_shared<StreamTimeline>();
}

}  // namespace kiln::emu::driver
