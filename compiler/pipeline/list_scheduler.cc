// List, DFS and min-of-three memory schedulers (see list_scheduler.h).
#include "compiler/pipeline/list_scheduler.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "compiler/pipeline/points_to.h"

namespace kiln::pipeline {
namespace {

using hlo::HloInstruction;

// The computation as a dependence graph over post-order indices, with the
// temp buffers each instruction defines and reads.
struct MemoryGraph {
  std::vector<const HloInstruction*> order;        // post-order
  std::vector<std::vector<int32_t>> preds, succs;  // operands + control edges, deduplicated
  std::vector<std::vector<int32_t>> reads;         // temp buffer ids read (non-aliasing instructions)
  std::vector<int64_t> defined_bytes;              // temp bytes written that someone reads
  std::vector<int64_t> buffer_size;                // by buffer id; 0 for non-temps
  std::vector<std::vector<int32_t>> readers;       // by buffer id: instructions reading it
};

void SortUnique(std::vector<int32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::optional<MemoryGraph> BuildGraph(const hlo::HloComputation& computation) {
  auto points_to = PointsToAnalysis::Run(computation);
  if (!points_to.ok()) return std::nullopt;
  MemoryGraph g;
  for (const HloInstruction* inst : computation.PostOrder()) g.order.push_back(inst);
  const int32_t n = static_cast<int32_t>(g.order.size());
  std::unordered_map<const HloInstruction*, int32_t> index;
  index.reserve(n);
  for (int32_t i = 0; i < n; ++i) index[g.order[i]] = i;

  // Temporaries: everything but parameters, constants and root leaves.
  const auto& buffers = points_to->buffers();
  g.buffer_size.assign(buffers.size(), 0);
  for (const LogicalBuffer& b : buffers)
    if (b.defining->opcode() != hlo::HloOpcode::kParameter && b.defining->opcode() != hlo::HloOpcode::kConstant)
      g.buffer_size[b.id] = b.size;
  if (computation.root() != nullptr)
    for (const auto& [leaf, id] : points_to->LeavesOf(computation.root())) g.buffer_size[id] = 0;

  g.preds.resize(n);
  g.succs.resize(n);
  g.reads.resize(n);
  g.readers.resize(buffers.size());
  g.defined_bytes.assign(n, 0);
  for (int32_t i = 0; i < n; ++i) {
    const HloInstruction* inst = g.order[i];
    auto add_pred = [&](const HloInstruction* dep) {
      auto it = index.find(dep);
      if (it != index.end()) g.preds[i].push_back(it->second);
    };
    for (const HloInstruction* op : inst->operands()) add_pred(op);
    for (const HloInstruction* pred : inst->control_predecessors()) add_pred(pred);
    SortUnique(g.preds[i]);
    for (int32_t p : g.preds[i]) g.succs[p].push_back(i);
    if (IsAliasingOpcode(inst->opcode())) continue;
    for (const HloInstruction* op : inst->operands())
      for (const auto& [leaf, id] : points_to->LeavesOf(op))
        if (g.buffer_size[id] > 0) g.reads[i].push_back(static_cast<int32_t>(id));
    SortUnique(g.reads[i]);
    for (int32_t b : g.reads[i]) g.readers[b].push_back(i);
  }
  for (const LogicalBuffer& b : buffers)
    if (!g.readers[b.id].empty()) g.defined_bytes[index.at(b.defining)] += g.buffer_size[b.id];
  return g;
}

SequentialSchedule FromOrder(const hlo::HloComputation& computation, const MemoryGraph& g,
                             const std::vector<int32_t>& order) {
  SequentialSchedule schedule;
  schedule.computation = &computation;
  schedule.sequence.reserve(order.size());
  for (int32_t i : order) schedule.sequence.push_back(g.order[i]);
  schedule.Reindex();
  return schedule;
}

// The list scheduler proper. Priorities only grow (a buffer's last reader
// frees more once the other readers ran), so a max-heap with lazy
// re-insertion keeps it O((n + edges) log n).
std::vector<int32_t> ListOrder(const MemoryGraph& g) {
  const int32_t n = static_cast<int32_t>(g.order.size());
  std::vector<int32_t> remaining_readers(g.readers.size());
  for (size_t b = 0; b < g.readers.size(); ++b) remaining_readers[b] = static_cast<int32_t>(g.readers[b].size());
  std::vector<int32_t> pending(n);
  for (int32_t i = 0; i < n; ++i) pending[i] = static_cast<int32_t>(g.preds[i].size());
  std::vector<bool> scheduled(n, false), ready(n, false);
  std::vector<int64_t> priority(n, 0);

  auto compute_priority = [&](int32_t i) -> int64_t {
    // Aliasing instructions cost nothing and unblock their users: first.
    if (IsAliasingOpcode(g.order[i]->opcode())) return std::numeric_limits<int64_t>::max();
    int64_t freed = 0;
    for (int32_t b : g.reads[i])
      if (remaining_readers[b] == 1) freed += g.buffer_size[b];
    return freed - g.defined_bytes[i];
  };
  // (priority, -post-order index): the largest pops first.
  using Entry = std::pair<int64_t, int32_t>;
  std::priority_queue<Entry> queue;
  auto make_ready = [&](int32_t i) {
    ready[i] = true;
    priority[i] = compute_priority(i);
    queue.push({priority[i], -i});
  };
  for (int32_t i = 0; i < n; ++i)
    if (pending[i] == 0) make_ready(i);

  std::vector<int32_t> order;
  order.reserve(n);
  while (!queue.empty()) {
    auto [prio, neg] = queue.top();
    queue.pop();
    int32_t i = -neg;
    if (scheduled[i] || prio != priority[i]) continue;  // stale entry
    scheduled[i] = true;
    order.push_back(i);
    for (int32_t b : g.reads[i]) {
      if (--remaining_readers[b] != 1) continue;
      // The one reader left now frees b: raise its priority if it is ready.
      for (int32_t r : g.readers[b])
        if (!scheduled[r] && ready[r]) {
          priority[r] = compute_priority(r);
          queue.push({priority[r], -r});
        }
    }
    for (int32_t s : g.succs[i])
      if (--pending[s] == 0) make_ready(s);
  }
  return order;
}

// XLA's DFS memory scheduler: cumulative temp bytes of each instruction's
// operand subtrees (over-counting shared subtrees, saturating), then a
// post-order DFS that visits heavier operands first.
std::vector<int32_t> DfsOrder(const MemoryGraph& g) {
  const int32_t n = static_cast<int32_t>(g.order.size());
  constexpr int64_t kCap = std::numeric_limits<int64_t>::max() / 4;
  std::vector<int64_t> total(n, 0);
  for (int32_t i = 0; i < n; ++i) {  // post-order: operands first
    int64_t t = g.defined_bytes[i];
    for (int32_t p : g.preds[i]) t = std::min(kCap, t + total[p]);
    total[i] = t;
  }
  std::vector<std::vector<int32_t>> sorted_preds = g.preds;
  for (auto& preds : sorted_preds)
    std::stable_sort(preds.begin(), preds.end(), [&](int32_t a, int32_t b) {
      if (total[a] != total[b]) return total[a] > total[b];
      return a < b;
    });
  std::vector<bool> visited(n, false);
  std::vector<int32_t> order;
  order.reserve(n);
  auto visit = [&](int32_t start) {
    if (visited[start]) return;
    visited[start] = true;
    std::vector<std::pair<int32_t, size_t>> stack{{start, 0}};
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      if (next < sorted_preds[i].size()) {
        int32_t p = sorted_preds[i][next++];
        if (!visited[p]) {
          visited[p] = true;
          stack.push_back({p, 0});
        }
        continue;
      }
      order.push_back(i);
      stack.pop_back();
    }
  };
  // The root's subtree first, then whatever is unreachable from it.
  for (int32_t i = n - 1; i >= 0; --i)
    if (g.order[i] == g.order[i]->parent()->root()) visit(i);
  for (int32_t i = 0; i < n; ++i) visit(i);
  return order;
}

}  // namespace

SequentialSchedule ListMemorySchedule(const hlo::HloComputation& computation) {
  std::optional<MemoryGraph> g = BuildGraph(computation);
  if (!g) return PostOrderSchedule(computation);
  return FromOrder(computation, *g, ListOrder(*g));
}

SequentialSchedule DfsMemorySchedule(const hlo::HloComputation& computation) {
  std::optional<MemoryGraph> g = BuildGraph(computation);
  if (!g) return PostOrderSchedule(computation);
  return FromOrder(computation, *g, DfsOrder(*g));
}

StatusOr<BufferAssignment> AssignBuffersMinimizingMemory(const hlo::HloComputation& computation,
                                                         const BufferAssignmentOptions& options) {
  if (options.concurrent_temps) return AssignBuffers(computation, LevelOrderSchedule(computation), options);
  std::optional<MemoryGraph> g = BuildGraph(computation);
  if (!g) return AssignBuffers(computation, PostOrderSchedule(computation), options);
  std::optional<BufferAssignment> best;
  std::vector<int32_t> post_order(g->order.size());
  for (size_t i = 0; i < post_order.size(); ++i) post_order[i] = static_cast<int32_t>(i);
  for (const std::vector<int32_t>& order : {ListOrder(*g), DfsOrder(*g), post_order}) {
    KILN_ASSIGN_OR_RETURN(BufferAssignment candidate, AssignBuffers(computation, FromOrder(computation, *g, order), options));
    if (!best || candidate.peak_temp_bytes() < best->peak_temp_bytes()) best.emplace(std::move(candidate));
  }
  return std::move(*best);
}

SequentialSchedule MemoryMinimizingSchedule(const hlo::HloComputation& computation) {
  auto assignment = AssignBuffersMinimizingMemory(computation);
  if (!assignment.ok()) return PostOrderSchedule(computation);
  return assignment->schedule();
}

}  // namespace kiln::pipeline
