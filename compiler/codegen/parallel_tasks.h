// RunTasks: runs independent tasks 0..count-1 on up to `jobs` threads (the
// caller's included), each thread claiming the next unclaimed task, so
// that kernels of very different cost keep every thread busy. Callers that
// can estimate their tasks' costs run them longest first (LongestFirst):
// a costly task claimed last would leave the other threads idle until it
// ends, which on a model of a dozen distinct kernels is a good part of its
// compile time. Threads live
// for one call: code generation is a few calls per compile, and a pool
// kept between them would be process-wide state.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace kiln::codegen {

// `worker` is called once per thread with that thread's index in
// [0, threads) and returns the function that runs a task on that thread
// (the place for per-thread state, such as contexts reused across its
// tasks). Returns when every task has run. jobs <= 0: one per core.
void RunTasks(int64_t count, int jobs, const std::function<std::function<void(int64_t)>(int)>& worker);

// The indices of `costs` in the order to run them: highest cost first,
// equal costs in index order.
std::vector<int64_t> LongestFirst(const std::vector<double>& costs);

// The thread count `jobs` asks for: itself when positive, else the number
// of cores (at least 1).
int ResolveJobs(int jobs);

}  // namespace kiln::codegen
