// loop_bench: what one iteration of a while loop costs on the host device.
//
//   loop_bench [--trip=N] [--repeats=R]
//
// Three loops, each compiled from HLO text by the full compiler (host
// target) and run with the trip count N (default 100000) passed as a
// parameter, so nothing can fold the loop away and the condition is read
// every iteration:
//   counter  s32 i; while i < n: i = i + 1
//   scalar   s32 i, acc; while i < n: acc = acc * 1103515245 + (i ^ 12345); i = i + 1
//   dus      s32 i, f32[1024] buf; while i < n:
//              buf = dynamic-update-slice(buf, f32[1]{i}, i mod 1024); i = i + 1
// On the host, counter and scalar compile to one kernel each that contains
// the loop (passes::WhileLoopKernelFusion), dus stays a thunk loop (its
// state holds an array the body updates), so its figure is the runtime's
// per-iteration dispatch cost. The "thunks" column counts the program's
// thunks, loop bodies included.
// Each result is checked against the same recurrence computed here before
// any timing counts; then the minimum and median over R (default 5)
// executions are printed as ns per iteration.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "runtime/runtime.h"

namespace {

using kiln::ElementType;
using kiln::Shape;
using kiln::Status;
using kiln::StatusOr;
using kiln::runtime::Buffer;

constexpr char kCounterHlo[] = R"(HloModule loop_counter
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(next, n)
}
ENTRY main {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  loop = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT i = s32[] get-tuple-element(loop), index=0
}
)";

constexpr char kScalarHlo[] = R"(HloModule loop_scalar
cond {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  n = s32[] get-tuple-element(s), index=2
  a = s32[] constant(1103515245)
  m = s32[] constant(12345)
  one = s32[] constant(1)
  scaled = s32[] multiply(acc, a)
  mixed = s32[] xor(i, m)
  acc2 = s32[] add(scaled, mixed)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[], s32[]) tuple(next, acc2, n)
}
ENTRY main {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[], s32[]) tuple(zero, zero, n)
  loop = (s32[], s32[], s32[]) while(init), condition=cond, body=body
  ROOT acc = s32[] get-tuple-element(loop), index=1
}
)";

constexpr char kDusHlo[] = R"(HloModule loop_dus
cond {
  s = (s32[], f32[1024], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[1024], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  buf = f32[1024] get-tuple-element(s), index=1
  n = s32[] get-tuple-element(s), index=2
  size = s32[] constant(1024)
  at = s32[] remainder(i, size)
  v = f32[] convert(i)
  update = f32[1] broadcast(v), dimensions={}
  buf2 = f32[1024] dynamic-update-slice(buf, update, at)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[1024], s32[]) tuple(next, buf2, n)
}
ENTRY main {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  fz = f32[] constant(0)
  buf = f32[1024] broadcast(fz), dimensions={}
  init = (s32[], f32[1024], s32[]) tuple(zero, buf, n)
  loop = (s32[], f32[1024], s32[]) while(init), condition=cond, body=body
  ROOT out = f32[1024] get-tuple-element(loop), index=1
}
)";

// The loop's result for trip count n, computed here.
std::vector<uint8_t> CounterWant(int32_t n) {
  std::vector<uint8_t> bytes(4);
  std::memcpy(bytes.data(), &n, 4);
  return bytes;
}

std::vector<uint8_t> ScalarWant(int32_t n) {
  uint32_t acc = 0;
  for (int32_t i = 0; i < n; ++i) acc = acc * 1103515245u + static_cast<uint32_t>(i ^ 12345);
  std::vector<uint8_t> bytes(4);
  std::memcpy(bytes.data(), &acc, 4);
  return bytes;
}

std::vector<uint8_t> DusWant(int32_t n) {
  std::vector<float> buf(1024, 0.0f);
  for (int32_t i = 0; i < n; ++i) buf[i % 1024] = static_cast<float>(i);
  std::vector<uint8_t> bytes(buf.size() * 4);
  std::memcpy(bytes.data(), buf.data(), bytes.size());
  return bytes;
}

struct Loop {
  const char* name;
  const char* hlo;
  std::function<std::vector<uint8_t>(int32_t)> want;
};

struct Timing {
  double min_ns = 0, median_ns = 0;  // per iteration
  int64_t thunks = 0;                // thunks of the program, loop bodies included
};

StatusOr<Timing> TimeLoop(kiln::runtime::Device& device, const Loop& loop, int32_t trip, int repeats) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::hlo::HloModule> module, kiln::hlo::ParseHloModule(loop.hlo));
  kiln::compiler::CompileOptions options;
  options.host_cpus = {"native"};
  KILN_ASSIGN_OR_RETURN(kiln::bef::Artifact artifact, kiln::compiler::CompileModule(*module, options));
  Timing t;
  kiln::thunks::ForEachThunk(artifact.program.root, [&](const kiln::thunks::Thunk&, int) { ++t.thunks; });
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::runtime::LoadedExecutable> exe,
                        kiln::runtime::LoadedExecutable::Load(device, artifact));
  KILN_ASSIGN_OR_RETURN(Buffer n, Buffer::Allocate(Shape(ElementType::kS32, {})));
  std::memcpy(n.data(), &trip, 4);
  const std::vector<Buffer> args = {n};
  kiln::runtime::ExecuteOptions run;
  run.profile = false;
  KILN_ASSIGN_OR_RETURN(kiln::runtime::ExecutionResult first, exe->ExecuteSync(args, run));
  const std::vector<uint8_t> want = loop.want(trip);
  if (first.outputs.size() != 1 || first.outputs[0].size() != static_cast<int64_t>(want.size()) ||
      std::memcmp(first.outputs[0].data(), want.data(), want.size()) != 0)
    return kiln::Error(std::string(loop.name) + ": wrong result");
  std::vector<double> ns;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(exe->ExecuteSync(args, run).status());
    const auto end = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(end - start).count() / trip);
  }
  std::sort(ns.begin(), ns.end());
  t.min_ns = ns.front();
  t.median_ns = ns[ns.size() / 2];
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int32_t trip = 100000;
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--trip=", 0) == 0) {
      trip = std::max(1, std::atoi(arg.c_str() + 7));
    } else if (arg.rfind("--repeats=", 0) == 0) {
      repeats = std::max(1, std::atoi(arg.c_str() + 10));
    } else {
      std::fprintf(stderr, "loop_bench: error: unknown argument '%s' (usage: loop_bench [--trip=N] [--repeats=R])\n",
                   arg.c_str());
      return 1;
    }
  }
  StatusOr<std::unique_ptr<kiln::runtime::Device>> device =
      kiln::runtime::Device::Create(kiln::runtime::DeviceKind::kHost);
  if (!device.ok()) {
    std::fprintf(stderr, "loop_bench: error: %s\n", device.status().message().c_str());
    return 1;
  }
  const Loop loops[] = {{"counter", kCounterHlo, CounterWant},
                        {"scalar", kScalarHlo, ScalarWant},
                        {"dus", kDusHlo, DusWant}};
  std::printf("loop_bench: host (%s), trip count %d, %d executions each (profile=false)\n",
              (*device)->description().c_str(), trip, repeats);
  std::printf("  %-8s %8s %14s %14s\n", "loop", "thunks", "min ns/iter", "median ns/iter");
  bool ok = true;
  for (const Loop& loop : loops) {
    StatusOr<Timing> t = TimeLoop(**device, loop, trip, repeats);
    if (!t.ok()) {
      std::fprintf(stderr, "loop_bench: error: %s: %s\n", loop.name, t.status().message().c_str());
      ok = false;
      continue;
    }
    std::printf("  %-8s %8lld %14.1f %14.1f\n", loop.name, static_cast<long long>(t->thunks), t->min_ns,
                t->median_ns);
  }
  return ok ? 0 : 1;
}
