// kiln runtime public API: run a loaded .bef artifact on a device.
//
// IREE-style explicit ownership, no globals:
//   Device            owns the execution streams (worker threads). Create one
//                     per process/device and keep it alive longer than every
//                     executable and event created from it.
//   LoadedExecutable  an artifact prepared for one device: the host kernel
//                     shared object loaded (memfd_create + dlopen), or the
//                     CUDA module (cubin for the device's SM, else PTX JIT)
//                     loaded, with every kernel resolved up front; constants
//                     copied into runtime-owned (device) memory. Immutable
//                     after Load, so several executions may run concurrently.
//   Buffer            a ref-counted handle to memory of one array shape in
//                     one memory space (host, pinned host, device) of one
//                     device (copies share the memory; the last handle
//                     frees it). Device memory stays on the device between
//                     executions: upload weights once (Device::
//                     TransferToDevice), pass the device buffers to every
//                     Execute, and outputs come back as device buffers
//                     until the caller asks for them (TransferToHost, or
//                     ExecuteOptions::host_outputs). ExecuteWithHostBuffers
//                     (runtime/host_execution.h) is the simple host path.
//                     See docs/runtime_hal.md.
//   Event             the future of one execution or transfer; Wait() blocks
//                     and yields the outputs and the per-thunk profile.
// Execute() checks its arguments synchronously (one-line errors) and then
// enqueues the run on a stream, returning at once. The argument Buffers are
// kept alive by the queued work, so the caller may drop its handles.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/shape.h"
#include "common/status.h"
#include "cuda_emulator/include/kiln_cuda_emulator.h"
#include "serialization/artifact.h"
#include "thunks/collective_traffic.h"
#include "thunks/thunk.h"

namespace kiln::runtime {

inline constexpr int64_t kBufferAlignment = 64;

enum class DeviceKind { kHost, kCuda };
std::string_view DeviceKindName(DeviceKind kind);  // "host", "cuda"

// Where a Buffer's bytes live (IREE's memory types). kHost: ordinary host
// memory any device reads (staged through the device's queue when a CUDA
// execution needs it). kPinnedHost: page-locked host memory of one device
// (cuMemHostAlloc; ordinary memory on the host device), host-accessible and
// the fastest source or destination of a transfer. kDevice: the device's
// own memory; on CUDA not host-accessible (data() is null), on the host
// device it is host memory.
enum class MemorySpace { kHost, kPinnedHost, kDevice };
std::string_view MemorySpaceName(MemorySpace space);  // "host", "pinned host", "device"

class Device;

class Buffer {
 public:
  Buffer() = default;  // null handle
  // Zero-filled host memory (kHost) for an array shape (at least
  // `min_bytes` bytes).
  static StatusOr<Buffer> Allocate(const Shape& shape, int64_t min_bytes = 0);
  // Host memory whose contents are unspecified: what an execution uses for
  // allocations it writes before reading (no per-execution zeroing).
  static StatusOr<Buffer> AllocateUninitialized(const Shape& shape, int64_t min_bytes = 0);
  // Raw zero-filled host memory of `bytes` bytes with no meaningful shape (u8[bytes]).
  static StatusOr<Buffer> AllocateBytes(int64_t bytes);
  // A handle to bytes [offset, offset + shape's size) of `base`'s memory.
  static Buffer View(const Buffer& base, int64_t offset, const Shape& shape, int64_t size);
  // Runtime-internal (a Backend's allocator): memory of `bytes` bytes that
  // `release` frees when the last handle goes. `host` is its host address
  // (null when not host-accessible), `device_address` its device address.
  static Buffer Adopt(const Shape& shape, int64_t bytes, MemorySpace space, const Device* device,
                      uint8_t* host, uint64_t device_address, std::function<void()> release);

  bool is_null() const { return storage_ == nullptr; }
  const Shape& shape() const { return shape_; }
  int64_t size() const { return size_; }  // bytes
  MemorySpace memory_space() const;
  // The device that owns the memory; null for kHost memory.
  const Device* device() const;
  // True when data() addresses the bytes (everything but a CUDA device's
  // device memory).
  bool host_accessible() const { return data() != nullptr; }
  // The bytes in host memory, or null when the buffer is not host-accessible.
  uint8_t* data() const;
  // The device address of the bytes (kDevice and kPinnedHost buffers of a
  // CUDA device); 0 otherwise.
  uint64_t device_address() const;
  // True when both handles address the same memory.
  bool SharesMemoryWith(const Buffer& other) const {
    return storage_ == other.storage_ && offset_ == other.offset_;
  }
  // True when no other handle (copy or view) shares this one's memory.
  bool sole_owner() const { return storage_ && storage_.use_count() == 1; }

 private:
  struct Storage;
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;
  int64_t size_ = 0;
  Shape shape_;
};

// One timed thunk of an execution. Control-flow thunks are recorded too
// (their duration includes their children's), after their children, and a
// loop body's thunks appear once per iteration.
struct ThunkProfileEntry {
  std::string name;  // ThunkInfo::profile_name
  // The thunk's HLO instructions and cost estimate; points into the
  // LoadedExecutable's program, valid while the executable lives.
  const thunks::ThunkInfo* info = nullptr;
  int stream = 0;  // the stream the thunk ran on (one trace track each)
  thunks::ThunkKind kind = thunks::ThunkKind::kSequence;
  int depth = 1;  // 1 for direct children of the program's root
  std::chrono::nanoseconds start{0};  // since the execution started
  std::chrono::nanoseconds duration{0};
  // Exact counts of the thunk's kernel launches (instructions, memory
  // requests and sectors, bank conflicts, ...) when the device is kiln's
  // CUDA emulator; absent on a real GPU and on the host.
  std::optional<KilnEmuCounters> counters;
  // The program stream (thunks/streams.h) of the thunk's root thunk: a
  // multi-stream program's thunks get a trace track per program stream.
  int program_stream = 0;
  // What a collective thunk moved (thunks/collective_traffic.h), on every
  // device kind; absent for other thunks and async starts.
  std::optional<thunks::CollectiveTraffic> collective;
};

struct ExecutionProfile {
  std::vector<ThunkProfileEntry> thunks;
  std::chrono::nanoseconds total{0};
  // Set when the times are not a device's measured times. Under the CUDA
  // emulator with its timing model: "modeled: H100 timing model on kiln
  // emulator (...)" and `modeled` is true; under an emulator without it:
  // "emulated: kiln emulator (...)", the emulator's clock.
  std::string time_source;
  bool modeled = false;
  // True when the times and counters were extrapolated from a sample of
  // each launch's blocks (the emulator's KILN_EMU_SAMPLE mode); such an
  // execution computes no results (ExecutionResult::results_computed).
  bool sampled = false;
};

struct ExecutionResult {
  // One buffer per array leaf of the result shape, in Signature::result_leaves
  // order (depth-first over the tuple).
  std::vector<Buffer> outputs;
  // False when the device did not compute the results (the CUDA emulator's
  // sampling mode, KILN_EMU_SAMPLE): `outputs` then hold no meaningful
  // values and must not be printed or compared.
  bool results_computed = true;
  ExecutionProfile profile;
};

class Event {
 public:
  Event() = default;
  // Blocks until the execution finishes. May be called more than once (every
  // call returns the same result: buffers are shared handles).
  StatusOr<ExecutionResult> Wait() const;
  bool IsReady() const;
  bool is_null() const { return state_ == nullptr; }

  struct State;  // implementation detail (runtime/device.cc)
  explicit Event(std::shared_ptr<State> state) : state_(std::move(state)) {}
  const std::shared_ptr<State>& state() const { return state_; }

 private:
  std::shared_ptr<State> state_;
};

class Stream;   // an ordered queue of work with its worker thread
class CollectiveRendezvous;  // runtime/collective_rendezvous.h
class Backend;  // the device kind's implementation (runtime/backend.h)

class Device {
 public:
  // num_streams >= 1 worker threads, each running its queue in order.
  // kCuda: dlopens libcuda.so.1, initializes device 0 (or the ordinal in
  // $KILN_CUDA_DEVICE) and its primary context, one CUDA stream per worker.
  // Fails with one line "CUDA backend not built/available: <why>" when kiln
  // was built without CUDA headers, no driver is installed or no device is
  // usable.
  static StatusOr<std::unique_ptr<Device>> Create(DeviceKind kind, int num_streams = 1);
  // The CUDA device `ordinal` (multi-device runs: one Device per GPU of
  // this process), with the errors of Create.
  static StatusOr<std::unique_ptr<Device>> CreateCuda(int ordinal, int num_streams = 1);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  DeviceKind kind() const { return kind_; }
  int num_streams() const { return static_cast<int>(streams_.size()); }
  Stream& stream(int i) { return *streams_[i]; }
  Backend& backend() { return *backend_; }  // runtime-internal

  // Memory of `space` for `shape` (at least `min_bytes`) on this device,
  // contents unspecified. kHost is plain host memory (Buffer::Allocate).
  // The buffer may outlive nothing but the Device.
  StatusOr<Buffer> Allocate(const Shape& shape, MemorySpace space, int64_t min_bytes = 0) const;

  // An asynchronous copy: `buffer` is the destination, allocated at once
  // so it can be handed to Execute straight away (work later on the same
  // stream sees the bytes); `done` becomes ready when they are there (its
  // ExecutionResult's outputs hold `buffer`, profile.total the copy's
  // time). The source is kept alive until then.
  struct Transfer {
    Buffer buffer;
    Event done;
  };
  // Host-accessible `source` -> a new kDevice buffer of this device.
  StatusOr<Transfer> TransferToDevice(const Buffer& source, int stream = 0) const;
  // A buffer of this device (or host memory) -> a new kHost buffer.
  StatusOr<Transfer> TransferToHost(const Buffer& source, int stream = 0) const;
  // What executes the work, for tools' device lines: "host (2 threads)",
  // "cuda: NVIDIA H100 80GB HBM3 (sm_90)", "cuda: kiln emulator (sm_90,
  // H100-class)".
  std::string description() const;

 private:
  Device(DeviceKind kind, std::unique_ptr<Backend> backend, int num_streams);
  DeviceKind kind_;
  std::unique_ptr<Backend> backend_;  // outlives the streams' workers
  std::vector<std::unique_ptr<Stream>> streams_;
};

struct ExecuteOptions {
  int stream = 0;
  // Record start/stop events around every thunk (ExecutionResult::profile).
  // Off for timing runs, so the measured latency is not distorted.
  bool profile = true;
  // donate[i]: argument i (a parameter leaf) may be reused as the result leaf
  // that input_output_alias pairs with it; the returned output then shares
  // its memory. Empty = nothing donated. A must_alias pair needs a donation.
  std::vector<bool> donate;
  // Where the outputs are returned. false: where the device computes them
  // (device memory on CUDA, which stays there until the caller transfers
  // it); true: in host memory, downloaded before the Event is ready.
  // Programs with dynamic dimensions always return host outputs (their
  // extents are read from the results).
  bool host_outputs = false;
  // CUDA: replay each straight-line part of the thunk program as a CUDA
  // graph, captured once per executable and stream (docs/runtime_hal.md);
  // false issues every thunk on its own. Ignored on the host, and where
  // the driver has no graph entry points.
  bool cuda_graphs = true;
  // Test hook: when set, memory the program writes before reading (no
  // zeroing needed) is filled with this byte before the run, so a
  // read-before-write shows up as a wrong result.
  std::optional<uint8_t> poison_uninitialized;
};

// Where an executable runs in a multi-device (SPMD) run: one load per
// device, all with the same rendezvous. device_id is the device's number
// among the program's replica_count * num_partitions devices (replica *
// num_partitions + partition); replica-id and partition-id read it.
struct LoadOptions {
  int64_t device_id = 0;
  // Null for a single device (then every collective group must be one
  // device; a program whose collectives need peers fails to load).
  std::shared_ptr<CollectiveRendezvous> rendezvous;
};

class LoadedExecutable {
 public:
  static StatusOr<std::unique_ptr<LoadedExecutable>> Load(Device& device, const bef::Artifact& artifact,
                                                          const LoadOptions& options = {});
  ~LoadedExecutable();
  LoadedExecutable(const LoadedExecutable&) = delete;
  LoadedExecutable& operator=(const LoadedExecutable&) = delete;

  // Arguments may live in host memory (staged into the device by the
  // execution) or in this device's memory: a device argument the program
  // only reads is used in place; a donated one becomes the output that
  // input_output_alias pairs with it; one the program writes without a
  // donation is copied on the device first. A buffer of another device is
  // an error.
  //
  // One argument per array leaf of the parameters, in
  // Signature::parameter_leaves order (for array parameters: parameter
  // order). Shapes must be compatible (layouts ignored) and sizes match;
  // a bounded dynamic dimension (`<=N`) may have any extent up to N, and
  // the outputs then come back at the extents the program computed.
  StatusOr<Event> Execute(std::vector<Buffer> args, const ExecuteOptions& options = {}) const;
  // Execute + Wait. A small host program whose stream is idle runs on the
  // calling thread instead (in the stream's order all the same).
  StatusOr<ExecutionResult> ExecuteSync(std::vector<Buffer> args,
                                        const ExecuteOptions& options = {}) const;

  const thunks::ThunkProgram& program() const;
  // The device the executable was loaded on.
  Device& device() const { return device_; }
  // The shape of argument i / output i as Execute takes and returns them.
  // Dynamic dimensions keep their flags: the dimension is the bound.
  const std::vector<Shape>& argument_shapes() const;
  const std::vector<Shape>& output_shapes() const;
  // The (possibly tuple) shape whose array leaves the outputs are.
  const Shape& result_shape() const;

  struct Impl;  // runtime/loaded_executable.cc

 private:
  LoadedExecutable(Device& device, std::shared_ptr<const Impl> impl);
  struct PreparedRun;
  // Execute's checks, and the arguments and options the backend runs with.
  StatusOr<PreparedRun> Prepare(std::vector<Buffer> args, const ExecuteOptions& options) const;
  Event Enqueue(PreparedRun run) const;
  Device& device_;
  // Shared with queued executions, so the kernels stay loaded until the
  // last one finishes even if the executable is destroyed first. An
  // execution lets go of it before its Event is ready: after Wait, dropping
  // the executable releases its memory and modules at once.
  std::shared_ptr<const Impl> impl_;
};

}  // namespace kiln::runtime
