// ExecuteWithHostBuffers: upload, execute, download; see host_execution.h.
#include "runtime/host_execution.h"

namespace kiln::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// Transfers every buffer with `transfer`, then waits for all of them.
template <typename TransferFn>
StatusOr<std::vector<Buffer>> TransferAll(const std::vector<Buffer>& buffers, TransferFn transfer,
                                          int64_t* bytes) {
  std::vector<Device::Transfer> pending;
  pending.reserve(buffers.size());
  for (const Buffer& b : buffers) {
    KILN_ASSIGN_OR_RETURN(Device::Transfer t, transfer(b));
    *bytes += b.size();
    pending.push_back(std::move(t));
  }
  std::vector<Buffer> moved;
  moved.reserve(pending.size());
  for (Device::Transfer& t : pending) {
    KILN_RETURN_IF_ERROR(t.done.Wait().status());
    moved.push_back(std::move(t.buffer));
  }
  return moved;
}

}  // namespace

StatusOr<ExecutionResult> ExecuteWithHostBuffers(const LoadedExecutable& executable,
                                                 std::vector<Buffer> args,
                                                 const ExecuteOptions& options,
                                                 HostExecutionTimes* times) {
  HostExecutionTimes local;
  HostExecutionTimes& t = times ? *times : local;
  t = HostExecutionTimes{};
  Device& device = executable.device();
  const bool stays_on_host = device.kind() == DeviceKind::kHost ||
                             !executable.program().signature.dynamic_dimensions.empty();
  if (stays_on_host) {
    ExecuteOptions run = options;
    run.host_outputs = true;
    Clock::time_point begin = Clock::now();
    StatusOr<ExecutionResult> result = executable.ExecuteSync(std::move(args), run);
    t.execute = Clock::now() - begin;
    return result;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_null() && !args[i].host_accessible())
      return Error("ExecuteWithHostBuffers: argument " + std::to_string(i) + " is not in host memory");
  }
  const int stream = options.stream;
  Clock::time_point begin = Clock::now();
  KILN_ASSIGN_OR_RETURN(
      std::vector<Buffer> on_device,
      TransferAll(args, [&](const Buffer& b) { return device.TransferToDevice(b, stream); },
                  &t.bytes_uploaded));
  Clock::time_point uploaded = Clock::now();
  ExecuteOptions run = options;
  run.host_outputs = false;
  KILN_ASSIGN_OR_RETURN(ExecutionResult result, executable.ExecuteSync(std::move(on_device), run));
  Clock::time_point executed = Clock::now();
  KILN_ASSIGN_OR_RETURN(
      result.outputs,
      TransferAll(result.outputs, [&](const Buffer& b) { return device.TransferToHost(b, stream); },
                  &t.bytes_downloaded));
  t.upload = uploaded - begin;
  t.execute = executed - uploaded;
  t.download = Clock::now() - executed;
  return result;
}

}  // namespace kiln::runtime
