// ThreadPool; see thread_pool.h.
#include "runtime/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

namespace kiln::runtime {

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  for (;;) {
    uint64_t generation;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      generation = seen = generation_;
    }
    RunChunks(generation);
  }
}

void ThreadPool::RunChunks(uint64_t generation) {
  std::unique_lock<std::mutex> lock(mu_);
  // The generation check keeps a worker that woke late from claiming a
  // chunk of a later loop with this loop's function.
  while (generation_ == generation && next_chunk_ < chunks_) {
    int64_t c = next_chunk_++;
    const auto* fn = fn_;
    int64_t begin = n_ * c / chunks_, end = n_ * (c + 1) / chunks_;
    lock.unlock();
    (*fn)(begin, end);
    lock.lock();
    if (--unfinished_ == 0) done_cv_.notify_all();
  }
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  int64_t chunks = std::min<int64_t>(n, num_threads());
  const bool nested = owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  std::unique_lock<std::mutex> busy(busy_, std::defer_lock);
  if (chunks <= 1 || nested || !busy.try_lock()) {
    if (n > 0) fn(0, n);
    return;
  }
  owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunks_ = chunks;
    next_chunk_ = 0;
    unfinished_ = chunks;
    generation = ++generation_;
  }
  work_cv_.notify_all();
  RunChunks(generation);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return unfinished_ == 0; });
  fn_ = nullptr;
  owner_.store(std::thread::id(), std::memory_order_relaxed);
}

std::shared_ptr<ThreadPool> SharedThreadPool(int num_threads) {
  static std::mutex mu;
  // One pool per thread count, for callers that change KILN_HOST_THREADS
  // between devices (tests).
  static std::map<int, std::weak_ptr<ThreadPool>> pools;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<ThreadPool> pool = pools[num_threads].lock();
  if (!pool) {
    pool = std::make_shared<ThreadPool>(num_threads);
    pools[num_threads] = pool;
  }
  return pool;
}

int HostThreadCount() {
  if (const char* env = std::getenv("KILN_HOST_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1) return static_cast<int>(std::min<long>(v, 1024));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace kiln::runtime
