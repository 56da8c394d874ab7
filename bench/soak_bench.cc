// soak_bench: resident memory over many executions of the README example.
//
//   soak_bench [--hlo=examples/mlp.hlo] [--host=10000] [--cuda=1000] [--samples=10]
//              [--max-growth-kib=256] [--calls=100]
//
// Compiles the module once (host, and CUDA when CUDA code generation works
// here; f32 GEMMs at full precision) and loads it on each device: the host
// always, CUDA when Device::Create(kCuda) succeeds (the emulator under
// KILN_CUDA_EMULATOR), else "cuda: skipped (<reason>)". On each device it
// runs a warm-up of a tenth of the executions, reads VmRSS from
// /proc/self/status, then runs the executions, each with fresh inputs from
// its own seed and its results checked against the MLP computed in double
// precision (tests/support/mlp_example.h); every other execution records
// the per-thunk profile, so both paths soak. VmRSS is printed --samples
// times along the way with its growth over the warm-up's. Exits 1 when an
// execution fails or when the last sample exceeds the warm-up's by more
// than --max-growth-kib (allocator noise stays well below the default;
// a leak of one buffer per execution exceeds it after ~100 executions).
//
// CUDA soaks twice: with host arguments and host outputs (the simple path
// bef-run takes), and device-resident: every execution's inputs uploaded
// with TransferToDevice, its outputs left on the device and downloaded with
// TransferToHost for the check, so the device-side buffers of every
// execution are created and dropped. Under the emulator the device-resident
// soak also prints the emulator's live device allocations (kilnEmuLiveObjects)
// after the warm-up and at the end, which must not grow, and the driver
// calls per execution of the example with CUDA graphs on and off
// (kilnEmuApiCalls over --calls executions on resident inputs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/driver/compiler.h"
#include "compiler/hlo/parser.h"
#include "runtime/runtime.h"
#include "serialization/artifact.h"
#include "tests/support/emulator_transfers.h"
#include "tests/support/mlp_example.h"

namespace {

using kiln::StatusOr;
using kiln::runtime::DeviceKind;

// VmRSS of this process in KiB (0 if /proc is unreadable).
int64_t ResidentKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return 0;
}

// One execution with the inputs of `seed`, its results checked.
kiln::Status RunChecked(const kiln::runtime::LoadedExecutable& exe, uint64_t seed, bool profile) {
  const kiln::testing::MlpInputs inputs = kiln::testing::MakeMlpInputs(seed);
  KILN_ASSIGN_OR_RETURN(std::vector<kiln::runtime::Buffer> args, kiln::testing::MlpArguments(inputs));
  kiln::runtime::ExecuteOptions options;
  options.profile = profile;
  options.host_outputs = true;  // checked on the host
  KILN_ASSIGN_OR_RETURN(kiln::runtime::ExecutionResult r, exe.ExecuteSync(std::move(args), options));
  std::string bad = kiln::testing::CheckMlpOutputs(r.outputs, kiln::testing::ComputeMlp(inputs));
  if (!bad.empty()) return kiln::Error("seed " + std::to_string(seed) + ": " + bad);
  return kiln::Status::Ok();
}

// Host-accessible `args` -> device buffers of `device`.
StatusOr<std::vector<kiln::runtime::Buffer>> Upload(const kiln::runtime::Device& device,
                                                    const std::vector<kiln::runtime::Buffer>& args) {
  std::vector<kiln::runtime::Buffer> resident;
  for (const kiln::runtime::Buffer& a : args) {
    KILN_ASSIGN_OR_RETURN(kiln::runtime::Device::Transfer t, device.TransferToDevice(a));
    KILN_RETURN_IF_ERROR(t.done.Wait().status());
    resident.push_back(t.buffer);
  }
  return resident;
}

// One device-resident execution with the inputs of `seed`: inputs uploaded,
// outputs left on the device, then downloaded and checked.
kiln::Status RunResidentChecked(const kiln::runtime::LoadedExecutable& exe, const kiln::runtime::Device& device,
                                uint64_t seed, bool profile) {
  const kiln::testing::MlpInputs inputs = kiln::testing::MakeMlpInputs(seed);
  KILN_ASSIGN_OR_RETURN(std::vector<kiln::runtime::Buffer> host_args, kiln::testing::MlpArguments(inputs));
  KILN_ASSIGN_OR_RETURN(std::vector<kiln::runtime::Buffer> args, Upload(device, host_args));
  kiln::runtime::ExecuteOptions options;
  options.profile = profile;
  options.host_outputs = false;
  KILN_ASSIGN_OR_RETURN(kiln::runtime::ExecutionResult r, exe.ExecuteSync(std::move(args), options));
  std::vector<kiln::runtime::Buffer> outputs;
  for (const kiln::runtime::Buffer& o : r.outputs) {
    if (o.host_accessible() && device.kind() == DeviceKind::kCuda)
      return kiln::Error("an output came back to the host although host_outputs is off");
    KILN_ASSIGN_OR_RETURN(kiln::runtime::Device::Transfer t, device.TransferToHost(o));
    KILN_RETURN_IF_ERROR(t.done.Wait().status());
    outputs.push_back(t.buffer);
  }
  std::string bad = kiln::testing::CheckMlpOutputs(outputs, kiln::testing::ComputeMlp(inputs));
  if (!bad.empty()) return kiln::Error("seed " + std::to_string(seed) + ": " + bad);
  return kiln::Status::Ok();
}

// Live device allocations in the emulator, when it is the CUDA device.
std::optional<KilnEmuLiveObjects> EmulatorLiveObjects() {
  return kiln::testing::EmulatorReading<KilnEmuLiveObjects>("kilnEmuLiveObjects");
}

// Driver calls per execution of `exe` on resident inputs, graphs on or off
// (the emulator's counters around `n` executions), or nothing off the
// emulator.
StatusOr<std::optional<double>> DriverCallsPerExecution(const kiln::runtime::LoadedExecutable& exe,
                                                        const kiln::runtime::Device& device, bool graphs, int n) {
  KILN_ASSIGN_OR_RETURN(std::vector<kiln::runtime::Buffer> host_args,
                        kiln::testing::MlpArguments(kiln::testing::MakeMlpInputs(1)));
  KILN_ASSIGN_OR_RETURN(std::vector<kiln::runtime::Buffer> args, Upload(device, host_args));
  kiln::runtime::ExecuteOptions options;
  options.profile = false;
  options.cuda_graphs = graphs;
  for (int i = 0; i < 3; ++i) KILN_RETURN_IF_ERROR(exe.ExecuteSync(args, options).status());  // captured by now
  const std::optional<KilnEmuApiCalls> before = kiln::testing::EmulatorApiCalls();
  for (int i = 0; i < n; ++i) KILN_RETURN_IF_ERROR(exe.ExecuteSync(args, options).status());
  const std::optional<KilnEmuApiCalls> after = kiln::testing::EmulatorApiCalls();
  if (!before || !after) return std::optional<double>();
  auto direct = [](const KilnEmuApiCalls& c) {
    return c.kernel_launches + c.library_calls + c.copies + c.memsets + c.event_records - c.captured +
           c.graph_launches;
  };
  return std::optional<double>(double(direct(*after) - direct(*before)) / n);
}

struct Soak {
  int64_t executions = 0, samples = 10, max_growth_kib = 256;
  bool resident = false;  // device-resident inputs and outputs
  int calls = 100;        // executions the driver-call count averages over
};

// Prints the device's samples; false if an execution failed or memory grew.
bool SoakDevice(DeviceKind kind, const kiln::bef::Artifact& artifact, const Soak& soak) {
  const std::string name(kiln::runtime::DeviceKindName(kind));
  if (soak.executions == 0) return true;
  StatusOr<std::unique_ptr<kiln::runtime::Device>> device = kiln::runtime::Device::Create(kind);
  if (!device.ok()) {
    std::printf("%s: skipped (%s)\n", name.c_str(), device.status().message().c_str());
    return true;
  }
  auto fail = [&](const kiln::Status& s) {
    std::fprintf(stderr, "soak_bench: error: %s: %s\n", name.c_str(), s.message().c_str());
    return false;
  };
  StatusOr<std::unique_ptr<kiln::runtime::LoadedExecutable>> exe =
      kiln::runtime::LoadedExecutable::Load(**device, artifact);
  if (!exe.ok()) return fail(exe.status());
  auto run = [&](uint64_t seed, bool profile) {
    return soak.resident ? RunResidentChecked(**exe, **device, seed, profile) : RunChecked(**exe, seed, profile);
  };
  const int64_t warmup = std::max<int64_t>(1, soak.executions / 10);
  uint64_t seed = 0;
  for (int64_t i = 0; i < warmup; ++i) {
    if (kiln::Status s = run(seed++, i % 2 == 0); !s.ok()) return fail(s);
  }
  const int64_t base = ResidentKib();
  const std::optional<KilnEmuLiveObjects> live_base = EmulatorLiveObjects();
  std::printf("%s%s (%s): %lld executions after %lld warm-up, VmRSS after warm-up %lld KiB\n", name.c_str(),
              soak.resident ? ", device-resident inputs and outputs" : "", (*device)->description().c_str(),
              static_cast<long long>(soak.executions), static_cast<long long>(warmup),
              static_cast<long long>(base));
  const int64_t every = std::max<int64_t>(1, soak.executions / std::max<int64_t>(1, soak.samples));
  int64_t last = base;
  auto begin = std::chrono::steady_clock::now();
  for (int64_t i = 1; i <= soak.executions; ++i) {
    if (kiln::Status s = run(seed++, i % 2 == 0); !s.ok()) return fail(s);
    if (i % every != 0 && i != soak.executions) continue;
    last = ResidentKib();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    std::printf("  %8lld executions  VmRSS %8lld KiB  growth %+6lld KiB  (%.1f s)\n", static_cast<long long>(i),
                static_cast<long long>(last), static_cast<long long>(last - base), seconds);
  }
  bool grew = last - base > soak.max_growth_kib;
  const std::optional<KilnEmuLiveObjects> live_end = EmulatorLiveObjects();
  if (live_base && live_end) {
    const bool leaked = live_end->device_allocations > live_base->device_allocations;
    std::printf("  emulator live device allocations %llu (%llu bytes) after warm-up -> %llu (%llu bytes): %s\n",
                static_cast<unsigned long long>(live_base->device_allocations),
                static_cast<unsigned long long>(live_base->device_bytes),
                static_cast<unsigned long long>(live_end->device_allocations),
                static_cast<unsigned long long>(live_end->device_bytes), leaked ? "GROWTH" : "no growth");
    grew = grew || leaked;
  }
  if (soak.resident && kind == DeviceKind::kCuda) {
    for (bool graphs : {true, false}) {
      StatusOr<std::optional<double>> calls = DriverCallsPerExecution(**exe, **device, graphs, soak.calls);
      if (!calls.ok()) return fail(calls.status());
      if (*calls)
        std::printf("  driver calls per execution, CUDA graphs %-3s: %.2f (kilnEmuApiCalls over %d executions)\n",
                    graphs ? "on" : "off", **calls, soak.calls);
    }
  }
  std::printf("  %s: VmRSS %lld -> %lld KiB over %lld executions (%+lld KiB, limit %lld): %s\n", name.c_str(),
              static_cast<long long>(base), static_cast<long long>(last), static_cast<long long>(soak.executions),
              static_cast<long long>(last - base), static_cast<long long>(soak.max_growth_kib),
              grew ? "GROWTH" : "no growth");
  return !grew;
}

}  // namespace

int main(int argc, char** argv) {
  std::string hlo = "examples/mlp.hlo";
  Soak host{10000}, cuda{1000};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) { return arg.rfind(flag, 0) == 0 ? arg.c_str() + std::strlen(flag) : nullptr; };
    if (const char* v = value("--hlo=")) {
      hlo = v;
    } else if (const char* v = value("--host=")) {
      host.executions = std::max(0ll, std::atoll(v));
    } else if (const char* v = value("--cuda=")) {
      cuda.executions = std::max(0ll, std::atoll(v));
    } else if (const char* v = value("--samples=")) {
      host.samples = cuda.samples = std::max(1ll, std::atoll(v));
    } else if (const char* v = value("--max-growth-kib=")) {
      host.max_growth_kib = cuda.max_growth_kib = std::max(0ll, std::atoll(v));
    } else if (const char* v = value("--calls=")) {
      cuda.calls = static_cast<int>(std::max(1ll, std::atoll(v)));
    } else {
      std::fprintf(stderr,
                   "soak_bench: error: unknown argument '%s' (usage: soak_bench [--hlo=FILE] [--host=N] "
                   "[--cuda=N] [--samples=K] [--max-growth-kib=K] [--calls=N])\n",
                   arg.c_str());
      return 1;
    }
  }
  StatusOr<std::unique_ptr<kiln::hlo::HloModule>> module = kiln::hlo::ParseHloModuleFile(hlo);
  if (!module.ok()) {
    std::fprintf(stderr, "soak_bench: error: %s\n", module.status().message().c_str());
    return 1;
  }
  kiln::compiler::CompileOptions options;
  options.cuda = true;
  options.tf32 = false;
  StatusOr<kiln::bef::Artifact> artifact = kiln::compiler::CompileModule(**module, options);
  if (!artifact.ok()) {
    options.cuda = false;  // no CUDA code generation here: the host alone
    artifact = kiln::compiler::CompileModule(**module, options);
  }
  if (!artifact.ok()) {
    std::fprintf(stderr, "soak_bench: error: %s\n", artifact.status().message().c_str());
    return 1;
  }
  std::printf("soak_bench: %s, resident memory (VmRSS) over repeated executions\n", hlo.c_str());
  bool ok = SoakDevice(DeviceKind::kHost, *artifact, host);
  if (options.cuda) {
    ok = SoakDevice(DeviceKind::kCuda, *artifact, cuda) && ok;
    Soak resident = cuda;
    resident.resident = true;
    ok = SoakDevice(DeviceKind::kCuda, *artifact, resident) && ok;
  } else {
    std::printf("cuda: skipped (no CUDA code generation)\n");
  }
  return ok ? 0 : 1;
}
