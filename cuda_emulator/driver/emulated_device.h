// EmulatedDevice: the GPUs the emulated driver exposes (KILN_EMU_DEVICES,
// default 8, an HGX H100 node), and everything the driver API's handles
// refer to: device memory, the thread pool that runs kernels, the checker
// options, the primary contexts, streams, events and modules.
//
// Several devices exist so that multi-device programs (one device per
// thread, NCCL between them) run in one process. Each device has its own
// primary context handle, and every allocation records the device whose
// context was current (NCCL's double checks its buffers against the
// communicator's device). The devices share one address space (as CUDA's
// unified addressing gives), one memory ledger, one stream and event table
// and one sticky-error state: a fault on one device fails them all, which a
// multi-device program would see anyway once its collectives stop.
//
// The CUDA driver API is a C ABI over process-wide state (cuInit has no
// handle to return), so the device is a process-wide object: created on
// first use by EmulatedDevice::Get(), never destroyed (the pool's threads
// must not be joined from static destructors while other code may still
// call in). This is the only global of the emulator besides the
// thread-local current context and error detail.
//
// The primary context is the only context. Once a kernel faults, the
// context is sticky-failed as on a real GPU: every call that uses it
// returns the fault's CUresult until the primary context is released for
// the last time, which destroys its streams, events, modules and memory.
#pragma once

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "cuda_emulator/driver/fault_injector.h"
#include "cuda_emulator/driver/graphs.h"
#include "cuda_emulator/driver/module_table.h"
#include "cuda_emulator/driver/timeline.h"
#include "cuda_emulator/exec/device_memory.h"
#include "cuda_emulator/exec/launch.h"
#include "cuda_emulator/exec/thread_pool.h"
#include "cuda_emulator/model/call_models.h"

namespace kiln::emu::driver {

// The driver version cuDriverGetVersion reports: CUDA_VERSION, or
// KILN_EMU_DRIVER_VERSION (12000 to CUDA_VERSION) to play an older driver,
// e.g. 12040 (conditional nodes without SWITCH) or 12030 (none); -1 for a
// malformed value, which cuInit refuses.
int EmulatedDriverVersion();

class EmulatedDevice {
 public:
  static EmulatedDevice& Get();

  // cuInit: reads KILN_EMU_CHECK, KILN_EMU_THREADS, KILN_EMU_SAMPLE and
  // KILN_EMU_FAULT and
  // starts the pool on the first call; every call returns the first call's
  // result.
  CUresult Initialize();

  // Entry-point preambles. Both clear the thread's error detail; then
  // EnterDriver checks that cuInit succeeded, and EnterContext also that
  // the primary context is current on this thread and not sticky-failed.
  CUresult EnterDriver();
  CUresult EnterContext();

  // How many devices cuDeviceGetCount reports (after cuInit).
  int device_count() const { return device_count_; }
  // Device `device`'s primary context (its handle is stable for the
  // process; the caller checked the ordinal).
  CUcontext RetainPrimaryContext(int device);
  CUresult ReleasePrimaryContext();
  CUresult SetCurrent(CUcontext context);
  CUcontext current() const;
  // The ordinal of the device whose context is current (0 when none is).
  int current_device() const;

  // A kernel (or library call) faulted: reports `message` on stderr as
  // compute-sanitizer would, makes the context sticky-failed and returns
  // the CUresult the fault maps to, with the message as the detail.
  CUresult FailLaunch(const std::string& message);

  DeviceMemory& memory() { return memory_; }
  ThreadPool& pool() { return *pool_; }
  const CheckOptions& checks() const { return checks_; }
  // KILN_EMU_SAMPLE: blocks each launch runs at most (0: all).
  uint32_t sample_blocks() const { return sample_blocks_; }
  Timeline& timeline() { return timeline_; }
  ModuleTable& modules() { return modules_; }
  FaultInjector& faults() { return faults_; }
  Graphs& graphs() { return graphs_; }

  // Work on `stream` (whose live timeline the caller found): run now, or
  // recorded into the stream's capture (graphs.h). Counted in ApiCalls.
  CUresult Issue(CUstream stream, StreamTimeline& timeline, GraphNode node);
  // A library double's compute call on `stream`: `work` checks its
  // operands, computes and models the call, as a library call node.
  CUresult IssueLibraryCall(const char* call, CUstream stream, StreamTimeline& timeline,
                            std::function<CUresult(CUstream, StreamTimeline&)> work) {
    GraphNode node;
    node.kind = GraphNodeKind::kLibraryCall;
    node.name = call;
    node.run = std::move(work);
    return Issue(stream, timeline, std::move(node));
  }
  // Runs the nodes of a graph launch on `stream`; the first failing node's
  // result is returned.
  CUresult RunGraph(const std::vector<GraphNode>& nodes, CUstream stream, StreamTimeline& timeline);
  // The nodes of a launched graph or of a conditional body (not counted
  // as a launch).
  CUresult RunNodes(const std::vector<GraphNode>& nodes, CUstream stream, StreamTimeline& timeline);
  CUresult RunConditional(const ConditionalNode& c, CUstream stream, StreamTimeline& timeline);
  // One node's work, after the launch and library fault injection.
  CUresult RunNode(const GraphNode& node, CUstream stream, StreamTimeline& timeline);
  enum class Counted { kGraphInstantiation, kGraphUpdate, kStreamSync };
  void Count(Counted what);
  KilnEmuApiCalls ApiCalls() const;

  // The library doubles count the handles and descriptors they hand out.
  void CountLibraryHandles(int64_t delta) { library_handles_.fetch_add(delta); }
  void CountLibraryDescriptors(int64_t delta) { library_descriptors_.fetch_add(delta); }
  KilnEmuLiveObjects LiveObjects();
  // Every copy and memset the driver ran (kilnEmuTransferCounters).
  void CountTransfer(model::TransferKind kind, uint64_t bytes);
  KilnEmuTransferCounters TransferCounters() const;

 private:
  EmulatedDevice() = default;
  void DestroyContext();  // under context_mu_

  std::once_flag init_once_;
  CUresult init_result_ = CUDA_ERROR_NOT_INITIALIZED;
  std::string init_detail_;
  std::atomic<bool> initialized_{false};
  int device_count_ = 1;
  // One byte per device: the addresses are the primary contexts' handles.
  static constexpr int kMaxDevices = 64;
  char context_handles_[kMaxDevices] = {};
  CheckOptions checks_;
  uint32_t sample_blocks_ = 0;
  std::unique_ptr<ThreadPool> pool_;

  std::mutex context_mu_;
  int context_refs_ = 0;  // primary context retains
  std::atomic<bool> context_alive_{false};
  std::atomic<CUresult> sticky_error_{CUDA_SUCCESS};
  std::string sticky_detail_;  // under context_mu_

  DeviceMemory memory_;
  Timeline timeline_;
  ModuleTable modules_;
  FaultInjector faults_;
  Graphs graphs_;
  // KilnEmuApiCalls' fields, in order.
  static constexpr int kApiCallKinds = 11;
  std::atomic<uint64_t> api_calls_[kApiCallKinds] = {};
  std::atomic<int64_t> library_handles_{0}, library_descriptors_{0};
  // Calls and bytes by model::TransferKind.
  static constexpr int kTransferKinds = 4;
  std::atomic<uint64_t> transfer_calls_[kTransferKinds] = {}, transfer_bytes_[kTransferKinds] = {};
};

}  // namespace kiln::emu::driver
