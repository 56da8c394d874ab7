// Stream capture, graphs and executable graphs; see graphs.h.
#include "cuda_emulator/driver/graphs.h"

#include <algorithm>
#include <set>

#include "cuda_emulator/driver/driver_errors.h"

namespace kiln::emu::driver {

namespace {

bool IsLegacyStream(CUstream stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

const char* NodeKindName(GraphNodeKind k) {
  switch (k) {
    case GraphNodeKind::kKernel: return "kernel";
    case GraphNodeKind::kMemcpy: return "memcpy";
    case GraphNodeKind::kMemset: return "memset";
    case GraphNodeKind::kEventRecord: return "event record";
    case GraphNodeKind::kLibraryCall: return "library call";
  }
  return "?";
}

}  // namespace

void Graphs::Invalidate(Capture& c, std::string why) {
  if (c.invalidated) return;
  c.invalidated = true;
  c.why = std::move(why);
}

CUresult Graphs::BeginCapture(CUstream stream, CUstreamCaptureMode mode) {
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamBeginCapture: unknown capture mode " + std::to_string(mode));
  }
  if (IsLegacyStream(stream)) {
    return Fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "cuStreamBeginCapture: the legacy default stream cannot be captured");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (captures_.count(stream)) {
    return Fail(CUDA_ERROR_ILLEGAL_STATE, "cuStreamBeginCapture: the stream is already capturing");
  }
  auto c = std::make_shared<Capture>();
  c->mode = mode;
  c->thread = std::this_thread::get_id();
  c->id = next_id_++;
  c->graph = std::make_unique<Graph>();
  c->origin = stream;
  c->members[stream] = Capture::Member{};
  captures_[stream] = c;
  if (mode == CU_STREAM_CAPTURE_MODE_GLOBAL) ++global_captures_;
  active_.fetch_add(1);
  return CUDA_SUCCESS;
}

void Graphs::EndAll(const std::shared_ptr<Capture>& c) {
  for (const auto& [member, m] : c->members) captures_.erase(member);
  if (c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL) --global_captures_;
  active_.fetch_sub(1);
}

bool Graphs::Joined(const Capture& c, std::string* unjoined) {
  // Nodes reachable backwards from the origin's last nodes.
  std::vector<bool> reached(c.graph->nodes.size(), false);
  std::vector<size_t> todo = c.members.at(c.origin).frontier;
  while (!todo.empty()) {
    size_t n = todo.back();
    todo.pop_back();
    if (reached[n]) continue;
    reached[n] = true;
    for (size_t d : c.graph->nodes[n].dependencies) todo.push_back(d);
  }
  for (const auto& [member, m] : c.members) {
    for (size_t n : m.frontier) {
      if (!reached[n]) {
        *unjoined = "the work of the capture's lane " + std::to_string(m.lane) + " (node " + std::to_string(n) +
                    ") is not joined back into the stream that began the capture";
        return false;
      }
    }
  }
  return true;
}

CUresult Graphs::EndCapture(CUstream stream, CUgraph* out) {
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamEndCapture: the graph pointer is null");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) return Fail(CUDA_ERROR_ILLEGAL_STATE, "cuStreamEndCapture: the stream is not capturing");
  std::shared_ptr<Capture> c = it->second;
  if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && c->thread != std::this_thread::get_id()) {
    return Fail(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
                "cuStreamEndCapture: the capture was begun on another thread (not in relaxed mode)");
  }
  *out = nullptr;
  EndAll(c);
  if (stream != c->origin) {
    return Fail(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
                "cuStreamEndCapture: the stream joined the capture; it must end on the stream that began it");
  }
  if (c->invalidated) {
    return Fail(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "cuStreamEndCapture: the capture was invalidated: " + c->why);
  }
  std::string unjoined;
  if (!Joined(*c, &unjoined)) return Fail(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "cuStreamEndCapture: " + unjoined);
  CUgraph handle = reinterpret_cast<CUgraph>(c->graph.get());
  graphs_[handle] = std::move(c->graph);
  *out = handle;
  return CUDA_SUCCESS;
}

CUresult Graphs::IsCapturing(CUstream stream, CUstreamCaptureStatus* out) {
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamIsCapturing: the status pointer is null");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(stream);
  *out = it == captures_.end()         ? CU_STREAM_CAPTURE_STATUS_NONE
         : it->second->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                   : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  return CUDA_SUCCESS;
}

uint64_t Graphs::CaptureId(CUstream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(stream);
  return it == captures_.end() ? 0 : it->second->id;
}

CUresult Graphs::Record(CUstream stream, GraphNode& node, bool* captured) {
  *captured = false;
  if (!AnyCapture()) return CUDA_SUCCESS;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) return CUDA_SUCCESS;
  *captured = true;
  Capture& c = *it->second;
  if (c.invalidated) {
    return Fail(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "the stream's capture was invalidated: " + c.why);
  }
  Capture::Member& m = c.members[stream];
  node.dependencies = m.frontier;
  node.lane = m.lane;
  m.frontier = {c.graph->nodes.size()};
  c.graph->nodes.push_back(std::move(node));
  return CUDA_SUCCESS;
}

void Graphs::RecordEventInCapture(CUstream stream, CUevent event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) return;
  captured_events_[event] = CapturedEvent{it->second->id, it->second->members[stream].frontier};
}

CUresult Graphs::WaitEvent(CUstream stream, CUevent event, bool in_capture, bool* handled) {
  *handled = false;
  if (!AnyCapture() && !in_capture) return CUDA_SUCCESS;
  std::lock_guard<std::mutex> lock(mu_);
  auto mine = captures_.find(stream);
  std::shared_ptr<Capture> source;
  auto ce = captured_events_.find(event);
  if (in_capture && ce != captured_events_.end()) {
    for (auto& [s, c] : captures_) {
      if (c->id == ce->second.capture_id) source = c;
    }
  }
  if (!in_capture && mine == captures_.end()) return CUDA_SUCCESS;  // a plain wait
  *handled = true;
  if (!source) {
    std::string why = in_capture ? "cuStreamWaitEvent: the event was recorded in a stream capture that has ended"
                                 : "cuStreamWaitEvent: a capturing stream waits for an event recorded outside its capture";
    if (mine != captures_.end()) Invalidate(*mine->second, why);
    return Fail(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, why);
  }
  if (mine != captures_.end() && mine->second != source) {
    std::string why = "cuStreamWaitEvent: the event belongs to another stream capture";
    Invalidate(*mine->second, why);
    return Fail(CUDA_ERROR_STREAM_CAPTURE_MERGE, why);
  }
  if (source->invalidated) {
    return Fail(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "the event's capture was invalidated: " + source->why);
  }
  const std::vector<size_t>& nodes = ce->second.nodes;
  if (mine == captures_.end()) {  // the stream joins the capture
    Capture::Member joined;
    joined.lane = static_cast<int>(source->members.size());
    joined.frontier = nodes;
    source->members[stream] = std::move(joined);
    captures_[stream] = source;
    return CUDA_SUCCESS;
  }
  std::vector<size_t>& frontier = source->members[stream].frontier;
  for (size_t n : nodes) {
    if (std::find(frontier.begin(), frontier.end(), n) == frontier.end()) frontier.push_back(n);
  }
  return CUDA_SUCCESS;
}

void Graphs::EventDestroyed(CUevent event) {
  std::lock_guard<std::mutex> lock(mu_);
  captured_events_.erase(event);
}

CUresult Graphs::ForbidOnCapturingStream(CUstream stream, const char* call) {
  if (!AnyCapture()) return CUDA_SUCCESS;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) return CUDA_SUCCESS;
  std::string why = std::string(call) + " on a capturing stream";
  Invalidate(*it->second, why);
  return Fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, why + " (the capture is now invalidated)");
}

CUresult Graphs::CheckUnsafeCall(const char* call) {
  if (!AnyCapture()) return CUDA_SUCCESS;
  std::lock_guard<std::mutex> lock(mu_);
  std::thread::id self = std::this_thread::get_id();
  bool prohibited = global_captures_ > 0;
  for (auto& [stream, c] : captures_) {
    if (c->thread == self && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) prohibited = true;
  }
  if (!prohibited) return CUDA_SUCCESS;
  std::string why = std::string(call) + " while a stream capture prohibits potentially unsafe calls";
  for (auto& [stream, c] : captures_) {
    if (c->thread == self && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) Invalidate(*c, why);
  }
  return Fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
              why + " (global mode on any thread, or thread-local mode on this one; use relaxed mode)");
}

void Graphs::StreamDestroyed(CUstream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) return;
  std::shared_ptr<Capture> c = it->second;
  if (stream == c->origin) {
    EndAll(c);
    return;
  }
  Invalidate(*c, "a stream that joined the capture was destroyed");
  c->members.erase(stream);
  captures_.erase(it);
}

CUresult Graphs::Instantiate(CUgraphExec* out, CUgraph graph, unsigned long long flags) {
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphInstantiate: the exec pointer is null");
  if (flags != 0) {
    return Fail(CUDA_ERROR_NOT_SUPPORTED,
                "cuGraphInstantiate: the emulator supports flags 0 only, got " + std::to_string(flags));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphInstantiate: not a live graph");
  auto slot = std::make_unique<ExecSlot>();
  slot->nodes = std::make_shared<const std::vector<GraphNode>>(it->second->nodes);
  CUgraphExec handle = reinterpret_cast<CUgraphExec>(slot.get());
  execs_[handle] = std::move(slot);
  *out = handle;
  return CUDA_SUCCESS;
}

CUresult Graphs::DestroyGraph(CUgraph graph) {
  std::lock_guard<std::mutex> lock(mu_);
  if (graphs_.erase(graph) == 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphDestroy: not a live graph");
  return CUDA_SUCCESS;
}

CUresult Graphs::DestroyExec(CUgraphExec exec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (execs_.erase(exec) == 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphExecDestroy: not a live graph exec");
  return CUDA_SUCCESS;
}

CUresult Graphs::Update(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo* info) {
  if (!info) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphExecUpdate: the result info pointer is null");
  *info = CUgraphExecUpdateResultInfo{CU_GRAPH_EXEC_UPDATE_ERROR, nullptr, nullptr};
  std::lock_guard<std::mutex> lock(mu_);
  auto e = execs_.find(exec);
  auto g = graphs_.find(graph);
  if (e == execs_.end() || g == graphs_.end()) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphExecUpdate: not a live graph exec and graph");
  }
  const std::vector<GraphNode>& from = *e->second->nodes;
  const std::vector<GraphNode>& to = g->second->nodes;
  auto failed = [&](CUgraphExecUpdateResult why, std::string detail) {
    info->result = why;
    return Fail(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "cuGraphExecUpdate: " + detail);
  };
  if (from.size() != to.size()) {
    return failed(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED,
                  "the graph has " + std::to_string(to.size()) + " nodes, the exec " + std::to_string(from.size()));
  }
  for (size_t i = 0; i < from.size(); ++i) {
    std::string at = "node " + std::to_string(i) + ": ";
    if (from[i].kind != to[i].kind) {
      return failed(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED,
                    at + NodeKindName(from[i].kind) + " became " + NodeKindName(to[i].kind));
    }
    if (from[i].kind == GraphNodeKind::kKernel && from[i].function != to[i].function) {
      return failed(CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE,
                    at + "kernel '" + from[i].name + "' became '" + to[i].name + "'");
    }
    if (from[i].dependencies != to[i].dependencies || from[i].lane != to[i].lane) {
      return failed(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, at + "its dependencies changed");
    }
    if (from[i].kind == GraphNodeKind::kLibraryCall && from[i].name != to[i].name) {
      return failed(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED,
                    at + "library call " + from[i].name + " became " + to[i].name);
    }
  }
  e->second->nodes = std::make_shared<const std::vector<GraphNode>>(to);
  info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  return CUDA_SUCCESS;
}

std::shared_ptr<const std::vector<GraphNode>> Graphs::ExecNodes(CUgraphExec exec) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = execs_.find(exec);
  return it == execs_.end() ? nullptr : it->second->nodes;
}

int64_t Graphs::NodeCount(CUgraph graph) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = graphs_.find(graph);
  return it == graphs_.end() ? -1 : static_cast<int64_t>(it->second->nodes.size());
}

CUresult Graphs::GetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphGetNodes: not a live graph");
  std::vector<GraphNode>& all = it->second->nodes;
  if (nodes) {
    for (size_t i = 0; i < *count && i < all.size(); ++i) nodes[i] = reinterpret_cast<CUgraphNode>(&all[i]);
  }
  *count = all.size();
  return CUDA_SUCCESS;
}

CUresult Graphs::GetEdges(CUgraph graph, CUgraphNode* from, CUgraphNode* to, size_t* count) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphGetEdges: not a live graph");
  std::vector<GraphNode>& all = it->second->nodes;
  size_t edges = 0;
  for (size_t n = 0; n < all.size(); ++n) {
    for (size_t d : all[n].dependencies) {
      if (from && to && edges < *count) {
        from[edges] = reinterpret_cast<CUgraphNode>(&all[d]);
        to[edges] = reinterpret_cast<CUgraphNode>(&all[n]);
      }
      ++edges;
    }
  }
  *count = edges;
  return CUDA_SUCCESS;
}

uint64_t Graphs::graph_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return graphs_.size();
}

uint64_t Graphs::exec_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return execs_.size();
}

void Graphs::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<Capture*> live;
  for (auto& [stream, c] : captures_) live.insert(c.get());
  active_.fetch_sub(static_cast<int>(live.size()));
  captures_.clear();
  captured_events_.clear();
  global_captures_ = 0;
  graphs_.clear();
  execs_.clear();
}

}  // namespace kiln::emu::driver
