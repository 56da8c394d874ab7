// Backend: one kind of device (host, CUDA) behind the public API of
// runtime.h. Internal to the runtime.
//
// The device-independent half of LoadedExecutable (artifact validation, the
// caller signature, argument checking, queueing work on the Device's
// streams) lives in loaded_executable.cc; a Backend only turns a validated
// artifact into a BackendExecutable that runs one execution on one stream.
// Run is called on the worker thread of the Device stream options.stream
// (or, for RunsOnCaller executables, by a synchronous caller while that
// stream is idle), so executions on one stream never overlap and may share
// per-stream state.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "runtime/runtime.h"
#include "thunks/program.h"

namespace kiln::runtime {

// What every backend needs about a loaded program besides its thunks.
struct ProgramBinding {
  thunks::ThunkProgram program;
  // The shape of program argument i / output i (every leaf of the
  // signature, dynamic dimensions at their bounds and without dynamic flags):
  // what a BackendExecutable runs on.
  std::vector<Shape> argument_shapes, output_shapes;
  // What LoadedExecutable::Execute takes and returns: the caller's leaves,
  // with dynamic dimensions flagged (see thunks::DynamicDimension), and the
  // caller's result shape.
  std::vector<Shape> caller_argument_shapes, caller_output_shapes;
  Shape caller_result;
  // Argument number of each parameter allocation (-1 for others).
  std::vector<int64_t> argument_of_allocation;
  // The device this executable runs as and its peers (LoadOptions).
  LoadOptions placement;

  // The argument filling allocation `a` whole when the caller donated it
  // and the program writes it (returned outputs then share its memory), else
  // -1.
  int64_t DonatedArgument(size_t a, const ExecuteOptions& options) const;
};

// Validates nothing beyond the signature: the program must come from an
// artifact that passed ValidateArtifact.
StatusOr<std::shared_ptr<const ProgramBinding>> BindProgram(const thunks::ThunkProgram& program,
                                                            const LoadOptions& placement = {});

class BackendExecutable {
 public:
  virtual ~BackendExecutable() = default;
  // One execution; `args` were checked against the signature by Execute.
  virtual StatusOr<ExecutionResult> Run(const std::vector<Buffer>& args,
                                        const ExecuteOptions& options) const = 0;
  // Whether ExecuteSync may call Run on the caller's thread when the stream
  // is idle (Stream::TryRunHere): small host programs.
  virtual bool RunsOnCaller() const { return false; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  // `artifact` passed ValidateArtifact; `binding` holds its program.
  virtual StatusOr<std::unique_ptr<BackendExecutable>> Load(
      const bef::Artifact& artifact, std::shared_ptr<const ProgramBinding> binding) = 0;
  // Device::description() without the kind prefix.
  virtual std::string Description() const = 0;

  // The allocator: `bytes` bytes of `space` (kPinnedHost or kDevice) that
  // owner() owns; contents unspecified. Callable from any thread.
  virtual StatusOr<Buffer> Allocate(const Shape& shape, int64_t bytes, MemorySpace space) = 0;
  // Transfers of `bytes` bytes, issued on stream `stream` from its worker
  // thread; they return when the bytes are there. `host` is host-accessible
  // memory, `device` memory of this backend's device.
  virtual Status CopyToDevice(const Buffer& host, const Buffer& device, int64_t bytes,
                              int stream) = 0;
  virtual Status CopyToHost(const Buffer& device, const Buffer& host, int64_t bytes, int stream) = 0;

  // The Device holding this backend (set once by the Device): what the
  // buffers it allocates name as their device.
  const Device* owner() const { return owner_; }
  void BindOwner(const Device* device) { owner_ = device; }

 private:
  const Device* owner_ = nullptr;
};

std::unique_ptr<Backend> CreateHostBackend();
// The CUDA device `ordinal` (unset: KILN_CUDA_DEVICE, default 0) with
// `num_streams` CUDA streams. One-line errors name what is missing; built
// without the CUDA headers it always fails with "kiln was built without
// CUDA headers".
StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(int num_streams, std::optional<int> ordinal = std::nullopt);

}  // namespace kiln::runtime
