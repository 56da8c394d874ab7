// collective_bench: all-reduce bus bandwidth between 2 host devices of one
// process (Gloo's TCP transport on the loopback), 1 KiB to 256 MiB of f32:
// kiln (a compiled all-reduce module, one LoadedExecutable per device, both
// executing at once) against Gloo's own allreduce on the same buffers'
// sizes, contexts and transport, so the difference is kiln's overhead
// (executions, buffers, the copy into the result).
//
// Bus bandwidth as nccl-tests defines it: algbw = bytes / time, busbw =
// algbw * 2 (n - 1) / n for n devices.
//
//   ./build/bench/collective_bench [--max_mib=256]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "runtime/collective_rendezvous.h"
#include "runtime/runtime.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kDevices = 2;

int Iterations(int64_t bytes) { return static_cast<int>(std::max<int64_t>(5, std::min<int64_t>(200, (int64_t{64} << 20) / bytes))); }

double BusGBps(int64_t bytes, double seconds) {
  return static_cast<double>(bytes) / seconds * 2.0 * (kDevices - 1) / kDevices / 1e9;
}

// Seconds per all-reduce of `bytes` through kiln.
double KilnSeconds(int64_t bytes) {
  const int64_t n = bytes / 4;
  const std::string text = "HloModule m, replica_count=2\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                           "  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  p = f32[" + std::to_string(n) +
                           "] parameter(0)\n  ROOT ar = f32[" + std::to_string(n) +
                           "] all-reduce(p), replica_groups={}, to_apply=add\n}\n";
  auto module = hlo::ParseHloModule(text);
  auto artifact = compiler::CompileModule(**module, {});
  if (!artifact.ok()) {
    std::fprintf(stderr, "compile: %s\n", artifact.status().message().c_str());
    std::exit(1);
  }
  auto rendezvous = runtime::CollectiveRendezvous::InProcess(kDevices, std::chrono::seconds(120));
  std::vector<std::unique_ptr<runtime::Device>> devices;
  std::vector<std::unique_ptr<runtime::LoadedExecutable>> exes;
  std::vector<runtime::Buffer> args;
  for (int d = 0; d < kDevices; ++d) {
    devices.push_back(std::move(runtime::Device::Create(runtime::DeviceKind::kHost).value()));
    exes.push_back(std::move(runtime::LoadedExecutable::Load(*devices[d], *artifact, {d, rendezvous}).value()));
    runtime::Buffer b = runtime::Buffer::Allocate(Shape(ElementType::kF32, {n})).value();
    std::vector<float> values(n, 1.0f + d);
    std::memcpy(b.data(), values.data(), bytes);
    args.push_back(b);
  }
  runtime::ExecuteOptions run;
  run.profile = false;
  auto all = [&](int iterations) {
    std::vector<std::thread> threads;
    for (int d = 0; d < kDevices; ++d)
      threads.emplace_back([&, d] {
        for (int i = 0; i < iterations; ++i)
          if (!exes[d]->ExecuteSync({args[d]}, run).ok()) std::abort();
      });
    for (std::thread& t : threads) t.join();
  };
  all(2);
  const int iterations = Iterations(bytes);
  const auto start = Clock::now();
  all(iterations);
  return std::chrono::duration<double>(Clock::now() - start).count() / iterations;
}

// Seconds per all-reduce of `bytes` with Gloo alone.
double GlooSeconds(int64_t bytes) {
  const int64_t n = bytes / 4;
  gloo::rendezvous::HashStore store;
  const int iterations = Iterations(bytes);
  double seconds = 0;
  std::vector<std::thread> threads;
  for (int d = 0; d < kDevices; ++d)
    threads.emplace_back([&, d] {
      auto device = gloo::transport::tcp::CreateDevice(gloo::transport::tcp::attr("127.0.0.1"));
      auto context = std::make_shared<gloo::rendezvous::Context>(d, kDevices);
      gloo::rendezvous::PrefixStore prefix("bench" + std::to_string(bytes), store);
      context->connectFullMesh(prefix, device);
      std::vector<float> data(n, 1.0f + d);
      auto once = [&](uint32_t tag) {
        gloo::AllreduceOptions opts(context);
        opts.setOutput(data.data(), n);
        opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
        opts.setTag(tag);
        gloo::allreduce(opts);
      };
      for (int i = 0; i < 2; ++i) once(0);
      const auto start = Clock::now();
      for (int i = 0; i < iterations; ++i) once(0);
      if (d == 0) seconds = std::chrono::duration<double>(Clock::now() - start).count() / iterations;
    });
  for (std::thread& t : threads) t.join();
  return seconds;
}

int Main(int argc, char** argv) {
  int64_t max_mib = 256;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--max_mib=", 10) == 0) max_mib = std::atoll(argv[i] + 10);
  std::printf("all-reduce (sum, f32) between %d host devices of one process, Gloo TCP on 127.0.0.1\n", kDevices);
  std::printf("%12s %12s %12s %14s %14s %10s\n", "bytes", "kiln us", "gloo us", "kiln busbw GB/s",
              "gloo busbw GB/s", "overhead");
  for (int64_t bytes = 1024; bytes <= (max_mib << 20); bytes *= 4) {
    const double kiln = KilnSeconds(bytes);
    const double gloo = GlooSeconds(bytes);
    std::printf("%12lld %12.1f %12.1f %14.3f %14.3f %9.1f%%\n", static_cast<long long>(bytes), kiln * 1e6,
                gloo * 1e6, BusGBps(bytes, kiln), BusGBps(bytes, gloo), (kiln / gloo - 1) * 100);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) { return kiln::Main(argc, argv); }
