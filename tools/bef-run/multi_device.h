// bef-run's multi-device mode (--num_devices=N): an SPMD module runs on N
// host devices (or, with --device=cuda, N CUDA devices) in one process,
// each with its own Device (executor threads) and LoadedExecutable, all
// sharing one in-process CollectiveRendezvous; or on this process's devices
// of a multi-process run (multi_process.h).
//
// Per-device values (documented in README.md, "bef-run"):
//   --input: K specs (one per argument leaf) give every device the same
//     values; N*K specs give device d the specs d*K .. d*K+K-1 (N and d
//     count every device of the run, in every process); in any spec
//     "{device}" becomes the device number (--input=@x.{device}.npy reads
//     x.0.npy on device 0, x.1.npy on device 1, ...). Without --input,
//     device d gets random values seeded with --seed + d.
//   --output / --expected_output: the same, per result leaf; printed
//     results are preceded by a "device d:" line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "runtime/runtime.h"

namespace kiln::tools {

// The specs of device `device` out of `specs`, for `leaves` leaves on
// `devices` devices (see above); an error names a count that fits neither
// form.
StatusOr<std::vector<std::string>> SpecsForDevice(const std::vector<std::string>& specs, size_t leaves,
                                                  int64_t device, int64_t devices, const std::string& flag);

// One executable per device of this process in an SPMD run: devices
// first_device .. first_device + size() - 1 of total_devices.
struct DeviceSet {
  std::vector<std::unique_ptr<runtime::Device>> devices;
  std::vector<std::unique_ptr<runtime::LoadedExecutable>> executables;
  int64_t first_device = 0;
  int64_t total_devices = 0;
  size_t size() const { return executables.size(); }
};

// Loads `artifact` on `count` devices of `kind` (host devices, or CUDA
// devices 0..count-1 whose collectives run through NCCL) that meet through
// one in-process rendezvous; collectives wait `timeout_seconds` for their
// peers.
StatusOr<DeviceSet> LoadOnHostDevices(const bef::Artifact& artifact, int64_t count, double timeout_seconds,
                                      runtime::DeviceKind kind = runtime::DeviceKind::kHost);

// Loads `artifact` on devices first_device .. first_device + count - 1 of
// a run whose devices meet through `rendezvous` (host devices, or CUDA
// devices 0 .. count - 1 of this process for kCuda).
StatusOr<DeviceSet> LoadOnHostDevices(const bef::Artifact& artifact, int64_t first_device, int64_t count,
                                      std::shared_ptr<runtime::CollectiveRendezvous> rendezvous,
                                      runtime::DeviceKind kind = runtime::DeviceKind::kHost);

// Runs every device's executable on its arguments at once, each on a thread
// of its own. When devices fail, the error is the earliest failure's (the
// others usually time out waiting for that device), prefixed "device d: "
// (d the global device number).
StatusOr<std::vector<runtime::ExecutionResult>> ExecuteOnDevices(
    const DeviceSet& set, const std::vector<std::vector<runtime::Buffer>>& args,
    const runtime::ExecuteOptions& options);

}  // namespace kiln::tools
