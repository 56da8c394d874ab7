// ThreadPool; see thread_pool.h.
#include "cuda_emulator/exec/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace kiln::emu {

namespace {
// Chunks per thread: small enough that a thread left with expensive blocks
// is helped, large enough that claiming stays rare for tiny blocks.
constexpr int64_t kChunksPerThread = 16;
constexpr int kMaxThreads = 1024;
}  // namespace

ThreadPool::ThreadPool(int threads) {
  threads = std::clamp(threads, 1, kMaxThreads);
  for (int w = 1; w < threads; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::WorkerLoop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunShare(worker);
    std::lock_guard<std::mutex> lock(mu_);
    // The caller waits for every worker, so no worker can still be in this
    // loop when the next one is published.
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

void ThreadPool::RunShare(int worker) {
  for (;;) {
    int64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (begin >= n_) return;
    int64_t end = std::min(n_, begin + chunk_);
    for (int64_t i = begin; i < end; ++i) (*fn_)(i, worker);
  }
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int)>& fn) {
  if (n <= 0) return;
  std::lock_guard<std::mutex> loop(loop_mu_);
  if (workers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = std::max<int64_t>(1, n / (size() * kChunksPerThread));
    next_.store(0, std::memory_order_relaxed);
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  work_cv_.notify_all();
  RunShare(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  fn_ = nullptr;
}

StatusOr<int> EmulatorThreadCount() {
  const char* env = std::getenv("KILN_EMU_THREADS");
  if (!env || !*env) return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  char* end = nullptr;
  long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 1 || v > kMaxThreads) {
    return Error("KILN_EMU_THREADS must be a thread count from 1 to " + std::to_string(kMaxThreads) +
                 ", got '" + env + "'");
  }
  return static_cast<int>(v);
}

}  // namespace kiln::emu
