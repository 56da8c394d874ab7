// Stream: an ordered queue of host work run by one worker thread, and the
// shared state behind Event. Internal to the runtime.
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

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace kiln::runtime
