// ThreadPool: ParallelFor covers [0, n) exactly once in contiguous chunks,
// one per thread at most, runs them on distinct threads, and the pool can
// be reused and destroyed cleanly; KILN_HOST_THREADS sets the thread count;
// host devices share one process-wide pool.
#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/runtime.h"

namespace kiln::runtime {
namespace {

TEST(ThreadPool, ChunksCoverTheRangeOnce) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.num_threads(), 3);
  for (int64_t n : {0, 1, 2, 3, 7, 100}) {
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> chunks;
    pool.ParallelFor(n, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lock(mu);
      chunks.push_back({b, e});
    });
    std::sort(chunks.begin(), chunks.end());
    EXPECT_EQ(static_cast<int64_t>(chunks.size()), std::min<int64_t>(n, 3)) << n;
    int64_t next = 0;
    for (auto [b, e] : chunks) {
      EXPECT_EQ(b, next);
      EXPECT_LT(b, e);
      next = e;
    }
    EXPECT_EQ(next, n);
  }
}

TEST(ThreadPool, ChunksRunOnDistinctThreads) {
  ThreadPool pool(2);
  // Each chunk waits until both have started: only possible on two threads.
  std::atomic<int> started{0};
  std::mutex mu;
  std::set<std::thread::id> ids;
  pool.ParallelFor(2, [&](int64_t, int64_t) {
    ++started;
    while (started.load() < 2) std::this_thread::yield();
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(ids.size(), 2u);
}

TEST(ThreadPool, ManyLoopsInARow) {
  ThreadPool pool(4);
  std::vector<int> hits(1000, 0);
  for (int round = 0; round < 200; ++round)
    pool.ParallelFor(1000, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ++hits[i];
    });
  EXPECT_EQ(std::count(hits.begin(), hits.end(), 200), 1000);
}

TEST(ThreadPool, OneThreadRunsInline) {
  ThreadPool pool(1);
  std::thread::id id;
  pool.ParallelFor(10, [&](int64_t b, int64_t e) {
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 10);
    id = std::this_thread::get_id();
  });
  EXPECT_EQ(id, std::this_thread::get_id());
}

TEST(ThreadPool, HostThreadCountFromEnvironment) {
  setenv("KILN_HOST_THREADS", "3", 1);
  EXPECT_EQ(HostThreadCount(), 3);
  setenv("KILN_HOST_THREADS", "junk", 1);
  EXPECT_GE(HostThreadCount(), 1);
  unsetenv("KILN_HOST_THREADS");
  EXPECT_GE(HostThreadCount(), 1);
}

TEST(ThreadPool, OneSharedPoolPerThreadCount) {
  std::shared_ptr<ThreadPool> a = SharedThreadPool(3);
  std::shared_ptr<ThreadPool> b = SharedThreadPool(3);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->num_threads(), 3);
  std::shared_ptr<ThreadPool> c = SharedThreadPool(2);
  EXPECT_NE(a, c);
  EXPECT_EQ(c->num_threads(), 2);
  // Ended with its last user; the next caller gets a fresh one.
  std::weak_ptr<ThreadPool> weak = a;
  a.reset();
  b.reset();
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(SharedThreadPool(3)->num_threads(), 3);
}

TEST(ThreadPool, HostDevicesShareThePool) {
  // Every host device's threads are the process pool's: two devices'
  // descriptions name the same count, and the devices start no pool of
  // their own (the shared one outlives neither).
  setenv("KILN_HOST_THREADS", "3", 1);
  std::weak_ptr<ThreadPool> shared;
  {
    auto d1 = Device::Create(DeviceKind::kHost);
    auto d2 = Device::Create(DeviceKind::kHost);
    ASSERT_TRUE(d1.ok() && d2.ok());
    std::shared_ptr<ThreadPool> pool = SharedThreadPool(3);
    shared = pool;
    // The devices hold it: two users besides this one.
    EXPECT_EQ(pool.use_count(), 3);
  }
  unsetenv("KILN_HOST_THREADS");
  EXPECT_TRUE(shared.expired());
}

}  // namespace
}  // namespace kiln::runtime
