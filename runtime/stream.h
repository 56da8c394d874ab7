// Stream: an ordered queue of host work run by one worker thread (or, when
// idle, by a synchronous caller), and the shared state behind Event.
// Internal to the runtime.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "runtime/runtime.h"

namespace kiln::runtime {

struct Event::State {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<StatusOr<ExecutionResult>> result;

  void Complete(StatusOr<ExecutionResult> r) {
    {
      std::lock_guard<std::mutex> lock(mu);
      result.emplace(std::move(r));
    }
    cv.notify_all();
  }
};

class Stream {
 public:
  Stream();
  ~Stream();  // drains the queue, then joins the worker
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Runs `work` after everything enqueued before it.
  void Enqueue(std::function<void()> work);

  // Runs `work` on the calling thread, as the stream's next item, when the
  // stream is idle (nothing queued or running) and returns true; returns
  // false at once, without running it, when the stream is busy. Work
  // enqueued meanwhile waits for it, so the stream's items still run one at
  // a time and in order. A synchronous caller saves the hand-over to the
  // worker and the wake-up back (microseconds, most of a small program's
  // time).
  bool TryRunHere(const std::function<void()>& work);

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool running_ = false;  // an item runs, on the worker or a TryRunHere caller
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace kiln::runtime
