// Latency hiding for asynchronous collectives (see latency_hiding.h).
#include "compiler/pipeline/latency_hiding.h"

#include "compiler/pipeline/overlap_cost_model.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <vector>

#include "compiler/pipeline/points_to.h"

namespace kiln::pipeline {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// The schedule as a dependence graph over positions in it.
struct Graph {
  std::vector<std::vector<int32_t>> preds, succs;  // operands + control edges, deduplicated
  std::vector<bool> start, done;
  std::vector<int32_t> start_of;  // a done's start, -1 for the rest
  std::vector<double> exchange;   // a start's estimated exchange seconds
  std::vector<double> compute;    // estimated compute seconds
  int32_t root = -1;
};

Graph BuildGraph(const SequentialSchedule& schedule) {
  const int32_t n = static_cast<int32_t>(schedule.size());
  Graph g;
  g.preds.resize(n);
  g.succs.resize(n);
  g.start.assign(n, false);
  g.done.assign(n, false);
  g.start_of.assign(n, -1);
  g.exchange.assign(n, 0);
  g.compute.assign(n, 0);
  for (int32_t i = 0; i < n; ++i) {
    const HloInstruction* inst = schedule.sequence[i];
    if (inst == schedule.computation->root()) g.root = i;
    g.start[i] = IsAsyncCollectiveStart(*inst);
    g.done[i] = IsAsyncCollectiveDone(*inst);
    if (g.start[i]) g.exchange[i] = EstimatedExchangeSeconds(*inst);
    if (!g.start[i] && !g.done[i]) g.compute[i] = EstimatedComputeSeconds(*inst);
    if (g.done[i] && inst->operand_count() == 1) {
      const int64_t p = schedule.PositionOf(inst->operand(0));
      if (p >= 0 && IsAsyncCollectiveStart(*inst->operand(0))) g.start_of[i] = static_cast<int32_t>(p);
    }
    auto add = [&](const HloInstruction* dep) {
      int64_t p = schedule.PositionOf(dep);
      if (p >= 0) g.preds[i].push_back(static_cast<int32_t>(p));
    };
    for (const HloInstruction* op : inst->operands()) add(op);
    for (const HloInstruction* pred : inst->control_predecessors()) add(pred);
    std::sort(g.preds[i].begin(), g.preds[i].end());
    g.preds[i].erase(std::unique(g.preds[i].begin(), g.preds[i].end()), g.preds[i].end());
    for (int32_t p : g.preds[i]) g.succs[p].push_back(i);
  }
  return g;
}

// kReorder: list scheduling with starts first and dones last among the
// ready instructions, the given order breaking ties; a done whose start
// has seen enough compute to cover its exchange (the cost model) is due:
// it goes before the other instructions, ending its buffers' lives.
std::vector<int32_t> ReorderedOrder(const Graph& g) {
  const int32_t n = static_cast<int32_t>(g.preds.size());
  std::vector<int32_t> pending(n);
  std::vector<double> covered(n, 0);  // by start: compute scheduled since it
  std::vector<int32_t> in_flight;  // starts whose done is not scheduled
  std::vector<int32_t> done_of(n, -1);
  for (int32_t i = 0; i < n; ++i)
    if (g.start_of[i] >= 0) done_of[g.start_of[i]] = i;
  std::set<int32_t> starts, due, others, dones;  // ready, by given position
  auto is_due = [&](int32_t done) {
    const int32_t s = g.start_of[done];
    return s >= 0 && covered[s] >= g.exchange[s];
  };
  auto make_ready = [&](int32_t i) {
    (g.start[i] ? starts : g.done[i] ? (is_due(i) ? due : dones) : others).insert(i);
  };
  for (int32_t i = 0; i < n; ++i) {
    pending[i] = static_cast<int32_t>(g.preds[i].size());
    if (pending[i] == 0) make_ready(i);
  }
  std::vector<int32_t> order;
  order.reserve(n);
  while (order.size() < static_cast<size_t>(n)) {
    std::set<int32_t>& from = !starts.empty() ? starts : !due.empty() ? due : !others.empty() ? others : dones;
    if (from.empty()) break;  // a cycle: VerifySchedule rejects the result
    const int32_t i = *from.begin();
    from.erase(from.begin());
    order.push_back(i);
    if (g.start[i]) in_flight.push_back(i);
    if (g.done[i]) std::erase(in_flight, g.start_of[i]);
    if (g.compute[i] > 0) {
      for (int32_t s : in_flight) {
        covered[s] += g.compute[i];
        const int32_t d = done_of[s];
        if (d >= 0 && dones.count(d) && is_due(d)) {
          dones.erase(d);
          due.insert(d);
        }
      }
    }
    for (int32_t s : g.succs[i])
      if (--pending[s] == 0) make_ready(s);
  }
  return order;
}

// kMoveOnly: every other instruction in the given order, each pulling in
// the dones (and what they wait for) it needs; a start as soon as it is
// ready.
std::vector<int32_t> MovedOrder(const Graph& g) {
  const int32_t n = static_cast<int32_t>(g.preds.size());
  std::vector<bool> scheduled(n, false);
  std::vector<int32_t> order;
  order.reserve(n);
  std::vector<int32_t> starts;
  for (int32_t i = 0; i < n; ++i)
    if (g.start[i]) starts.push_back(i);
  auto ready = [&](int32_t i) {
    for (int32_t p : g.preds[i])
      if (!scheduled[p]) return false;
    return true;
  };
  // Schedules `i` after whatever it still waits for, then every start that
  // became ready. An explicit stack: chains of collectives can be long.
  auto ensure = [&](int32_t target) {
    std::vector<int32_t> stack{target};
    while (!stack.empty()) {
      const int32_t i = stack.back();
      if (scheduled[i]) {
        stack.pop_back();
        continue;
      }
      bool waiting = false;
      for (int32_t p : g.preds[i])
        if (!scheduled[p]) {
          stack.push_back(p);
          waiting = true;
        }
      if (waiting) continue;
      stack.pop_back();
      scheduled[i] = true;
      order.push_back(i);
      for (bool more = true; more;) {
        more = false;
        for (int32_t s : starts)
          if (!scheduled[s] && ready(s)) {
            scheduled[s] = true;
            order.push_back(s);
            more = true;
          }
      }
    }
  };
  for (int32_t i = 0; i < n; ++i)  // starts whose operands are all outside
    if (g.start[i] && ready(i) && !scheduled[i]) ensure(i);
  for (int32_t i = 0; i < n; ++i)  // the root last
    if (!g.start[i] && !g.done[i] && i != g.root) ensure(i);
  for (int32_t i = 0; i < n; ++i) ensure(i);
  return order;
}

int64_t ArrayBytes(const Shape& shape) {
  int64_t bytes = 0;
  for (const ShapeIndex& index : LeafIndices(shape)) {
    const Shape* leaf = SubShape(shape, index);
    if (leaf && leaf->IsArray()) bytes += leaf->ByteSize();
  }
  return bytes;
}

}  // namespace

bool IsAsyncCollectiveStart(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kAllReduceStart: case HloOpcode::kAllGatherStart:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kAsyncStart: return true;
    default: return false;
  }
}

bool IsAsyncCollectiveDone(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kAllReduceDone: case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone: case HloOpcode::kAsyncDone: return true;
    default: return false;
  }
}

SequentialSchedule HideCollectiveLatency(const SequentialSchedule& schedule, OverlapMode mode) {
  const Graph g = BuildGraph(schedule);
  if (std::find(g.start.begin(), g.start.end(), true) == g.start.end()) return schedule;
  const std::vector<int32_t> order = mode == OverlapMode::kReorder ? ReorderedOrder(g) : MovedOrder(g);
  if (order.size() != schedule.sequence.size()) return schedule;
  SequentialSchedule out;
  out.computation = schedule.computation;
  for (int32_t i : order) out.sequence.push_back(schedule.sequence[i]);
  out.Reindex();
  return out;
}

int64_t OverlapMemoryLimit(const hlo::HloComputation& computation, int64_t base_peak_bytes) {
  int64_t in_flight = 0;
  for (const HloInstruction* inst : computation.instructions()) {
    if (!IsAsyncCollectiveDone(*inst)) continue;
    // Its result, and its start's operands, which stay live until it.
    in_flight += ArrayBytes(inst->shape());
    if (inst->operand_count() == 1 && IsAsyncCollectiveStart(*inst->operand(0)))
      for (const HloInstruction* operand : inst->operand(0)->operands()) in_flight += ArrayBytes(operand->shape());
  }
  return base_peak_bytes + std::max(base_peak_bytes / 4, in_flight);
}

StatusOr<std::optional<BufferAssignment>> AssignBuffersHidingLatency(const hlo::HloComputation& computation,
                                                                     const BufferAssignment& base,
                                                                     const BufferAssignmentOptions& options) {
  const int64_t limit = OverlapMemoryLimit(computation, base.peak_temp_bytes());
  for (OverlapMode mode : {OverlapMode::kReorder, OverlapMode::kMoveOnly}) {
    SequentialSchedule overlapped = HideCollectiveLatency(base.schedule(), mode);
    if (overlapped.sequence == base.schedule().sequence) return std::optional<BufferAssignment>();
    if (!VerifySchedule(overlapped).ok()) continue;
    KILN_ASSIGN_OR_RETURN(BufferAssignment candidate, AssignBuffers(computation, std::move(overlapped), options));
    if (candidate.peak_temp_bytes() <= limit) return std::optional<BufferAssignment>(std::move(candidate));
  }
  return std::optional<BufferAssignment>();
}

}  // namespace kiln::pipeline
