// CUDA graphs of the emulated device: stream capture, graphs and
// executable graphs.
//
// Work issued on a stream is a GraphNode: a closure that does what the
// direct call does after its argument checks (launch the kernel, run the
// library double's computation, copy, memset, record the event).
// EmulatedDevice::Issue runs it at once, or, while the stream is capturing,
// appends it to the capture's graph. cuGraphLaunch runs an executable
// graph's nodes in capture order on its stream, each as the direct call
// would have (memcheck included). Captured nodes form a chain, which is
// what capturing one stream produces on the real driver too.
//
// Capture follows the driver's rules: the legacy default stream cannot be
// captured; a call that would synchronize a capturing stream fails with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates its capture (the
// stream then reports CU_STREAM_CAPTURE_STATUS_INVALIDATED and
// cuStreamEndCapture CUDA_ERROR_STREAM_CAPTURE_INVALIDATED); "potentially
// unsafe" calls (cuMemAlloc, cuMemFree, their host forms, synchronous
// copies) fail on a thread that is capturing in global or thread-local
// mode, and on every thread while any capture is in global mode; a
// non-relaxed capture must end on the thread that began it.
#pragma once

#include <cuda.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln::emu::driver {

class StreamTimeline;

enum class GraphNodeKind { kKernel, kMemcpy, kMemset, kEventRecord, kLibraryCall };

struct GraphNode {
  GraphNodeKind kind = GraphNodeKind::kKernel;
  // The kernel or library call (update matching and error messages).
  std::string name;
  // Kernel nodes: the CUfunction (cuGraphExecUpdate keeps a node's function).
  const void* function = nullptr;
  // Does the work on `stream`, whose timeline it is given; returns what
  // the direct call would have returned for the work itself.
  std::function<CUresult(CUstream stream, StreamTimeline& timeline)> run;
};

struct Graph {
  std::vector<GraphNode> nodes;
};

class Graphs {
 public:
  CUresult BeginCapture(CUstream stream, CUstreamCaptureMode mode);
  CUresult EndCapture(CUstream stream, CUgraph* out);
  CUresult IsCapturing(CUstream stream, CUstreamCaptureStatus* out);
  // The capture's id (cuStreamGetCaptureInfo), 0 when not capturing.
  uint64_t CaptureId(CUstream stream);

  // Whether any stream is capturing: the fast check before a lookup.
  bool AnyCapture() const { return active_.load(std::memory_order_relaxed) > 0; }
  // When `stream` is capturing: appends `node` (CUDA_SUCCESS) or fails
  // with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, and sets *captured.
  CUresult Record(CUstream stream, GraphNode& node, bool* captured);
  // A call that must not see a capturing stream (synchronize, query):
  // invalidates the capture and fails; CUDA_SUCCESS when not capturing.
  CUresult ForbidOnCapturingStream(CUstream stream, const char* call);
  // A potentially unsafe call (see the file comment): fails and
  // invalidates this thread's non-relaxed captures when prohibited.
  CUresult CheckUnsafeCall(const char* call);
  // The stream is being destroyed: its capture ends, invalidated.
  void StreamDestroyed(CUstream stream);

  CUresult Instantiate(CUgraphExec* out, CUgraph graph, unsigned long long flags);
  CUresult DestroyGraph(CUgraph graph);
  CUresult DestroyExec(CUgraphExec exec);
  // cuGraphExecUpdate: the same node kinds in the same order, kernel nodes
  // with the same function and library calls of the same name; then the
  // exec's nodes take the graph's parameters.
  CUresult Update(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo* info);
  // A copy of the exec's nodes to run (the exec may be updated or
  // destroyed by another thread meanwhile), or null if not live.
  std::shared_ptr<const std::vector<GraphNode>> ExecNodes(CUgraphExec exec);
  // Nodes of a live graph (cuGraphGetNodes' count); -1 if not live.
  int64_t NodeCount(CUgraph graph);

  uint64_t graph_count();
  uint64_t exec_count();
  void Clear();  // context destruction

 private:
  struct Capture {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    std::thread::id thread;
    uint64_t id = 0;
    bool invalidated = false;
    std::string why;  // what invalidated it
    std::unique_ptr<Graph> graph;
  };
  void Invalidate(Capture& c, std::string why);  // under mu_

  std::mutex mu_;
  std::atomic<int> active_{0};
  int global_captures_ = 0;  // captures in CU_STREAM_CAPTURE_MODE_GLOBAL
  uint64_t next_id_ = 1;
  std::map<CUstream, Capture> captures_;
  std::map<CUgraph, std::unique_ptr<Graph>> graphs_;
  // An exec's handle is its GraphExec's address; its nodes are shared with
  // launches in flight.
  struct ExecSlot {
    std::shared_ptr<const std::vector<GraphNode>> nodes;
  };
  std::map<CUgraphExec, std::unique_ptr<ExecSlot>> execs_;
};

}  // namespace kiln::emu::driver
