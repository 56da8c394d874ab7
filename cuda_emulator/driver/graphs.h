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
//
// Conditional nodes (CUDA 12.4+): cuGraphConditionalHandleCreate makes a
// handle whose value device code sets (cudaGraphSetConditional, the PTX
// interpreter's device-runtime builtin); cuGraphAddNode adds a WHILE, IF or
// SWITCH node whose body graphs it creates, to be filled with
// cuStreamBeginCaptureToGraph; the node's run executes its bodies as the
// handle's value says. Body graphs take kernels, copies, memsets, library
// calls and conditionals; an event record captured into one invalidates
// the capture (the driver allows no event nodes in a body). A handle's
// value lives with the handle, not per exec (kiln captures a graph, and so
// makes handles, per stream).
#pragma once

#include <cuda.h>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln::emu::driver {

class StreamTimeline;

enum class GraphNodeKind { kKernel, kMemcpy, kMemset, kEventRecord, kLibraryCall, kConditional };

struct Graph;
struct GraphNode;

// A conditional node's parameters. In a graph, `bodies` are the body graphs
// being built; in an exec, `frozen` are their nodes as instantiated.
struct ConditionalNode {
  uint64_t handle = 0;
  CUgraphConditionalNodeType type = CU_GRAPH_COND_TYPE_IF;
  std::vector<std::shared_ptr<Graph>> bodies;
  std::vector<std::shared_ptr<const std::vector<GraphNode>>> frozen;
};

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
  // kConditional: its handle, type and bodies (run is unused).
  std::shared_ptr<const ConditionalNode> conditional;
};

// A deque: node handles are node addresses, which stay valid as a graph
// grows (captures into existing graphs, added nodes).
struct Graph {
  std::deque<GraphNode> nodes;
  bool body = false;  // a conditional node's body graph
};

class Graphs {
 public:
  CUresult BeginCapture(CUstream stream, CUstreamCaptureMode mode);
  // cuStreamBeginCaptureToGraph: captures into the live graph `graph`
  // (e.g. a conditional body), the first nodes depending on `deps`;
  // cuStreamEndCapture then hands back the same graph.
  CUresult BeginCaptureToGraph(CUstream stream, CUgraph graph, const CUgraphNode* deps, size_t count,
                               CUstreamCaptureMode mode);
  // cuStreamGetCaptureInfo's graph and dependencies (valid until the
  // stream's next capture call); null and 0 when not capturing.
  void CaptureGraph(CUstream stream, CUgraph* graph, const CUgraphNode** deps, size_t* count);
  // cuStreamUpdateCaptureDependencies: CU_STREAM_SET_CAPTURE_DEPENDENCIES
  // or CU_STREAM_ADD_CAPTURE_DEPENDENCIES.
  CUresult UpdateCaptureDependencies(CUstream stream, const CUgraphNode* deps, size_t count, unsigned flags);
  // cuGraphConditionalHandleCreate on a live (or capturing) graph.
  CUresult CreateConditionalHandle(uint64_t* out, CUgraph graph, unsigned default_value, unsigned flags);
  // cuGraphAddNode of a conditional node; `switch_and_else`: the driver
  // version has SWITCH nodes and IF nodes with an else body (12.8+).
  CUresult AddConditionalNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count,
                              CUDA_CONDITIONAL_NODE_PARAMS& params, bool switch_and_else);
  // cudaGraphSetConditional from device code; false for an unknown handle.
  bool SetConditional(uint64_t handle, unsigned value);
  unsigned ConditionalValue(uint64_t handle);
  // A launch of `nodes` begins: handles made with
  // CU_GRAPH_COND_ASSIGN_DEFAULT take their default value.
  void ResetConditionals(const std::vector<GraphNode>& nodes);
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
    // What it captures into: `graph` it owns (cuStreamBeginCapture) or an
    // existing graph (cuStreamBeginCaptureToGraph).
    Graph* target = nullptr;
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
      std::vector<CUgraphNode> frontier_handles;  // cuStreamGetCaptureInfo's
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
  // A live graph, capturing or not, or a live body graph; null if none
  // (under mu_).
  Graph* FindGraph(CUgraph graph);
  // The nodes' indices in `g`; false if one is not g's (under mu_).
  static bool NodeIndices(const Graph& g, const CUgraphNode* nodes, size_t count, std::vector<size_t>* out);
  CUresult BeginCaptureInto(CUstream stream, CUstreamCaptureMode mode, std::unique_ptr<Graph> owned, Graph* target,
                            std::vector<size_t> frontier);

  std::mutex mu_;
  std::atomic<int> active_{0};
  int global_captures_ = 0;  // captures in CU_STREAM_CAPTURE_MODE_GLOBAL
  uint64_t next_id_ = 1;
  // Every stream of a capture maps to it (its origin and the streams
  // that joined).
  std::map<CUstream, std::shared_ptr<Capture>> captures_;
  std::map<CUevent, CapturedEvent> captured_events_;
  std::map<CUgraph, std::unique_ptr<Graph>> graphs_;
  // Body graphs, owned by their conditional nodes.
  std::map<CUgraph, std::weak_ptr<Graph>> bodies_;
  struct Handle {
    unsigned default_value = 0, flags = 0, value = 0;
    const Graph* graph = nullptr;  // the graph it was created for
  };
  // Forgets the handles whose graph is gone and that no exec's nodes name
  // (under mu_; after a graph or exec is destroyed).
  void CollectHandles();
  std::map<uint64_t, Handle> handles_;
  uint64_t next_handle_ = 1;
  // An exec's handle is its GraphExec's address; its nodes are shared with
  // launches in flight.
  struct ExecSlot {
    std::shared_ptr<const std::vector<GraphNode>> nodes;
  };
  std::map<CUgraphExec, std::unique_ptr<ExecSlot>> execs_;
};

}  // namespace kiln::emu::driver
