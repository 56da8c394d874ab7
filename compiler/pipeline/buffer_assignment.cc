// Buffer assignment: liveness over the schedule, shared (in-place) pairs,
// per-role allocations, input_output_alias and per-color heap simulation
// of the temporaries (see buffer_assignment.h).
#include "compiler/pipeline/buffer_assignment.h"

#include <algorithm>
#include <optional>

#include "compiler/pipeline/heap_simulator.h"
#include "compiler/pipeline/in_place.h"

namespace kiln::pipeline {

using hlo::HloOpcode;

// Builds a BufferAssignment step by step; a class so each step stays small
// and shares the analysis results.
class BufferAssigner {
 public:
  BufferAssigner(BufferAssignment& a, const BufferAssignmentOptions& options) : a_(a), options_(options) {}

  static StatusOr<BufferAssignment> Assign(const hlo::HloComputation& computation, SequentialSchedule schedule,
                                           const BufferAssignmentOptions& options) {
    BufferAssignment assignment;
    assignment.schedule_ = std::move(schedule);
    KILN_ASSIGN_OR_RETURN(assignment.points_to_, PointsToAnalysis::Run(computation));
    BufferAssigner assigner(assignment, options);
    KILN_RETURN_IF_ERROR(assigner.Run());
    return assignment;
  }

 private:
  Status Run() {
    ComputeLiveness();
    FindOutputs();
    FindSharedPairs();
    KeepAliasedParameterChains();
    AssignParameters();
    KILN_RETURN_IF_ERROR(ResolveAliases());
    AssignConstants();
    AssignOutputs();
    AddCopiesOutOfAliasedParameters();
    AssignTemps();
    for (size_t b = 0; b < pred_.size(); ++b)
      if (pred_[b] >= 0) a_.shared_.push_back({pred_[b], static_cast<int64_t>(b)});
    for (const PendingCopy& c : copies_) {
      thunks::BufferSlice from = a_.placements_[c.buffer].slice;
      a_.output_copies_.push_back({c.output_index, from, {c.allocation, 0, from.size}});
    }
    return Status::Ok();
  }

  const LogicalBuffer& buffer(int64_t id) const { return a_.points_to_.buffer(id); }
  HloOpcode DefiningOpcode(int64_t id) const { return buffer(id).defining->opcode(); }

  // A buffer is live from its definition to the last non-aliasing
  // instruction reading any operand leaf that points to it. Aliasing
  // instructions move no data, so they do not extend liveness; their
  // readers do. A collective -done does: the exchange writes its start's
  // result, and reads the start's operands, until the done has run.
  void ComputeLiveness() {
    const auto& buffers = a_.points_to_.buffers();
    a_.placements_.assign(buffers.size(), BufferPlacement{});
    for (const LogicalBuffer& b : buffers) {
      int64_t pos = a_.schedule_.PositionOf(b.defining);
      a_.placements_[b.id].live_start = pos;
      a_.placements_[b.id].live_end = pos;
    }
    for (int64_t p = 0; p < a_.schedule_.size(); ++p) {
      const hlo::HloInstruction* inst = a_.schedule_.sequence[p];
      if (IsAliasingOpcode(inst->opcode())) continue;
      for (const OperandUse& use : a_.points_to_.OperandUses(inst))
        a_.placements_[use.buffer].live_end = std::max(a_.placements_[use.buffer].live_end, p);
      // The exchange reads the start's operands until the done too: no
      // compute in between may reuse their bytes (a start then needs a
      // snapshot of them only when compute between reads them,
      // runtime/async_source_hazards.h).
      if (IsForwardingDone(*inst))
        for (const OperandUse& use : a_.points_to_.OperandUses(inst->operand(0)))
          a_.placements_[use.buffer].live_end = std::max(a_.placements_[use.buffer].live_end, p);
    }
  }

  // Buffers reaching the root, with the root leaves naming each; they live
  // to the end of the schedule.
  void FindOutputs() {
    const size_t n = a_.points_to_.buffers().size();
    root_leaves_.assign(n, {});
    assigned_.assign(n, false);
    pred_.assign(n, -1);
    succ_.assign(n, -1);
    const hlo::HloInstruction* root = a_.schedule_.computation->root();
    if (root == nullptr) return;
    for (const auto& [index, id] : a_.points_to_.LeavesOf(root)) {
      root_leaves_[id].push_back(index);
      a_.placements_[id].live_end = a_.schedule_.size() - 1;
    }
  }
  bool IsOutput(int64_t id) const { return !root_leaves_[id].empty(); }

  const hlo::InputOutputAlias* AliasOfParameter(int64_t id) const {
    const LogicalBuffer& b = buffer(id);
    if (b.defining->opcode() != HloOpcode::kParameter) return nullptr;
    for (const hlo::InputOutputAlias& alias : options_.aliases)
      if (alias.parameter_number == b.defining->parameter_number() && alias.parameter_index == b.index)
        return &alias;
    return nullptr;
  }
  const hlo::InputOutputAlias* AliasOfOutput(const ShapeIndex& index) const {
    for (const hlo::InputOutputAlias& alias : options_.aliases)
      if (alias.output_index == index) return &alias;
    return nullptr;
  }

  // Operand buffer `a` may hand its slice to `b`, defined at position `p`
  // (the in-place rule itself is CanShareOperandBuffer's).
  bool MayShare(int64_t a, int64_t b, int64_t p) const {
    const LogicalBuffer& x = buffer(a);
    const LogicalBuffer& y = buffer(b);
    if (a_.placements_[a].live_end != p || IsOutput(a) || succ_[a] >= 0 || pred_[b] >= 0) return false;
    if (x.size != y.size || x.size == 0 || x.color != y.color) return false;
    if (x.defining->opcode() == HloOpcode::kConstant) return false;
    // A parameter's buffer belongs to the caller unless it is donated.
    return x.defining->opcode() != HloOpcode::kParameter || AliasOfParameter(a) != nullptr;
  }

  void FindSharedPairs() {
    for (int64_t p = 0; p < a_.schedule_.size(); ++p) {
      const hlo::HloInstruction* inst = a_.schedule_.sequence[p];
      if (IsAliasingOpcode(inst->opcode()) || IsForwardingDone(*inst)) continue;
      std::vector<OperandUse> uses = a_.points_to_.OperandUses(inst);
      auto reads = [&](int64_t id) {
        return std::count_if(uses.begin(), uses.end(), [&](const OperandUse& u) { return u.buffer == id; });
      };
      for (const auto& [index, b] : a_.points_to_.LeavesOf(inst)) {
        for (const OperandUse& use : uses) {
          // An operand read through a second leaf would be read after (or
          // while) the result overwrites it.
          if (!MayShare(use.buffer, b, p) || reads(use.buffer) != 1) continue;
          if (!CanShareOperandBuffer(*inst, use.operand_number, use.operand_index, index)) continue;
          pred_[b] = use.buffer;
          succ_[use.buffer] = b;
          break;
        }
      }
    }
  }

  int64_t Head(int64_t id) const {
    while (pred_[id] >= 0) id = pred_[id];
    return id;
  }
  int64_t Tail(int64_t id) const {
    while (succ_[id] >= 0) id = succ_[id];
    return id;
  }

  // A donated parameter's chain is worth keeping only when it ends in the
  // output the parameter is aliased with: otherwise the parameter
  // allocation would hold a value the output does not want.
  void KeepAliasedParameterChains() {
    const hlo::HloInstruction* root = a_.schedule_.computation->root();
    for (const LogicalBuffer& b : a_.points_to_.buffers()) {
      if (b.defining->opcode() != HloOpcode::kParameter || succ_[b.id] < 0) continue;
      const hlo::InputOutputAlias* alias = AliasOfParameter(b.id);
      auto r = root && alias ? a_.points_to_.BufferAt(root, alias->output_index) : StatusOr<int64_t>(Error(""));
      if (r.ok() && Tail(b.id) == *r) continue;
      pred_[succ_[b.id]] = -1;
      succ_[b.id] = -1;
    }
  }

  // Gives `id`'s whole chain the slice at `offset` of `allocation`.
  void PlaceChain(int64_t id, int32_t allocation, int64_t offset) {
    for (int64_t m = Head(id); m >= 0; m = succ_[m]) {
      a_.placements_[m].slice = {allocation, offset, buffer(m).size};
      assigned_[m] = true;
    }
  }

  int32_t AddAllocation(thunks::Allocation allocation, int64_t buffer_id) {
    allocation.alignment = kBufferAlignment;
    allocation.color = buffer(buffer_id).color;
    a_.allocations_.push_back(std::move(allocation));
    int32_t number = static_cast<int32_t>(a_.allocations_.size() - 1);
    PlaceChain(buffer_id, number, 0);
    return number;
  }
  // The first root leaf holding `id` that is not copied into a donated
  // parameter (that leaf's result is the parameter's allocation).
  std::optional<ShapeIndex> FirstRootLeaf(int64_t id) const {
    for (const ShapeIndex& leaf : root_leaves_[id])
      if (!IsCopiedOut(leaf)) return leaf;
    return std::nullopt;
  }

  void AssignParameters() {
    std::vector<const LogicalBuffer*> params;
    for (const LogicalBuffer& b : a_.points_to_.buffers())
      if (b.defining->opcode() == HloOpcode::kParameter) params.push_back(&b);
    std::sort(params.begin(), params.end(), [](const LogicalBuffer* x, const LogicalBuffer* y) {
      if (x->defining->parameter_number() != y->defining->parameter_number())
        return x->defining->parameter_number() < y->defining->parameter_number();
      return x->index < y->index;
    });
    for (const LogicalBuffer* b : params) {
      thunks::Allocation allocation;
      allocation.size = b->size;
      allocation.parameter = thunks::ParameterRef{b->defining->parameter_number(), b->index};
      allocation.output = FirstRootLeaf(b->id);
      AddAllocation(std::move(allocation), b->id);
    }
  }

  // Each aliased output goes into its parameter's allocation: in place
  // through shared pairs, directly when the parameter is dead before the
  // output's chain starts, or by a copy after the last instruction.
  Status ResolveAliases() {
    const hlo::HloComputation* comp = a_.schedule_.computation;
    for (const hlo::InputOutputAlias& alias : options_.aliases) {
      std::string what = "input_output_alias " + ShapeIndexToString(alias.output_index) + " -> parameter " +
                         std::to_string(alias.parameter_number) + " " + ShapeIndexToString(alias.parameter_index);
      if (alias.parameter_number < 0 || alias.parameter_number >= comp->parameter_count() ||
          comp->parameter(alias.parameter_number) == nullptr)
        return Error(what + ": no such parameter");
      KILN_ASSIGN_OR_RETURN(int64_t p, a_.points_to_.BufferAt(comp->parameter(alias.parameter_number),
                                                              alias.parameter_index));
      KILN_ASSIGN_OR_RETURN(int64_t r, a_.points_to_.BufferAt(comp->root(), alias.output_index));
      if (buffer(p).size != buffer(r).size)
        return Error(what + ": the output has " + std::to_string(buffer(r).size) + " bytes, the parameter " +
                     std::to_string(buffer(p).size));
      const int32_t pa = a_.placements_[p].slice.allocation;
      a_.allocations_[pa].output = alias.output_index;
      aliased_.push_back(pa);
      if (Head(r) == p) continue;  // the parameter itself, or its in-place chain
      int64_t head = Head(r);
      // Constants keep their data's allocation: they are copied.
      bool placeable = !assigned_[head] && DefiningOpcode(head) != HloOpcode::kConstant &&
                       buffer(head).color == buffer(p).color &&
                       a_.placements_[Tail(p)].live_end < a_.placements_[head].live_start;
      if (placeable) {
        PlaceChain(head, pa, 0);
        continue;
      }
      copies_.push_back({alias.output_index, r, pa});
    }
    // Undonated parameters named after a root leaf that is now copied.
    for (thunks::Allocation& alloc : a_.allocations_) {
      if (!alloc.parameter || std::find(aliased_.begin(), aliased_.end(), &alloc - a_.allocations_.data()) !=
                                  aliased_.end())
        continue;
      KILN_ASSIGN_OR_RETURN(int64_t id, a_.points_to_.BufferAt(comp->parameter(alloc.parameter->number),
                                                               alloc.parameter->index));
      alloc.output = FirstRootLeaf(id);
    }
    return Status::Ok();
  }
  bool HasCopyInto(int32_t allocation) const {
    return std::any_of(copies_.begin(), copies_.end(), [&](const PendingCopy& c) { return c.allocation == allocation; });
  }
  bool IsCopiedOut(const ShapeIndex& index) const {
    return std::any_of(copies_.begin(), copies_.end(), [&](const PendingCopy& c) { return c.output_index == index; });
  }

  void AssignConstants() {
    for (const hlo::HloInstruction* inst : a_.schedule_.sequence) {
      if (inst->opcode() != HloOpcode::kConstant) continue;
      for (const auto& [index, id] : a_.points_to_.LeavesOf(inst)) {
        thunks::Allocation allocation;
        allocation.size = buffer(id).size;
        allocation.constant = static_cast<int64_t>(a_.constants_.size());
        allocation.output = FirstRootLeaf(id);
        a_.constants_.push_back(inst);
        AddAllocation(std::move(allocation), id);
      }
    }
  }

  // Root values not yet placed get an output allocation, named by their
  // first root leaf that is not copied into a parameter; a value only
  // copied into parameters stays a temporary.
  void AssignOutputs() {
    const hlo::HloInstruction* root = a_.schedule_.computation->root();
    if (root == nullptr) return;
    for (const auto& [index, id] : a_.points_to_.LeavesOf(root)) {
      if (assigned_[id]) continue;  // parameter, constant, aliased or repeated leaf
      std::optional<ShapeIndex> named;
      for (const ShapeIndex& leaf : root_leaves_[id])
        if (!IsCopiedOut(leaf)) {
          named = leaf;
          break;
        }
      if (!named) continue;
      thunks::Allocation allocation;
      allocation.size = buffer(id).size;
      allocation.output = named;
      AddAllocation(std::move(allocation), id);
    }
  }

  // A root leaf whose value sits in a donated parameter allocation that
  // receives another output's copy must be saved first: it gets an output
  // allocation of its own and a copy (staged by the emitter).
  void AddCopiesOutOfAliasedParameters() {
    const hlo::HloInstruction* root = a_.schedule_.computation->root();
    if (root == nullptr) return;
    for (const auto& [index, id] : a_.points_to_.LeavesOf(root)) {
      if (AliasOfOutput(index) != nullptr) continue;
      int32_t alloc = a_.placements_[id].slice.allocation;
      if (!assigned_[id] || std::find(aliased_.begin(), aliased_.end(), alloc) == aliased_.end()) continue;
      if (a_.allocations_[alloc].output == index || !HasCopyInto(alloc)) continue;
      thunks::Allocation fresh;
      fresh.size = buffer(id).size;
      fresh.alignment = kBufferAlignment;
      fresh.color = buffer(id).color;
      fresh.output = index;
      a_.allocations_.push_back(std::move(fresh));
      copies_.push_back({index, id, static_cast<int32_t>(a_.allocations_.size() - 1)});
    }
  }

  // One heap simulation per color; a chain of shared pairs is one request
  // spanning its head's definition to its tail's last read.
  void AssignTemps() {
    std::map<int64_t, std::vector<int64_t>> heads_by_color;
    for (const LogicalBuffer& b : a_.points_to_.buffers())
      if (!assigned_[b.id] && pred_[b.id] < 0) heads_by_color[b.color].push_back(b.id);
    // Concurrent temporaries live over dependency levels rather than
    // schedule positions (BufferAssignmentOptions::concurrent_temps).
    std::vector<int64_t> time(static_cast<size_t>(a_.schedule_.size()));
    for (size_t p = 0; p < time.size(); ++p) time[p] = static_cast<int64_t>(p);
    if (options_.concurrent_temps) time = DependencyLevels(a_.schedule_);
    for (const auto& [color, heads] : heads_by_color) {
      std::vector<HeapRequest> requests;
      for (int64_t h : heads) {
        int64_t end = a_.placements_[h].live_end;
        for (int64_t m = h; m >= 0; m = succ_[m]) end = std::max(end, a_.placements_[m].live_end);
        requests.push_back({buffer(h).size, time[static_cast<size_t>(a_.placements_[h].live_start)],
                            time[static_cast<size_t>(end)]});
      }
      HeapResult heap = SimulateHeap(requests, kBufferAlignment);
      thunks::Allocation arena;
      arena.size = heap.arena_size;
      arena.alignment = kBufferAlignment;
      arena.color = color;
      a_.allocations_.push_back(arena);
      int32_t number = static_cast<int32_t>(a_.allocations_.size() - 1);
      a_.arenas_.push_back({color, number, heap.arena_size, heap.lower_bound});
      a_.peak_temp_bytes_ += heap.arena_size;
      a_.temp_lower_bound_ += heap.lower_bound;
      for (size_t i = 0; i < heads.size(); ++i) PlaceChain(heads[i], number, heap.offsets[i]);
    }
  }

  struct PendingCopy {
    ShapeIndex output_index;
    int64_t buffer = 0;
    int32_t allocation = 0;  // destination, filled whole
  };

  BufferAssignment& a_;
  const BufferAssignmentOptions& options_;
  std::vector<std::vector<ShapeIndex>> root_leaves_;  // by buffer: root leaves holding it
  std::vector<bool> assigned_;                        // buffers with a slice already
  std::vector<int64_t> pred_, succ_;                  // shared pairs: operand <-> user buffer
  std::vector<int32_t> aliased_;                      // donated parameter allocations
  std::vector<PendingCopy> copies_;
};

StatusOr<thunks::BufferSlice> BufferAssignment::SliceFor(const hlo::HloInstruction* inst,
                                                         const ShapeIndex& index) const {
  KILN_ASSIGN_OR_RETURN(int64_t id, points_to_.BufferAt(inst, index));
  return placements_[id].slice;
}

StatusOr<thunks::BufferSlice> BufferAssignment::ResultSlice(const ShapeIndex& output_index) const {
  for (const OutputCopy& c : output_copies_)
    if (c.output_index == output_index) return c.to;
  return SliceFor(schedule_.computation->root(), output_index);
}

StatusOr<BufferAssignment> AssignBuffers(const hlo::HloComputation& computation, SequentialSchedule schedule,
                                         const BufferAssignmentOptions& options) {
  if (schedule.computation != &computation) return Error("schedule is not of computation " + computation.name());
  schedule.Reindex();
  KILN_RETURN_IF_ERROR(VerifySchedule(schedule));
  return BufferAssigner::Assign(computation, std::move(schedule), options);
}

StatusOr<BufferAssignment> AssignBuffers(const hlo::HloModule& module) {
  if (module.entry() == nullptr) return Error("module has no entry computation");
  BufferAssignmentOptions options;
  options.aliases = module.config().input_output_alias;
  return AssignBuffers(*module.entry(), PostOrderSchedule(*module.entry()), options);
}

}  // namespace kiln::pipeline
