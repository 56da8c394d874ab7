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
    case GraphNodeKind::kConditional: return "conditional";
  }
  return "?";
}

// An exec's copy of `nodes`: conditional nodes carry their bodies' nodes
// as instantiated.
std::shared_ptr<const std::vector<GraphNode>> Freeze(const std::deque<GraphNode>& nodes) {
  auto out = std::make_shared<std::vector<GraphNode>>(nodes.begin(), nodes.end());
  for (GraphNode& n : *out) {
    if (n.kind != GraphNodeKind::kConditional) continue;
    auto c = std::make_shared<ConditionalNode>(*n.conditional);
    c->frozen.clear();
    for (const std::shared_ptr<Graph>& body : c->bodies) c->frozen.push_back(Freeze(body->nodes));
    c->bodies.clear();
    n.conditional = std::move(c);
  }
  return out;
}

struct UpdateRefusal {
  CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  std::string detail;
};

// Whether an exec's nodes `from` can take the graph's nodes `to`: the same
// kinds in the same order with the same dependencies, kernels of the same
// function, library calls of the same name, conditionals of the same type
// whose bodies can take theirs.
UpdateRefusal CompareForUpdate(const std::vector<GraphNode>& from, const std::deque<GraphNode>& to,
                               const std::string& where) {
  auto refuse = [](CUgraphExecUpdateResult why, std::string detail) { return UpdateRefusal{why, std::move(detail)}; };
  if (from.size() != to.size()) {
    return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, where + "the graph has " + std::to_string(to.size()) +
                                                                   " nodes, the exec " + std::to_string(from.size()));
  }
  for (size_t i = 0; i < from.size(); ++i) {
    std::string at = where + "node " + std::to_string(i) + ": ";
    if (from[i].kind != to[i].kind) {
      return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED,
                    at + NodeKindName(from[i].kind) + " became " + NodeKindName(to[i].kind));
    }
    if (from[i].kind == GraphNodeKind::kKernel && from[i].function != to[i].function) {
      return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE,
                    at + "kernel '" + from[i].name + "' became '" + to[i].name + "'");
    }
    if (from[i].dependencies != to[i].dependencies || from[i].lane != to[i].lane) {
      return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, at + "its dependencies changed");
    }
    if (from[i].kind == GraphNodeKind::kLibraryCall && from[i].name != to[i].name) {
      return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED,
                    at + "library call " + from[i].name + " became " + to[i].name);
    }
    if (from[i].kind != GraphNodeKind::kConditional) continue;
    const ConditionalNode& a = *from[i].conditional;
    const ConditionalNode& b = *to[i].conditional;
    if (a.type != b.type || a.frozen.size() != b.bodies.size()) {
      return refuse(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED, at + "the conditional's type or size changed");
    }
    for (size_t k = 0; k < a.frozen.size(); ++k) {
      UpdateRefusal r = CompareForUpdate(*a.frozen[k], b.bodies[k]->nodes, at + "body " + std::to_string(k) + ": ");
      if (r.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) return r;
    }
  }
  return {};
}

}  // namespace

void Graphs::Invalidate(Capture& c, std::string why) {
  if (c.invalidated) return;
  c.invalidated = true;
  c.why = std::move(why);
}

CUresult Graphs::BeginCapture(CUstream stream, CUstreamCaptureMode mode) {
  auto graph = std::make_unique<Graph>();
  Graph* target = graph.get();
  return BeginCaptureInto(stream, mode, std::move(graph), target, {});
}

CUresult Graphs::BeginCaptureToGraph(CUstream stream, CUgraph graph, const CUgraphNode* deps, size_t count,
                                     CUstreamCaptureMode mode) {
  if (count > 0 && !deps) return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamBeginCaptureToGraph: null dependencies");
  Graph* target = nullptr;
  std::vector<size_t> frontier;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target = FindGraph(graph);
    if (!target) return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamBeginCaptureToGraph: not a live graph");
    if (!NodeIndices(*target, deps, count, &frontier)) {
      return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamBeginCaptureToGraph: a dependency is not a node of the graph");
    }
  }
  return BeginCaptureInto(stream, mode, nullptr, target, std::move(frontier));
}

CUresult Graphs::BeginCaptureInto(CUstream stream, CUstreamCaptureMode mode, std::unique_ptr<Graph> owned,
                                  Graph* target, std::vector<size_t> frontier) {
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
  c->graph = std::move(owned);
  c->target = target;
  c->origin = stream;
  c->members[stream] = Capture::Member{0, std::move(frontier), {}};
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
  std::vector<bool> reached(c.target->nodes.size(), false);
  std::vector<size_t> todo = c.members.at(c.origin).frontier;
  while (!todo.empty()) {
    size_t n = todo.back();
    todo.pop_back();
    if (reached[n]) continue;
    reached[n] = true;
    for (size_t d : c.target->nodes[n].dependencies) todo.push_back(d);
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
  CUgraph handle = reinterpret_cast<CUgraph>(c->target);
  if (c->graph) graphs_[handle] = std::move(c->graph);  // else the graph existed
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
  if (c.target->body && node.kind == GraphNodeKind::kEventRecord) {
    Invalidate(c, "an event record in a conditional node's body graph");
    return Fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "cuEventRecordWithFlags: a conditional body takes no event nodes (the capture is now invalidated)");
  }
  Capture::Member& m = c.members[stream];
  node.dependencies = m.frontier;
  node.lane = m.lane;
  m.frontier = {c.target->nodes.size()};
  c.target->nodes.push_back(std::move(node));
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
  slot->nodes = Freeze(it->second->nodes);
  CUgraphExec handle = reinterpret_cast<CUgraphExec>(slot.get());
  execs_[handle] = std::move(slot);
  *out = handle;
  return CUDA_SUCCESS;
}

CUresult Graphs::DestroyGraph(CUgraph graph) {
  std::lock_guard<std::mutex> lock(mu_);
  if (graphs_.erase(graph) == 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphDestroy: not a live graph");
  CollectHandles();
  return CUDA_SUCCESS;
}

CUresult Graphs::DestroyExec(CUgraphExec exec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (execs_.erase(exec) == 0) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphExecDestroy: not a live graph exec");
  CollectHandles();
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
  UpdateRefusal refusal = CompareForUpdate(*e->second->nodes, g->second->nodes, "");
  if (refusal.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) {
    info->result = refusal.result;
    return Fail(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "cuGraphExecUpdate: " + refusal.detail);
  }
  e->second->nodes = Freeze(g->second->nodes);
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
  std::deque<GraphNode>& all = it->second->nodes;
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
  std::deque<GraphNode>& all = it->second->nodes;
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
  bodies_.clear();
  handles_.clear();
}

Graph* Graphs::FindGraph(CUgraph graph) {
  if (auto it = graphs_.find(graph); it != graphs_.end()) return it->second.get();
  for (auto& [stream, c] : captures_) {
    if (reinterpret_cast<CUgraph>(c->target) == graph) return c->target;
  }
  auto b = bodies_.find(graph);
  if (b == bodies_.end()) return nullptr;
  std::shared_ptr<Graph> body = b->second.lock();
  if (!body) bodies_.erase(b);
  return body.get();  // kept alive by its node, which the caller's graph holds
}

bool Graphs::NodeIndices(const Graph& g, const CUgraphNode* nodes, size_t count, std::vector<size_t>* out) {
  for (size_t i = 0; i < count; ++i) {
    size_t found = g.nodes.size();
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      if (reinterpret_cast<CUgraphNode>(const_cast<GraphNode*>(&g.nodes[n])) == nodes[i]) found = n;
    }
    if (found == g.nodes.size()) return false;
    out->push_back(found);
  }
  return true;
}

void Graphs::CaptureGraph(CUstream stream, CUgraph* graph, const CUgraphNode** deps, size_t* count) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(stream);
  if (graph) *graph = nullptr;
  if (deps) *deps = nullptr;
  if (count) *count = 0;
  if (it == captures_.end()) return;
  Capture& c = *it->second;
  Capture::Member& m = c.members[stream];
  m.frontier_handles.clear();
  for (size_t n : m.frontier) m.frontier_handles.push_back(reinterpret_cast<CUgraphNode>(&c.target->nodes[n]));
  if (graph) *graph = reinterpret_cast<CUgraph>(c.target);
  if (deps) *deps = m.frontier_handles.data();
  if (count) *count = m.frontier_handles.size();
}

CUresult Graphs::UpdateCaptureDependencies(CUstream stream, const CUgraphNode* deps, size_t count, unsigned flags) {
  if (flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES && flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamUpdateCaptureDependencies: unknown flags " + std::to_string(flags));
  }
  if (count > 0 && !deps) return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamUpdateCaptureDependencies: null nodes");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) {
    return Fail(CUDA_ERROR_ILLEGAL_STATE, "cuStreamUpdateCaptureDependencies: the stream is not capturing");
  }
  Capture& c = *it->second;
  std::vector<size_t> nodes;
  if (!NodeIndices(*c.target, deps, count, &nodes)) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamUpdateCaptureDependencies: a node is not in the capture's graph");
  }
  std::vector<size_t>& frontier = c.members[stream].frontier;
  if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES) frontier.clear();
  for (size_t n : nodes) {
    if (std::find(frontier.begin(), frontier.end(), n) == frontier.end()) frontier.push_back(n);
  }
  return CUDA_SUCCESS;
}

CUresult Graphs::CreateConditionalHandle(uint64_t* out, CUgraph graph, unsigned default_value, unsigned flags) {
  if (!out) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphConditionalHandleCreate: null handle pointer");
  if (flags != 0 && flags != CU_GRAPH_COND_ASSIGN_DEFAULT) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphConditionalHandleCreate: unknown flags " + std::to_string(flags));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!FindGraph(graph)) return Fail(CUDA_ERROR_INVALID_VALUE, "cuGraphConditionalHandleCreate: not a live graph");
  *out = next_handle_++;
  handles_[*out] = Handle{default_value, flags, default_value, FindGraph(graph)};
  return CUDA_SUCCESS;
}

CUresult Graphs::AddConditionalNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count,
                                    CUDA_CONDITIONAL_NODE_PARAMS& params, bool switch_and_else) {
  const std::string call = "cuGraphAddNode (conditional): ";
  if (!out || !params.phGraph_out) return Fail(CUDA_ERROR_INVALID_VALUE, call + "null node or body array pointer");
  if (count > 0 && !deps) return Fail(CUDA_ERROR_INVALID_VALUE, call + "null dependencies");
  bool size_ok = false;
  switch (params.type) {
    case CU_GRAPH_COND_TYPE_WHILE: size_ok = params.size == 1; break;
    case CU_GRAPH_COND_TYPE_IF: size_ok = params.size == 1 || (params.size == 2 && switch_and_else); break;
    case CU_GRAPH_COND_TYPE_SWITCH: size_ok = switch_and_else && params.size >= 1; break;
    default: break;
  }
  if (!size_ok) {
    return Fail(CUDA_ERROR_INVALID_VALUE, call + "type " + std::to_string(params.type) + " with " +
                                              std::to_string(params.size) + " bodies (SWITCH and IF/ELSE need 12.8)");
  }
  std::lock_guard<std::mutex> lock(mu_);
  Graph* g = FindGraph(graph);
  if (!g) return Fail(CUDA_ERROR_INVALID_VALUE, call + "not a live graph");
  if (!handles_.count(params.handle)) return Fail(CUDA_ERROR_INVALID_VALUE, call + "not a conditional handle");
  std::vector<size_t> dependencies;
  if (!NodeIndices(*g, deps, count, &dependencies)) {
    return Fail(CUDA_ERROR_INVALID_VALUE, call + "a dependency is not a node of the graph");
  }
  auto c = std::make_shared<ConditionalNode>();
  c->handle = params.handle;
  c->type = params.type;
  for (unsigned i = 0; i < params.size; ++i) {
    auto body = std::make_shared<Graph>();
    body->body = true;
    CUgraph handle = reinterpret_cast<CUgraph>(body.get());
    bodies_[handle] = body;
    params.phGraph_out[i] = handle;
    c->bodies.push_back(std::move(body));
  }
  GraphNode node;
  node.kind = GraphNodeKind::kConditional;
  node.name = "conditional";
  node.dependencies = std::move(dependencies);
  node.conditional = std::move(c);
  g->nodes.push_back(std::move(node));
  *out = reinterpret_cast<CUgraphNode>(&g->nodes.back());
  return CUDA_SUCCESS;
}

namespace {

void NameHandles(const std::vector<GraphNode>& nodes, std::set<uint64_t>* out) {
  for (const GraphNode& n : nodes) {
    if (n.kind != GraphNodeKind::kConditional) continue;
    out->insert(n.conditional->handle);
    for (const auto& body : n.conditional->frozen) NameHandles(*body, out);
  }
}

}  // namespace

void Graphs::CollectHandles() {
  for (auto it = bodies_.begin(); it != bodies_.end();) it = it->second.expired() ? bodies_.erase(it) : std::next(it);
  if (handles_.empty()) return;
  std::set<uint64_t> named;
  for (const auto& [exec, slot] : execs_) NameHandles(*slot->nodes, &named);
  for (auto it = handles_.begin(); it != handles_.end();) {
    bool live = named.count(it->first) ||
                FindGraph(reinterpret_cast<CUgraph>(const_cast<Graph*>(it->second.graph))) == it->second.graph;
    it = live ? std::next(it) : handles_.erase(it);
  }
}

bool Graphs::SetConditional(uint64_t handle, unsigned value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = handles_.find(handle);
  if (it == handles_.end()) return false;
  it->second.value = value;
  return true;
}

unsigned Graphs::ConditionalValue(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = handles_.find(handle);
  return it == handles_.end() ? 0 : it->second.value;
}

void Graphs::ResetConditionals(const std::vector<GraphNode>& nodes) {
  for (const GraphNode& n : nodes) {
    if (n.kind != GraphNodeKind::kConditional) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = handles_.find(n.conditional->handle);
      if (it != handles_.end() && (it->second.flags & CU_GRAPH_COND_ASSIGN_DEFAULT)) {
        it->second.value = it->second.default_value;
      }
    }
    for (const auto& body : n.conditional->frozen) ResetConditionals(*body);
  }
}

}  // namespace kiln::emu::driver
