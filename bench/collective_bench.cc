// collective_bench: all-reduce bus bandwidth on the host, 1 KiB to 256 MiB
// of f32, kiln against Gloo alone on the same transport:
//
// - processes (the default): 2 processes over the loopback, as
//   `bef-run --num_processes=2` runs them. The bench starts itself twice
//   (--rank=0/1); rank 0 serves the rendezvous store (runtime/tcp_store.h)
//   and prints the table. kiln runs a compiled all-reduce module, one
//   LoadedExecutable per process; Gloo runs gloo::allreduce on a buffer of
//   its own, in place, with the same store and TCP transport. Debian's
//   libgloo ships no benchmark binary, so this loop is Gloo's figure.
// - threads (--threads): the 2 devices in one process, one thread each.
//
// The difference is kiln's overhead per call: the execution and its output
// buffer (the module's result is a buffer of its own, which kiln's ring
// all-reduce fills from the argument, runtime/host_ring_allreduce.h;
// Gloo's loop reduces in place). kiln and Gloo take turns, --rounds rounds
// per size, and each keeps its fastest round, so a burst of other load on
// the machine does not land on one side only. Bus bandwidth as nccl-tests
// defines it: algbw = bytes / time, busbw = algbw * 2 (n - 1) / n
// for n devices.
//
//   ./build/bench/collective_bench [--max_mib=256] [--min_kib=1] [--rounds=3] [--threads]
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "runtime/collective_rendezvous.h"
#include "runtime/collective_store.h"
#include "runtime/runtime.h"
#include "runtime/tcp_store.h"

extern char** environ;

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kDevices = 2;
constexpr auto kTimeout = std::chrono::seconds(120);

int Iterations(int64_t bytes) {
  return static_cast<int>(std::max<int64_t>(3, std::min<int64_t>(100, (int64_t{32} << 20) / bytes)));
}

double BusGBps(int64_t bytes, double seconds) {
  return static_cast<double>(bytes) / seconds * 2.0 * (kDevices - 1) / kDevices / 1e9;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "collective_bench: %s\n", what.c_str());
  std::exit(1);
}

bef::Artifact CompileAllReduce(int64_t n) {
  const std::string text = "HloModule m, replica_count=2\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                           "  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  p = f32[" + std::to_string(n) +
                           "] parameter(0)\n  ROOT ar = f32[" + std::to_string(n) +
                           "] all-reduce(p), replica_groups={}, to_apply=add\n}\n";
  auto module = hlo::ParseHloModule(text);
  auto artifact = compiler::CompileModule(**module, {});
  if (!artifact.ok()) Die("compile: " + artifact.status().message());
  return std::move(*artifact);
}

// One device's all-reduce through kiln: its executable and argument.
struct KilnDevice {
  std::unique_ptr<runtime::Device> device;
  std::unique_ptr<runtime::LoadedExecutable> exe;
  runtime::Buffer arg;

  KilnDevice(const bef::Artifact& artifact, int d, std::shared_ptr<runtime::CollectiveRendezvous> rendezvous,
             int64_t n) {
    device = std::move(runtime::Device::Create(runtime::DeviceKind::kHost).value());
    auto loaded = runtime::LoadedExecutable::Load(*device, artifact, {d, std::move(rendezvous)});
    if (!loaded.ok()) Die(loaded.status().message());
    exe = std::move(*loaded);
    arg = runtime::Buffer::Allocate(Shape(ElementType::kF32, {n})).value();
    std::vector<float> values(n, 1.0f + d);
    std::memcpy(arg.data(), values.data(), n * sizeof(float));
  }
  void Run(int iterations) {
    runtime::ExecuteOptions run;
    run.profile = false;
    for (int i = 0; i < iterations; ++i) {
      auto r = exe->ExecuteSync({arg}, run);
      if (!r.ok()) Die(r.status().message());
    }
  }
};

// One rank's in-place all-reduce through Gloo alone.
struct GlooRank {
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::vector<float> data;

  GlooRank(int rank, gloo::rendezvous::Store& store, const std::string& prefix, int64_t n)
      : data(n, 1.0f + rank) {
    auto device = gloo::transport::tcp::CreateDevice(gloo::transport::tcp::attr("127.0.0.1"));
    context = std::make_shared<gloo::rendezvous::Context>(rank, kDevices);
    context->setTimeout(kTimeout);
    gloo::rendezvous::PrefixStore prefixed(prefix, store);
    context->connectFullMesh(prefixed, device);
  }
  void Run(int iterations) {
    for (int i = 0; i < iterations; ++i) {
      gloo::AllreduceOptions opts(context);
      opts.setOutput(data.data(), data.size());
      opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      opts.setTag(0);
      gloo::allreduce(opts);
    }
  }
};

// Seconds per call of `run` after an untimed one.
double Time(const std::function<void(int)>& run, int iterations) {
  run(1);
  const auto start = Clock::now();
  run(iterations);
  return std::chrono::duration<double>(Clock::now() - start).count() / iterations;
}

// The fastest of `rounds` rounds of kiln and Gloo in turn: {kiln, gloo}.
std::pair<double, double> TakeTurns(const std::function<void(int)>& kiln, const std::function<void(int)>& gloo,
                                    int iterations, int rounds) {
  double k = 1e30, g = 1e30;
  for (int round = 0; round < rounds; ++round) {
    k = std::min(k, Time(kiln, iterations));
    g = std::min(g, Time(gloo, iterations));
  }
  return {k, g};
}

void PrintHeader(const char* where) {
  std::printf("all-reduce (sum, f32) between %d host devices, %s, Gloo TCP on 127.0.0.1\n", kDevices, where);
  std::printf("%12s %12s %12s %16s %16s %10s\n", "bytes", "kiln us", "gloo us", "kiln busbw GB/s", "gloo busbw GB/s",
              "overhead");
}

// kiln's overhead over Gloo per message of 16 MiB or more.
constexpr int64_t kLarge = int64_t{16} << 20;
std::vector<double>& LargeOverheads() {
  static std::vector<double> overheads;
  return overheads;
}

void PrintRow(int64_t bytes, double kiln, double gloo) {
  if (bytes >= kLarge) LargeOverheads().push_back(kiln / gloo - 1);
  std::printf("%12lld %12.1f %12.1f %16.3f %16.3f %9.1f%%\n", static_cast<long long>(bytes), kiln * 1e6, gloo * 1e6,
              BusGBps(bytes, kiln), BusGBps(bytes, gloo), (kiln / gloo - 1) * 100);
  std::fflush(stdout);
}

void PrintSummary() {
  const std::vector<double>& o = LargeOverheads();
  if (o.empty()) return;
  double sum = 0;
  for (double x : o) sum += x;
  std::printf("kiln's overhead over Gloo for messages of 16 MiB and more: mean %.1f%%, max %.1f%%\n",
              sum / o.size() * 100, *std::max_element(o.begin(), o.end()) * 100);
}

struct Sweep {
  int64_t min_bytes = 1024;
  int64_t max_bytes = int64_t{256} << 20;
  int rounds = 3;
};

// Both devices in this process, a thread each.
void ThreadSweep(const Sweep& sweep) {
  PrintHeader("one process, a thread each");
  for (int64_t bytes = sweep.min_bytes; bytes <= sweep.max_bytes; bytes *= 4) {
    const int64_t n = bytes / 4;
    const int iterations = Iterations(bytes);
    const bef::Artifact artifact = CompileAllReduce(n);
    auto rendezvous = runtime::CollectiveRendezvous::InProcess(kDevices, kTimeout);
    std::vector<std::unique_ptr<KilnDevice>> kiln;
    for (int d = 0; d < kDevices; ++d) kiln.push_back(std::make_unique<KilnDevice>(artifact, d, rendezvous, n));
    runtime::MemoryKeyValueStore store(kTimeout);
    std::vector<std::unique_ptr<GlooRank>> gloo(kDevices);
    std::pair<double, double> seconds;
    std::vector<std::thread> threads;
    for (int d = 0; d < kDevices; ++d)
      threads.emplace_back([&, d] {
        gloo[d] = std::make_unique<GlooRank>(d, store, "gloo", n);
        auto t = TakeTurns([&](int k) { kiln[d]->Run(k); }, [&](int k) { gloo[d]->Run(k); }, iterations,
                           sweep.rounds);
        if (d == 0) seconds = t;
      });
    for (std::thread& t : threads) t.join();
    PrintRow(bytes, seconds.first, seconds.second);
  }
  PrintSummary();
}

// This process's rank of the 2-process sweep; rank 0 prints.
int RankSweep(const Sweep& sweep, int rank, int port) {
  const runtime::HostPort address{"127.0.0.1", port};
  auto store = rank == 0 ? StatusOr<std::shared_ptr<runtime::KeyValueStore>>(
                               runtime::ServeTcpKeyValueStore(address, kTimeout).value())
                         : runtime::ConnectTcpKeyValueStore(address, kTimeout);
  if (!store.ok()) Die(store.status().message());
  auto rendezvous = runtime::CollectiveRendezvous::Shared(kDevices, kTimeout, *store, {});
  if (rank == 0) PrintHeader("2 processes");
  for (int64_t bytes = sweep.min_bytes; bytes <= sweep.max_bytes; bytes *= 4) {
    const int64_t n = bytes / 4;
    const int iterations = Iterations(bytes);
    KilnDevice device(CompileAllReduce(n), rank, rendezvous, n);
    GlooRank r(rank, **store, "gloo" + std::to_string(bytes), n);
    auto [kiln, gloo] = TakeTurns([&](int k) { device.Run(k); }, [&](int k) { r.Run(k); }, iterations, sweep.rounds);
    if (rank == 0) PrintRow(bytes, kiln, gloo);
  }
  if (rank == 0) PrintSummary();
  // Rank 0's store stays up until rank 1 is done with it.
  (*store)->set("done/" + std::to_string(rank), {1});
  if (rank == 0) (*store)->wait({"done/1"});
  return 0;
}

// Starts this program as ranks 0 and 1 and waits for both.
int ProcessSweep(const Sweep& sweep, char* self) {
  const int port = 20000 + static_cast<int>(getpid() % 20000);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < kDevices; ++rank) {
    std::vector<std::string> args = {self, "--rank=" + std::to_string(rank), "--port=" + std::to_string(port),
                                     "--min_kib=" + std::to_string(sweep.min_bytes >> 10),
                                     "--max_mib=" + std::to_string(sweep.max_bytes >> 20),
                                     "--rounds=" + std::to_string(sweep.rounds)};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0) Die("cannot start a rank");
    pids.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failed = 1;
      for (pid_t other : pids) kill(other, SIGKILL);
    }
  }
  return failed;
}

int Main(int argc, char** argv) {
  Sweep sweep;
  bool threads = false;
  int rank = -1, port = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--max_mib=", 10) == 0) sweep.max_bytes = std::atoll(argv[i] + 10) << 20;
    else if (std::strncmp(argv[i], "--min_kib=", 10) == 0) sweep.min_bytes = std::atoll(argv[i] + 10) << 10;
    else if (std::strncmp(argv[i], "--rounds=", 9) == 0) sweep.rounds = std::max(1, std::atoi(argv[i] + 9));
    else if (std::strcmp(argv[i], "--threads") == 0) threads = true;
    else if (std::strncmp(argv[i], "--rank=", 7) == 0) rank = std::atoi(argv[i] + 7);
    else if (std::strncmp(argv[i], "--port=", 7) == 0) port = std::atoi(argv[i] + 7);
    else Die(std::string("unknown flag ") + argv[i] + " (--max_mib=N --min_kib=N --rounds=N --threads)");
  }
  if (sweep.min_bytes < 1024) sweep.min_bytes = 1024;
  if (threads) {
    ThreadSweep(sweep);
    return 0;
  }
  if (rank >= 0) return RankSweep(sweep, rank, port);
  return ProcessSweep(sweep, argv[0]);
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) { return kiln::Main(argc, argv); }
