// RunTasks (parallel_tasks.h).
#include "compiler/codegen/parallel_tasks.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace kiln::codegen {

int ResolveJobs(int jobs) {
  if (jobs > 0) return jobs;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<int64_t> LongestFirst(const std::vector<double>& costs) {
  std::vector<int64_t> order(costs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return costs[a] > costs[b]; });
  return order;
}

void RunTasks(int64_t count, int jobs, const std::function<std::function<void(int64_t)>(int)>& worker) {
  if (count <= 0) return;
  int threads = static_cast<int>(std::min<int64_t>(ResolveJobs(jobs), count));
  std::atomic<int64_t> next{0};
  auto run = [&](int thread) {
    std::function<void(int64_t)> task = worker(thread);
    for (int64_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) task(i);
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(run, t);
  run(0);
  for (std::thread& h : helpers) h.join();
}

}  // namespace kiln::codegen
