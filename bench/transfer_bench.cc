// transfer_bench: what an execution moves between host and device, and
// what it zeroes, counted by kiln's CUDA emulator (kilnEmuTransferCounters,
// independent of the runtime's own bookkeeping).
//
//   KILN_CUDA_EMULATOR=build/cuda_emulator/libkiln_cuda_emulator.so \
//   [KILN_EMU_SAMPLE=4] transfer_bench MODULE.bef [--iterations=N]
//
// Three ways of running the same artifact, N executions each (default 3)
// after one warm-up, on arguments of zeros (their values do not change
// what moves; with KILN_EMU_SAMPLE large models run in seconds):
//   staged, zero all   every execution uploads every argument, downloads
//                      every output and zeroes every temporary and output
//                      (how the runtime ran before resident buffers: the
//                      artifact's allocations all marked zero-initialized)
//   staged             the same with the compiler's zeroing bits
//   resident           arguments uploaded once and passed as device
//                      buffers; outputs left on the device
// Per execution it prints bytes host->device, device->host and
// device->device, memsets and their bytes, and the wall time.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/runtime.h"
#include "serialization/artifact.h"
#include "tests/support/emulator_transfers.h"

namespace {

using kiln::Status;
using kiln::StatusOr;
namespace rt = kiln::runtime;

struct Mode {
  const char* name;
  bool zero_all;
  bool resident;
};

// Counters per execution, averaged over `iterations`.
struct PerExecution {
  double to_device = 0, to_host = 0, on_device = 0, memsets = 0, memset_bytes = 0, ms = 0;
};

StatusOr<std::vector<rt::Buffer>> Arguments(const rt::LoadedExecutable& exe, bool resident) {
  std::vector<rt::Buffer> args;
  for (const kiln::Shape& shape : exe.argument_shapes()) {
    KILN_ASSIGN_OR_RETURN(rt::Buffer host, rt::Buffer::Allocate(shape));
    if (!resident) {
      args.push_back(std::move(host));
      continue;
    }
    KILN_ASSIGN_OR_RETURN(rt::Device::Transfer t, exe.device().TransferToDevice(host));
    KILN_RETURN_IF_ERROR(t.done.Wait().status());
    args.push_back(std::move(t.buffer));
  }
  return args;
}

StatusOr<PerExecution> Measure(rt::Device& device, kiln::bef::Artifact artifact, const Mode& mode,
                               int iterations) {
  if (mode.zero_all)
    for (kiln::thunks::Allocation& a : artifact.program.allocations) a.zero_initialize = true;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<rt::LoadedExecutable> exe, rt::LoadedExecutable::Load(device, artifact));
  KILN_ASSIGN_OR_RETURN(std::vector<rt::Buffer> args, Arguments(*exe, mode.resident));
  rt::ExecuteOptions options;
  options.profile = false;
  options.host_outputs = !mode.resident;
  // Donated: must-alias state (a KV cache) is then updated in place, as a
  // serving loop runs it; the values do not matter here.
  options.donate.assign(args.size(), true);
  KILN_RETURN_IF_ERROR(exe->ExecuteSync(args, options).status());  // warm-up: workspaces
  std::optional<KilnEmuTransferCounters> before = kiln::testing::EmulatorTransferCounters();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) KILN_RETURN_IF_ERROR(exe->ExecuteSync(args, options).status());
  auto end = std::chrono::steady_clock::now();
  std::optional<KilnEmuTransferCounters> after = kiln::testing::EmulatorTransferCounters();
  if (!before || !after) return kiln::Error("the emulator's transfer counters are unavailable");
  const double n = iterations;
  PerExecution p;
  p.to_device = (after->host_to_device_bytes - before->host_to_device_bytes) / n;
  p.to_host = (after->device_to_host_bytes - before->device_to_host_bytes) / n;
  p.on_device = (after->device_to_device_bytes - before->device_to_device_bytes) / n;
  p.memsets = (after->memsets - before->memsets) / n;
  p.memset_bytes = (after->memset_bytes - before->memset_bytes) / n;
  p.ms = std::chrono::duration<double, std::milli>(end - start).count() / n;
  return p;
}

int Run(const std::string& path, int iterations) {
  StatusOr<kiln::bef::Artifact> artifact = kiln::bef::LoadArtifactFile(path);
  if (!artifact.ok()) {
    std::fprintf(stderr, "transfer_bench: error: %s\n", artifact.status().message().c_str());
    return 1;
  }
  StatusOr<std::unique_ptr<rt::Device>> device = rt::Device::Create(rt::DeviceKind::kCuda);
  if (!device.ok() || !kiln::testing::EmulatorTransferCounters()) {
    std::printf("transfer_bench: skipped (needs the CUDA emulator: KILN_CUDA_EMULATOR)\n");
    return 0;
  }
  std::printf("transfer_bench: %s on %s, per execution (mean of %d)\n", path.c_str(),
              (*device)->description().c_str(), iterations);
  std::printf("%-20s %14s %14s %14s %8s %14s %10s\n", "mode", "host->device B", "device->host B",
              "device->device B", "memsets", "memset B", "wall ms");
  const Mode modes[] = {{"staged, zero all", true, false}, {"staged", false, false}, {"resident", false, true}};
  for (const Mode& mode : modes) {
    StatusOr<PerExecution> p = Measure(**device, *artifact, mode, iterations);
    if (!p.ok()) {
      std::fprintf(stderr, "transfer_bench: error: %s: %s\n", mode.name, p.status().message().c_str());
      return 1;
    }
    std::printf("%-20s %14.0f %14.0f %16.0f %8.1f %14.0f %10.1f\n", mode.name, p->to_device, p->to_host,
                p->on_device, p->memsets, p->memset_bytes, p->ms);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 3;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--iterations=", 0) == 0) {
      iterations = std::atoi(a.c_str() + 13);
    } else if (path.empty() && a.rfind("--", 0) != 0) {
      path = a;
    } else {
      std::fprintf(stderr, "transfer_bench: error: unknown argument '%s' (usage: transfer_bench MODULE.bef "
                           "[--iterations=N])\n", a.c_str());
      return 1;
    }
  }
  if (path.empty() || iterations < 1) {
    std::fprintf(stderr, "transfer_bench: error: usage: transfer_bench MODULE.bef [--iterations=N >= 1]\n");
    return 1;
  }
  return Run(path, iterations);
}
