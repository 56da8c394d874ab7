// EmulatedDevice: initialization, the primary context and its sticky
// error; see emulated_device.h.
#include "cuda_emulator/driver/emulated_device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/exec/block_sample.h"

namespace kiln::emu::driver {

namespace {

// The context current on this thread: the primary context's handle or null.
thread_local CUcontext t_current = nullptr;

// KILN_EMU_DEVICES: how many devices the emulator exposes (default 8).
StatusOr<int> DeviceCountFromEnvironment(int max_devices) {
  const char* v = std::getenv("KILN_EMU_DEVICES");
  if (!v || !*v) return 8;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > max_devices)
    return Error("KILN_EMU_DEVICES must be a device count from 1 to " + std::to_string(max_devices) + ", got '" +
                 v + "'");
  return static_cast<int>(n);
}

// The fault class of a launch error, from the first words of its message
// (the memcheck reports start "invalid global load ...").
CUresult FaultResult(const std::string& message) {
  if (message.rfind("misaligned ", 0) == 0) return CUDA_ERROR_MISALIGNED_ADDRESS;
  if (message.rfind("invalid ", 0) == 0) return CUDA_ERROR_ILLEGAL_ADDRESS;
  return CUDA_ERROR_LAUNCH_FAILED;
}

}  // namespace

EmulatedDevice& EmulatedDevice::Get() {
  // Deliberately never destroyed; see the header.
  static EmulatedDevice* device = new EmulatedDevice();
  return *device;
}

CUresult EmulatedDevice::Initialize() {
  std::call_once(init_once_, [this] {
    StatusOr<CheckOptions> checks = CheckOptions::FromEnvironment();
    StatusOr<int> threads = EmulatorThreadCount();
    StatusOr<uint32_t> sample = SampleBlocksFromEnvironment();
    Status faults = faults_.ArmFromEnvironment();
    StatusOr<int> devices = DeviceCountFromEnvironment(kMaxDevices);
    for (const Status& s : {checks.status(), threads.status(), sample.status(), faults, devices.status()}) {
      if (s.ok()) continue;
      init_result_ = CUDA_ERROR_INVALID_VALUE;
      init_detail_ = "cuInit: " + s.message();
      return;
    }
    checks_ = *checks;
    sample_blocks_ = *sample;
    device_count_ = *devices;
    pool_ = std::make_unique<ThreadPool>(*threads);
    init_result_ = CUDA_SUCCESS;
    initialized_.store(true);
  });
  ClearErrorDetail();
  if (init_result_ != CUDA_SUCCESS) return Fail(init_result_, init_detail_);
  return CUDA_SUCCESS;
}

CUresult EmulatedDevice::EnterDriver() {
  ClearErrorDetail();
  if (!initialized_.load()) return Fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit was not called (or failed)");
  return CUDA_SUCCESS;
}

CUresult EmulatedDevice::EnterContext() {
  if (CUresult r = EnterDriver(); r != CUDA_SUCCESS) return r;
  if (t_current == nullptr || !context_alive_.load()) {
    return Fail(CUDA_ERROR_INVALID_CONTEXT,
                "no CUDA context is current on this thread (cuDevicePrimaryCtxRetain, cuCtxSetCurrent)");
  }
  CUresult sticky = sticky_error_.load();
  if (sticky != CUDA_SUCCESS) {
    std::lock_guard<std::mutex> lock(context_mu_);
    return Fail(sticky, "the context is unusable after an earlier fault: " + sticky_detail_);
  }
  return CUDA_SUCCESS;
}

CUcontext EmulatedDevice::RetainPrimaryContext(int device) {
  std::lock_guard<std::mutex> lock(context_mu_);
  ++context_refs_;
  context_alive_.store(true);
  return reinterpret_cast<CUcontext>(&context_handles_[device]);
}

CUresult EmulatedDevice::ReleasePrimaryContext() {
  std::lock_guard<std::mutex> lock(context_mu_);
  if (context_refs_ == 0) {
    return Fail(CUDA_ERROR_INVALID_CONTEXT, "cuDevicePrimaryCtxRelease: the primary context is not retained");
  }
  if (--context_refs_ == 0) DestroyContext();
  return CUDA_SUCCESS;
}

void EmulatedDevice::DestroyContext() {
  // Modules first: their globals are freed with the rest of the memory.
  modules_.Clear();
  graphs_.Clear();
  timeline_.Clear();
  memory_.Reset();
  context_alive_.store(false);
  sticky_error_.store(CUDA_SUCCESS);
  sticky_detail_.clear();
}

CUresult EmulatedDevice::SetCurrent(CUcontext context) {
  const char* handle = reinterpret_cast<const char*>(context);
  if (context != nullptr && (handle < context_handles_ || handle >= context_handles_ + device_count_)) {
    return Fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent: not a primary context's handle");
  }
  if (context != nullptr && !context_alive_.load()) {
    return Fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent: the primary context was released");
  }
  t_current = context;
  return CUDA_SUCCESS;
}

CUcontext EmulatedDevice::current() const { return context_alive_.load() ? t_current : nullptr; }

int EmulatedDevice::current_device() const {
  if (!t_current) return 0;
  return static_cast<int>(reinterpret_cast<const char*>(t_current) - context_handles_);
}

KilnEmuLiveObjects EmulatedDevice::LiveObjects() {
  KilnEmuLiveObjects live{};
  live.device_allocations = memory_.live_allocations(MemoryKind::kDevice);
  live.device_bytes = memory_.bytes_in_use();
  live.host_allocations = memory_.live_allocations(MemoryKind::kPinnedHost);
  live.modules = modules_.size();
  live.streams = timeline_.stream_count();
  live.events = timeline_.event_count();
  live.library_handles = static_cast<uint64_t>(library_handles_.load());
  live.library_descriptors = static_cast<uint64_t>(library_descriptors_.load());
  live.graphs = graphs_.graph_count();
  live.graph_execs = graphs_.exec_count();
  return live;
}

namespace {

// Indices into api_calls_, as KilnEmuApiCalls orders its fields.
enum ApiCallIndex {
  kKernelLaunches, kLibraryCalls, kCopies, kMemsets, kEventRecords, kCaptured,
  kGraphLaunches, kGraphNodesRun, kGraphInstantiations, kGraphUpdates, kStreamSyncs
};

int IndexOf(GraphNodeKind kind) {
  switch (kind) {
    case GraphNodeKind::kKernel: return kKernelLaunches;
    case GraphNodeKind::kLibraryCall: return kLibraryCalls;
    case GraphNodeKind::kMemcpy: return kCopies;
    case GraphNodeKind::kMemset: return kMemsets;
    case GraphNodeKind::kEventRecord: return kEventRecords;
    case GraphNodeKind::kConditional: break;  // added by cuGraphAddNode, never issued
  }
  return kKernelLaunches;
}

}  // namespace

CUresult EmulatedDevice::Issue(CUstream stream, StreamTimeline& timeline, GraphNode node) {
  api_calls_[IndexOf(node.kind)].fetch_add(1, std::memory_order_relaxed);
  bool captured = false;
  CUresult r = graphs_.Record(stream, node, &captured);
  if (captured) {
    if (r == CUDA_SUCCESS) api_calls_[kCaptured].fetch_add(1, std::memory_order_relaxed);
    return r;
  }
  return RunNode(node, stream, timeline);
}

// Injected launch and library faults strike when the work runs, directly
// or as a graph's node, before it starts; they are not sticky.
CUresult EmulatedDevice::RunNode(const GraphNode& node, CUstream stream, StreamTimeline& timeline) {
  if (node.kind == GraphNodeKind::kKernel) {
    std::string injected = faults_.Take(FaultKind::kLaunch, "cuLaunchKernel of '" + node.name + "'");
    if (!injected.empty()) return Fail(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, injected);
  } else if (node.kind == GraphNodeKind::kLibraryCall) {
    std::string injected = faults_.Take(FaultKind::kLibrary, node.name);
    if (!injected.empty()) return Fail(CUDA_ERROR_LAUNCH_FAILED, injected);
  }
  if (node.kind == GraphNodeKind::kConditional) return RunConditional(*node.conditional, stream, timeline);
  return node.run(stream, timeline);
}

int EmulatedDriverVersion() {
  const char* v = std::getenv("KILN_EMU_DRIVER_VERSION");
  if (!v || !*v) return CUDA_VERSION;
  char* end = nullptr;
  long version = std::strtol(v, &end, 10);
  return *end == '\0' && version >= 12000 && version <= CUDA_VERSION ? static_cast<int>(version) : -1;
}

// Lane 0 runs on the launch stream's timeline; every other lane on a
// timeline of its own for this launch (events recorded on it keep it).
// A node starts when the launch starts and its dependencies have finished;
// the stream's clock ends at the last node's end.
CUresult EmulatedDevice::RunGraph(const std::vector<GraphNode>& nodes, CUstream stream, StreamTimeline& timeline) {
  api_calls_[kGraphLaunches].fetch_add(1, std::memory_order_relaxed);
  return RunNodes(nodes, stream, timeline);
}

// A conditional node runs its bodies as its handle's value (set by device
// code before and, for a loop, inside the body) says.
CUresult EmulatedDevice::RunConditional(const ConditionalNode& c, CUstream stream, StreamTimeline& timeline) {
  auto run = [&](size_t body) { return RunNodes(*c.frozen[body], stream, timeline); };
  unsigned value = graphs_.ConditionalValue(c.handle);
  switch (c.type) {
    case CU_GRAPH_COND_TYPE_WHILE:
      for (; value != 0; value = graphs_.ConditionalValue(c.handle)) {
        if (CUresult r = run(0); r != CUDA_SUCCESS) return r;
      }
      return CUDA_SUCCESS;
    case CU_GRAPH_COND_TYPE_IF:
      if (value != 0) return run(0);
      return c.frozen.size() == 2 ? run(1) : CUDA_SUCCESS;
    case CU_GRAPH_COND_TYPE_SWITCH:
      return value < c.frozen.size() ? run(value) : CUDA_SUCCESS;
    default:
      return Fail(CUDA_ERROR_INVALID_VALUE, "conditional node of unknown type");
  }
}

CUresult EmulatedDevice::RunNodes(const std::vector<GraphNode>& nodes, CUstream stream, StreamTimeline& timeline) {
  const double start_us = timeline.clock_us();
  std::vector<std::shared_ptr<StreamTimeline>> lanes;
  std::vector<double> end_us(nodes.size(), start_us);
  double last_us = start_us;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& node = nodes[i];
    api_calls_[kGraphNodesRun].fetch_add(1, std::memory_order_relaxed);
    StreamTimeline* lane = &timeline;
    if (node.lane > 0) {
      if (lanes.size() < static_cast<size_t>(node.lane)) lanes.resize(static_cast<size_t>(node.lane));
      std::shared_ptr<StreamTimeline>& own = lanes[static_cast<size_t>(node.lane) - 1];
      if (!own) own = std::make_shared<StreamTimeline>();
      lane = own.get();
    }
    double ready_us = start_us;
    for (size_t d : node.dependencies) ready_us = std::max(ready_us, end_us[d]);
    lane->AdvanceTo(ready_us);
    if (CUresult r = RunNode(node, stream, *lane); r != CUDA_SUCCESS) return r;
    end_us[i] = lane->clock_us();
    last_us = std::max(last_us, end_us[i]);
  }
  timeline.AdvanceTo(last_us);
  return CUDA_SUCCESS;
}

void EmulatedDevice::Count(Counted what) {
  int index = what == Counted::kGraphInstantiation ? kGraphInstantiations
              : what == Counted::kGraphUpdate      ? kGraphUpdates
                                                   : kStreamSyncs;
  api_calls_[index].fetch_add(1, std::memory_order_relaxed);
}

KilnEmuApiCalls EmulatedDevice::ApiCalls() const {
  static_assert(sizeof(KilnEmuApiCalls) == kApiCallKinds * sizeof(uint64_t), "one counter per field");
  uint64_t v[kApiCallKinds];
  for (int i = 0; i < kApiCallKinds; ++i) v[i] = api_calls_[i].load();
  KilnEmuApiCalls c;
  std::memcpy(&c, v, sizeof c);
  return c;
}

void EmulatedDevice::CountTransfer(model::TransferKind kind, uint64_t bytes) {
  int k = static_cast<int>(kind);
  if (k < 0 || k >= kTransferKinds) return;
  transfer_calls_[k].fetch_add(1);
  transfer_bytes_[k].fetch_add(bytes);
}

KilnEmuTransferCounters EmulatedDevice::TransferCounters() const {
  auto calls = [this](model::TransferKind k) { return transfer_calls_[static_cast<int>(k)].load(); };
  auto bytes = [this](model::TransferKind k) { return transfer_bytes_[static_cast<int>(k)].load(); };
  using model::TransferKind;
  KilnEmuTransferCounters c{};
  c.host_to_device_copies = calls(TransferKind::kHostToDevice);
  c.host_to_device_bytes = bytes(TransferKind::kHostToDevice);
  c.device_to_host_copies = calls(TransferKind::kDeviceToHost);
  c.device_to_host_bytes = bytes(TransferKind::kDeviceToHost);
  c.device_to_device_copies = calls(TransferKind::kDeviceToDevice);
  c.device_to_device_bytes = bytes(TransferKind::kDeviceToDevice);
  c.memsets = calls(TransferKind::kMemset);
  c.memset_bytes = bytes(TransferKind::kMemset);
  return c;
}

CUresult EmulatedDevice::FailLaunch(const std::string& message) {
  // The report reaches callers through kilnEmuLastErrorDetail (kiln's
  // runtime puts it in its one-line error); KILN_EMU_REPORT=1 also prints
  // it, as compute-sanitizer does, for programs that do not ask.
  if (const char* r = std::getenv("KILN_EMU_REPORT"); r && std::string(r) == "1")
    std::fprintf(stderr, "kiln-emulator: %s\n", message.c_str());
  CUresult result = FaultResult(message);
  {
    std::lock_guard<std::mutex> lock(context_mu_);
    // The first fault is the one worth reporting later.
    if (sticky_error_.load() == CUDA_SUCCESS) {
      sticky_detail_ = message;
      sticky_error_.store(result);
    }
  }
  return Fail(result, message);
}

}  // namespace kiln::emu::driver
