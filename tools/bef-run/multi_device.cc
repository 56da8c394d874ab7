// bef-run's multi-device mode (see multi_device.h).
#include "tools/bef-run/multi_device.h"

#include <chrono>
#include <optional>
#include <thread>

#include "runtime/collective_rendezvous.h"

namespace kiln::tools {
namespace {

std::string ReplaceDevice(std::string spec, int64_t device) {
  static const std::string kPlaceholder = "{device}";
  for (size_t at = spec.find(kPlaceholder); at != std::string::npos; at = spec.find(kPlaceholder, at))
    spec.replace(at, kPlaceholder.size(), std::to_string(device));
  return spec;
}

}  // namespace

StatusOr<std::vector<std::string>> SpecsForDevice(const std::vector<std::string>& specs, size_t leaves,
                                                  int64_t device, int64_t devices, const std::string& flag) {
  std::vector<std::string> out;
  if (specs.empty()) return out;
  size_t first = 0;
  if (specs.size() == leaves * static_cast<size_t>(devices) && devices > 1) {
    first = static_cast<size_t>(device) * leaves;
  } else if (specs.size() != leaves) {
    return Error("expected " + std::to_string(leaves) + " " + flag + " values (the same on every device) or " +
                 std::to_string(leaves * static_cast<size_t>(devices)) + " (" + std::to_string(leaves) +
                 " per device, device 0's first), got " + std::to_string(specs.size()));
  }
  for (size_t i = 0; i < leaves; ++i) out.push_back(ReplaceDevice(specs[first + i], device));
  return out;
}

StatusOr<DeviceSet> LoadOnHostDevices(const bef::Artifact& artifact, int64_t count, double timeout_seconds,
                                      runtime::DeviceKind kind) {
  if (count < 1 || count > 1024) return Error("--num_devices must be between 1 and 1024, not " + std::to_string(count));
  if (!(timeout_seconds > 0) || timeout_seconds > 86400)
    return Error("--collective_timeout must be between 0 and 86400 seconds");
  const int64_t needed = artifact.program.device_count();
  if (count != needed)
    return Error("the module runs on " + std::to_string(needed) + " devices (" +
                 std::to_string(artifact.program.replica_count) + " replicas x " +
                 std::to_string(artifact.program.num_partitions) + " partitions), not --num_devices=" +
                 std::to_string(count));
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  return LoadOnHostDevices(artifact, 0, count, runtime::CollectiveRendezvous::InProcess(count, timeout), kind);
}

StatusOr<DeviceSet> LoadOnHostDevices(const bef::Artifact& artifact, int64_t first_device, int64_t count,
                                      std::shared_ptr<runtime::CollectiveRendezvous> rendezvous,
                                      runtime::DeviceKind kind) {
  DeviceSet set;
  set.first_device = first_device;
  set.total_devices = rendezvous->num_devices();
  for (int64_t d = first_device; d < first_device + count; ++d) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Device> device,
                          kind == runtime::DeviceKind::kCuda
                              ? runtime::Device::CreateCuda(static_cast<int>(d - first_device))
                              : runtime::Device::Create(kind));
    runtime::LoadOptions load{d, rendezvous};
    StatusOr<std::unique_ptr<runtime::LoadedExecutable>> exe = runtime::LoadedExecutable::Load(*device, artifact, load);
    if (!exe.ok()) return exe.status().WithContext("device " + std::to_string(d));
    set.devices.push_back(std::move(device));
    set.executables.push_back(std::move(exe).value());
  }
  return set;
}

StatusOr<std::vector<runtime::ExecutionResult>> ExecuteOnDevices(
    const DeviceSet& set, const std::vector<std::vector<runtime::Buffer>>& args,
    const runtime::ExecuteOptions& options) {
  using Clock = std::chrono::steady_clock;
  const size_t n = set.size();
  std::vector<std::optional<StatusOr<runtime::ExecutionResult>>> results(n);
  std::vector<Clock::time_point> finished(n);
  std::vector<std::thread> threads;
  for (size_t d = 0; d < n; ++d) {
    threads.emplace_back([&, d] {
      results[d] = set.executables[d]->ExecuteSync(args[d], options);
      finished[d] = Clock::now();
    });
  }
  for (std::thread& t : threads) t.join();
  std::optional<size_t> first_failure;
  for (size_t d = 0; d < n; ++d)
    if (!results[d]->ok() && (!first_failure || finished[d] < finished[*first_failure])) first_failure = d;
  if (first_failure)
    return results[*first_failure]->status().WithContext("device " +
                                                         std::to_string(set.first_device + *first_failure));
  std::vector<runtime::ExecutionResult> out;
  for (size_t d = 0; d < n; ++d) out.push_back(std::move(**results[d]));
  return out;
}

}  // namespace kiln::tools
