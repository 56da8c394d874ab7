// ThreadPool: a fixed set of worker threads that runs one data-parallel
// loop at a time, for splitting a host kernel's units across cores. The
// calling thread works too (a pool of N threads spawns N-1 workers), so a
// pool of one thread spawns nothing and runs everything inline. Workers
// are started once and joined by the destructor; between loops they sleep
// on a condition variable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::runtime {

class ThreadPool {
 public:
  // `num_threads` >= 1 counts the caller.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Splits [0, n) into min(n, num_threads()) contiguous chunks of nearly
  // equal size and calls fn(begin, end) once per chunk, in parallel (the
  // caller takes a chunk); returns when all calls have returned. A second
  // ParallelFor while one is running (another thread's, or one that `fn`
  // itself makes, as a stream of a multi-stream program running a kernel
  // does) runs inline.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop();
  // Claims and runs chunks of loop `generation` until none is left.
  void RunChunks(uint64_t generation);

  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the ParallelFor that owns the workers
  // The thread holding busy_ (a default id: none), so that a ParallelFor
  // nested in its own chunk runs inline instead of locking busy_ again.
  std::atomic<std::thread::id> owner_{};
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  // The current loop, guarded by mu_.
  uint64_t generation_ = 0;
  bool stop_ = false;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunks_ = 0;
  int64_t next_chunk_ = 0;
  int64_t unfinished_ = 0;
};

// The host thread count: $KILN_HOST_THREADS when it is a positive integer,
// else std::thread::hardware_concurrency() (at least 1).
int HostThreadCount();

// The process-wide pool of `num_threads` threads, shared by every host
// device (so that N devices do not start N pools of a thread per core);
// created on first use and ended when its last user lets go. A second
// device's ParallelFor while another's runs takes no workers: it runs on
// its own stream's thread.
std::shared_ptr<ThreadPool> SharedThreadPool(int num_threads);

}  // namespace kiln::runtime
