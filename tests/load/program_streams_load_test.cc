// Multi-stream programs under load on the host: a hand-built program of
// four copy chains on four program streams, joined by events into the
// output, runs 2 x 500 times from two threads on two Device streams of one
// executable (so one execution often finds the thread pool busy with the
// other's streams and runs all of its streams on its calling thread). Each
// execution has its own input values and the output must equal them (every
// chain copies its lane through eight temporaries): a join that ran before
// its chain's event would copy what an earlier execution left in the
// reused temporaries. Links the runtime only, so scripts/tsan.sh runs it
// under ThreadSanitizer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "runtime/runtime.h"
#include "tests/runtime/runtime_test_util.h"
#include "thunks/validate.h"

namespace kiln::runtime::testing {
namespace {

constexpr int kLanes = 4;       // one program stream each
constexpr int kSteps = 8;       // copies per chain
constexpr int64_t kLane = 256;  // bytes per lane: 64 floats
constexpr int kThreads = 2;
constexpr int kRuns = 500;

// a0: the parameter f32[kLanes * 64]; a1: temporaries, kSteps slots per
// lane; a2: the output, like a0. Lane l on stream l copies a0's lane into
// slot 0, slot i into slot i + 1, ..., and (streams 1..3 record events 0..2)
// stream 0 copies every lane's last slot into the output after waiting for
// the lane's event. Stream 0's own lane needs no event.
th::ThunkProgram FourChainProgram() {
  th::ThunkProgram p;
  const int64_t size = kLanes * kLane;
  p.allocations = {ParamAlloc(size, 0), TempAlloc(size * kSteps), OutputAlloc(size, {})};
  Shape shape(ElementType::kF32, {kLanes * kLane / 4});
  p.signature.parameters = {shape};
  p.signature.result = shape;
  p.signature.parameter_leaves = {{0, {}, S(0, 0, size)}};
  p.signature.result_leaves = {{{}, S(2, 0, size)}};
  auto slot = [](int lane, int step) { return S(1, (lane * kSteps + step) * kLane, kLane); };
  // Interleaved in root order, as a compiler would emit independent chains.
  for (int step = 0; step < kSteps; ++step) {
    for (int lane = 0; lane < kLanes; ++lane) {
      th::BufferSlice from = step == 0 ? S(0, lane * kLane, kLane) : slot(lane, step - 1);
      th::Thunk t = T("copy.l" + std::to_string(lane) + ".s" + std::to_string(step),
                      th::CopyThunk{from, slot(lane, step)});
      t.stream = lane;
      if (step == kSteps - 1 && lane > 0) t.record_event = lane - 1;
      p.root.thunks.push_back(std::move(t));
    }
  }
  for (int lane = 0; lane < kLanes; ++lane) {
    th::Thunk t = T("join.l" + std::to_string(lane), th::CopyThunk{slot(lane, kSteps - 1), S(2, lane * kLane, kLane)});
    if (lane > 0) t.wait_events = {lane - 1};
    p.root.thunks.push_back(std::move(t));
  }
  p.num_streams = kLanes;
  p.num_events = kLanes - 1;
  return p;
}

std::string RunMany(const LoadedExecutable& exe, int thread) {
  for (int run = 0; run < kRuns; ++run) {
    std::vector<float> input(kLanes * kLane / 4);
    for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(thread * 1000000 + run * 1000 + i);
    ExecuteOptions options;
    options.stream = thread;
    options.profile = run % 16 == 0;
    options.host_outputs = true;
    StatusOr<Event> event = exe.Execute({MakeBuffer(ElementType::kF32, {kLanes * kLane / 4}, input)}, options);
    if (!event.ok()) return event.status().message();
    StatusOr<ExecutionResult> result = event->Wait();
    if (!result.ok()) return result.status().message();
    if (Read<float>(result->outputs.at(0)) != input) {
      return "thread " + std::to_string(thread) + " run " + std::to_string(run) + ": output differs from input";
    }
  }
  return "";
}

TEST(ProgramStreamsLoad, FourChainsFromTwoThreads) {
  const bef::Artifact artifact = RoundTrip(HostArtifact(FourChainProgram()));
  ASSERT_TRUE(thunks::ValidateProgram(artifact.program).ok()) << thunks::ValidateProgram(artifact.program).message();
  // Four pool threads (read when the host backend is created).
  setenv("KILN_HOST_THREADS", "4", 1);
  std::unique_ptr<Device> device = HostDevice(kThreads);
  unsetenv("KILN_HOST_THREADS");
  ASSERT_TRUE(device);
  std::unique_ptr<LoadedExecutable> exe = MustLoad(*device, artifact);
  ASSERT_TRUE(exe);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { failures[t] = RunMany(*exe, t); });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

// A thunk that fails (the host has no custom calls) in the middle of
// stream 0 while the other streams run: every execution returns its error,
// none hangs waiting for events the failed stream would have recorded.
TEST(ProgramStreamsLoad, AFailingStreamStopsTheExecution) {
  th::ThunkProgram p = FourChainProgram();
  th::CustomCallThunk call;
  call.target = "no_such_target";
  call.operands = {S(0, 0, 4)};
  call.results = {S(1, 0, 4)};
  p.root.thunks.insert(p.root.thunks.begin() + kLanes * 2, T("custom-call.1", call));
  const bef::Artifact artifact = RoundTrip(HostArtifact(p));
  setenv("KILN_HOST_THREADS", "4", 1);
  std::unique_ptr<Device> device = HostDevice();
  unsetenv("KILN_HOST_THREADS");
  ASSERT_TRUE(device);
  std::unique_ptr<LoadedExecutable> exe = MustLoad(*device, artifact);
  ASSERT_TRUE(exe);
  for (int run = 0; run < 50; ++run) {
    std::vector<float> input(kLanes * kLane / 4, 1.0f);
    StatusOr<Event> event = exe->Execute({MakeBuffer(ElementType::kF32, {kLanes * kLane / 4}, input)}, {});
    ASSERT_TRUE(event.ok()) << event.status().message();
    StatusOr<ExecutionResult> result = event->Wait();
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().message(), "thunk 'custom-call.1': not supported on host yet: custom-call");
  }
}

}  // namespace
}  // namespace kiln::runtime::testing
