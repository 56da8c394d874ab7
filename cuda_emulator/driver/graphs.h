// CUDA graphs of the emulated device: stream capture, graphs and
// executable graphs.
//
// Work issued on a stream is a GraphNode: a closure that does what the
// direct call does after its argument checks (launch the kernel, run the
// library double's computation, copy, memset, record the event).
// EmulatedDevice::Issue runs it at once, or, while the stream is capturing,
// appends it to the capture's graph. cuGraphLaunch runs an executable
// graph's nodes in capture order (a topological order) on its stream, each
// as the direct call would have (memcheck included).
//
// A capture spans streams as on the driver: an event recorded on a
// capturing stream (without CU_EVENT_RECORD_EXTERNAL) remembers the
// capturing stream's last nodes; a stream that waits for it
// (cuStreamWaitEvent) joins the capture, its next node depending on those
// nodes; a capturing stream that waits for it adds them to its own. So a
// node depends on the nodes before it on its stream and on what its stream
// waited for: the graph forks and joins. The capture must end on the
// stream that began it, and every other stream's last nodes must by then
// be reachable from that stream's (joined back), else cuStreamEndCapture
// fails with CUDA_ERROR_STREAM_CAPTURE_UNJOINED. Each joined stream is a
// lane of the graph; a launch models each lane on a clock of its own,
// starting a node when its dependencies have finished, so branches on
// different lanes overlap in modeled time (timeline.h).
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
  // Indices of the earlier nodes this one depends on (the graph's edges),
  // and the lane: which of the capture's streams it was captured on (0:
  // the stream that began the capture).
  std::vector<size_t> dependencies;
  int lane = 0;
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
  // Fails with CUDA_ERROR_STREAM_CAPTURE_UNMATCHED on a stream that joined
  // the capture (it must end where it began) and
  // CUDA_ERROR_STREAM_CAPTURE_UNJOINED when a joined stream's work is not
  // joined back; either way every stream of the capture leaves it.
  CUresult EndCapture(CUstream stream, CUgraph* out);
  // cuEventRecord (no CU_EVENT_RECORD_EXTERNAL) on capturing `stream`:
  // the event now stands for the stream's last nodes in its capture.
  void RecordEventInCapture(CUstream stream, CUevent event);
  // cuStreamWaitEvent on `stream` for an event last recorded inside a
  // capture (`in_capture`) or outside one. Sets *handled when the capture
  // machinery took the wait: the stream joined the event's capture, added
  // its nodes to its dependencies, or the wait failed (an event of another
  // capture, CUDA_ERROR_STREAM_CAPTURE_MERGE; a capturing stream waiting
  // for an event from outside its capture, or an event of an ended
  // capture, CUDA_ERROR_STREAM_CAPTURE_ISOLATION). Not handled: a plain
  // wait between streams that are not capturing.
  CUresult WaitEvent(CUstream stream, CUevent event, bool in_capture, bool* handled);
  // The event was destroyed: forget its captured nodes.
  void EventDestroyed(CUevent event);
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
  // cuGraphGetNodes / cuGraphGetEdges: handles are the nodes' addresses
  // (stable: an ended capture's graph never changes). `from`/`to` null:
  // only the count; else up to *count entries, *count set to the number.
  CUresult GetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count);
  CUresult GetEdges(CUgraph graph, CUgraphNode* from, CUgraphNode* to, size_t* count);

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
    CUstream origin = nullptr;  // the stream that began it
    // Each member stream's lane and last nodes (what its next node
    // depends on).
    struct Member {
      int lane = 0;
      std::vector<size_t> frontier;
    };
    std::map<CUstream, Member> members;
  };
  // What an event recorded inside a capture stands for.
  struct CapturedEvent {
    uint64_t capture_id = 0;
    std::vector<size_t> nodes;
  };
  void Invalidate(Capture& c, std::string why);  // under mu_
  // Removes every member stream of `c` from captures_ (under mu_).
  void EndAll(const std::shared_ptr<Capture>& c);
  // Whether every member's frontier is reachable from the origin's.
  static bool Joined(const Capture& c, std::string* unjoined);

  std::mutex mu_;
  std::atomic<int> active_{0};
  int global_captures_ = 0;  // captures in CU_STREAM_CAPTURE_MODE_GLOBAL
  uint64_t next_id_ = 1;
  // Every stream of a capture maps to it (its origin and the streams
  // that joined).
  std::map<CUstream, std::shared_ptr<Capture>> captures_;
  std::map<CUevent, CapturedEvent> captured_events_;
  std::map<CUgraph, std::unique_ptr<Graph>> graphs_;
  // An exec's handle is its GraphExec's address; its nodes are shared with
  // launches in flight.
  struct ExecSlot {
    std::shared_ptr<const std::vector<GraphNode>> nodes;
  };
  std::map<CUgraphExec, std::unique_ptr<ExecSlot>> execs_;
};

}  // namespace kiln::emu::driver
