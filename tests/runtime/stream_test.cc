// Stream (runtime/stream.h): items run one at a time in order, on the
// worker or, through TryRunHere while the stream is idle, on the calling
// thread; work enqueued during a caller's run waits for it.
#include "runtime/stream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln::runtime {
namespace {

TEST(Stream, TryRunHereRunsOnTheCallerWhenIdle) {
  Stream stream;
  std::thread::id ran_on;
  EXPECT_TRUE(stream.TryRunHere([&] { ran_on = std::this_thread::get_id(); }));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  // Enqueued work runs on the worker.
  std::promise<std::thread::id> worker;
  stream.Enqueue([&] { worker.set_value(std::this_thread::get_id()); });
  EXPECT_NE(worker.get_future().get(), std::this_thread::get_id());
}

TEST(Stream, TryRunHereDeclinesWhileTheWorkerRuns) {
  Stream stream;
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  stream.Enqueue([&] {
    started.set_value();
    released.wait();
  });
  started.get_future().wait();
  bool ran = false;
  EXPECT_FALSE(stream.TryRunHere([&] { ran = true; }));
  EXPECT_FALSE(ran);
  release.set_value();
  // Once the worker is done the stream is idle again (it may take a moment
  // to mark its item finished).
  bool here = false;
  for (int i = 0; i < 1000 && !here; ++i) {
    here = stream.TryRunHere([] {});
    if (!here) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(here);
}

TEST(Stream, WorkEnqueuedDuringACallersRunWaitsForIt) {
  Stream stream;
  std::mutex mu;
  std::vector<std::string> log;
  auto note = [&](const std::string& s) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back(s);
  };
  std::promise<void> done;
  EXPECT_TRUE(stream.TryRunHere([&] {
    std::thread other([&] { stream.Enqueue([&] { note("queued"); done.set_value(); }); });
    other.join();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    note("caller");
  }));
  done.get_future().wait();
  EXPECT_EQ(log, (std::vector<std::string>{"caller", "queued"}));
}

}  // namespace
}  // namespace kiln::runtime
