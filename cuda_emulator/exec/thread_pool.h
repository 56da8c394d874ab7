// ThreadPool: the emulated GPU's "SMs": host threads that run a grid's
// blocks. A launch hands the pool one loop over its blocks; workers claim
// chunks of indices dynamically (blocks differ widely in cost: divergent
// branches, early exits) and call the loop body with their worker index, so
// a launch can keep per-worker scratch state (register files, shared
// memory) without locking.
//
// The workers are started once, with the device, and sleep between loops;
// the calling thread takes part as worker 0. One loop runs at a time: a
// second caller (another thread's launch) waits for the first loop to end,
// so worker indices are never shared between two loops. The loop body must
// not call ParallelFor itself.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/status.h"

namespace kiln::emu {

class ThreadPool {
 public:
  // `threads` >= 1 counts the caller (so 1 runs everything inline).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Calls fn(i, worker) once for every i in [0, n), worker in [0, size());
  // returns when every call returned.
  void ParallelFor(int64_t n, const std::function<void(int64_t index, int worker)>& fn);

  int size() const { return static_cast<int>(workers_.size()) + 1; }

 private:
  void WorkerLoop(int worker);
  // Claims chunks of the current loop until none is left.
  void RunShare(int worker);

  std::vector<std::thread> workers_;
  std::mutex loop_mu_;  // held by the ParallelFor that owns the workers
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  // The current loop; written under mu_ before workers are woken.
  uint64_t generation_ = 0;
  bool stop_ = false;
  const std::function<void(int64_t, int)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 1;
  std::atomic<int64_t> next_{0};
  int pending_ = 0;  // workers (not the caller) still in the current loop
};

// $KILN_EMU_THREADS when set (a positive integer, else an error naming the
// variable), else std::thread::hardware_concurrency() (at least 1).
StatusOr<int> EmulatorThreadCount();

}  // namespace kiln::emu
