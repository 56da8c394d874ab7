// overlap_bench: what latency hiding (compiler/pipeline/latency_hiding.h)
// gains on the host. Two host devices in one process, a thread each (Gloo
// over the loopback); each runs an all-reduce of N MiB of f32 next to an
// independent f32 matmul chain. Four modules per size:
//
// - all-reduce alone, matmul alone: the parts;
// - serialized: the matmul carries control-predecessors={the done}, so it
//   waits for the exchange (the schedule kiln had before latency hiding);
// - overlapped: the same module without that edge; the scheduler puts the
//   matmul between the start and the done, and the host runs the exchange
//   on a thread of its own meanwhile.
//
// Each time is the fastest of --rounds rounds of --iterations executions
// (all four modules take turns in each round, so a burst of other load
// does not land on one only). The ideal overlapped time is the larger of
// the parts, the worst their sum.
//
//   ./build/bench/overlap_bench [--max_mib=64] [--dot=512] [--rounds=3] [--iterations=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "runtime/collective_rendezvous.h"
#include "runtime/runtime.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kDevices = 2;
constexpr auto kTimeout = std::chrono::seconds(120);

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "overlap_bench: %s\n", what.c_str());
  std::exit(1);
}

enum class Variant { kAllReduce, kMatmul, kSerialized, kOverlapped };

// The module of `variant`: p is the all-reduced f32[n], a and b the
// f32[dot,dot] factors of m = a.b, t = tanh(m).b.
std::string ModuleText(Variant variant, int64_t n, int64_t dot) {
  const std::string v = "f32[" + std::to_string(n) + "]";
  const std::string m = "f32[" + std::to_string(dot) + "," + std::to_string(dot) + "]";
  std::string text = "HloModule overlap, replica_count=2\nadd {\n  x = f32[] parameter(0)\n"
                     "  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n"
                     "  p = " + v + " parameter(0)\n  a = " + m + " parameter(1)\n  b = " + m + " parameter(2)\n";
  const std::string reduce = "  ars = " + v + " all-reduce-start(p), replica_groups={}, to_apply=add\n"
                             "  ard = " + v + " all-reduce-done(ars)\n";
  const std::string after = variant == Variant::kSerialized ? ", control-predecessors={ard}" : "";
  const std::string matmul = "  d = " + m + " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}" +
                             after + "\n  h = " + m + " tanh(d)\n  t = " + m +
                             " dot(h, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  switch (variant) {
    case Variant::kAllReduce: return text + reduce + "  ROOT r = " + v + " negate(ard)\n}\n";
    case Variant::kMatmul: return text + matmul + "  ROOT r = " + m + " negate(t)\n}\n";
    default:
      return text + reduce + matmul + "  x = " + v + " negate(ard)\n  ROOT r = (" + v + ", " + m + ") tuple(x, t)\n}\n";
  }
}

bef::Artifact Compile(Variant variant, int64_t n, int64_t dot) {
  auto module = hlo::ParseHloModule(ModuleText(variant, n, dot));
  if (!module.ok()) Die("parse: " + module.status().message());
  auto artifact = compiler::CompileModule(**module, {});
  if (!artifact.ok()) Die("compile: " + artifact.status().message());
  return std::move(*artifact);
}

runtime::Buffer Filled(const Shape& shape, float value) {
  runtime::Buffer b = runtime::Buffer::Allocate(shape).value();
  std::vector<float> values(shape.ElementCount(), value);
  std::memcpy(b.data(), values.data(), values.size() * sizeof(float));
  return b;
}

// One module loaded on both devices, with each device's arguments.
struct Loaded {
  std::vector<std::unique_ptr<runtime::Device>> devices;
  std::vector<std::unique_ptr<runtime::LoadedExecutable>> exes;
  std::vector<std::vector<runtime::Buffer>> args;

  Loaded(const bef::Artifact& artifact, int64_t n, int64_t dot) {
    auto rendezvous = runtime::CollectiveRendezvous::InProcess(kDevices, kTimeout);
    for (int d = 0; d < kDevices; ++d) {
      devices.push_back(std::move(runtime::Device::Create(runtime::DeviceKind::kHost).value()));
      auto loaded = runtime::LoadedExecutable::Load(*devices.back(), artifact, {d, rendezvous});
      if (!loaded.ok()) Die(loaded.status().message());
      exes.push_back(std::move(*loaded));
      args.push_back({Filled(Shape(ElementType::kF32, {n}), 1.0f + d),
                      Filled(Shape(ElementType::kF32, {dot, dot}), 0.01f),
                      Filled(Shape(ElementType::kF32, {dot, dot}), 0.02f)});
    }
  }
  // Seconds per execution of `iterations` on both devices at once.
  double Time(int iterations) {
    std::vector<std::thread> threads;
    const auto start = Clock::now();
    for (int d = 0; d < kDevices; ++d)
      threads.emplace_back([&, d] {
        runtime::ExecuteOptions run;
        for (int i = 0; i < iterations; ++i) {
          auto r = exes[d]->ExecuteSync(args[d], run);
          if (!r.ok()) Die(r.status().message());
        }
      });
    for (std::thread& t : threads) t.join();
    return std::chrono::duration<double>(Clock::now() - start).count() / iterations;
  }
};

int64_t Flag(int argc, char** argv, const std::string& name, int64_t fallback) {
  const std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return std::atoll(argv[i] + prefix.size());
  return fallback;
}

int Main(int argc, char** argv) {
  const int64_t max_mib = Flag(argc, argv, "max_mib", 64);
  const int64_t dot = Flag(argc, argv, "dot", 512);
  const int rounds = static_cast<int>(Flag(argc, argv, "rounds", 3));
  const int iterations = static_cast<int>(Flag(argc, argv, "iterations", 5));
  std::printf("all-reduce (f32 sum, 2 host devices in one process, Gloo TCP on 127.0.0.1) next to an "
              "independent f32[%lld,%lld] matmul chain (2 dots, a tanh); ms per execution\n",
              static_cast<long long>(dot), static_cast<long long>(dot));
  std::printf("%8s %12s %10s %12s %12s %10s\n", "MiB", "all-reduce", "matmul", "serialized", "overlapped", "gain");
  for (int64_t mib = 1; mib <= max_mib; mib *= 4) {
    const int64_t n = (mib << 20) / 4;
    std::vector<std::unique_ptr<Loaded>> modules;
    for (Variant v : {Variant::kAllReduce, Variant::kMatmul, Variant::kSerialized, Variant::kOverlapped})
      modules.push_back(std::make_unique<Loaded>(Compile(v, n, dot), n, dot));
    std::vector<double> best(modules.size(), 1e30);
    for (auto& m : modules) m->Time(1);  // warm up (connections, first touch)
    for (int round = 0; round < rounds; ++round)
      for (size_t i = 0; i < modules.size(); ++i) best[i] = std::min(best[i], modules[i]->Time(iterations));
    std::printf("%8lld %12.2f %10.2f %12.2f %12.2f %9.1f%%\n", static_cast<long long>(mib), best[0] * 1e3,
                best[1] * 1e3, best[2] * 1e3, best[3] * 1e3, (best[2] / best[3] - 1) * 100);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) { return kiln::Main(argc, argv); }
