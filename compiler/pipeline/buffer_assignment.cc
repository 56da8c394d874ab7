// Buffer assignment: liveness over the schedule, per-role allocations and
// heap simulation of the temporaries (see buffer_assignment.h).
#include "compiler/pipeline/buffer_assignment.h"

#include <algorithm>
#include <optional>

#include "compiler/pipeline/heap_simulator.h"

namespace kiln::pipeline {

// Builds a BufferAssignment step by step; a class so each step stays small
// and shares the analysis results.
class BufferAssigner {
 public:
  explicit BufferAssigner(BufferAssignment& a) : a_(a) {}

  static StatusOr<BufferAssignment> Assign(const hlo::HloComputation& computation, SequentialSchedule schedule) {
    BufferAssignment assignment;
    assignment.schedule_ = std::move(schedule);
    KILN_ASSIGN_OR_RETURN(assignment.points_to_, PointsToAnalysis::Run(computation));
    BufferAssigner assigner(assignment);
    KILN_RETURN_IF_ERROR(assigner.Run());
    return assignment;
  }

 private:
  Status Run() {
    ComputeLiveness();
    FindOutputs();
    AssignParameters();
    AssignConstants();
    AssignOutputs();
    AssignTemps();
    return Status::Ok();
  }

  // A buffer is live from its definition to the last non-aliasing
  // instruction reading any operand leaf that points to it. Aliasing
  // instructions move no data, so they do not extend liveness; their
  // readers do.
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
      for (const hlo::HloInstruction* operand : inst->operands())
        for (const auto& [index, id] : a_.points_to_.LeavesOf(operand))
          a_.placements_[id].live_end = std::max(a_.placements_[id].live_end, p);
    }
  }

  // Buffers reaching the root, with the first root leaf naming each; they
  // live to the end of the schedule.
  void FindOutputs() {
    output_index_.assign(a_.points_to_.buffers().size(), std::nullopt);
    assigned_.assign(a_.points_to_.buffers().size(), false);
    const hlo::HloInstruction* root = a_.schedule_.computation->root();
    if (root == nullptr) return;
    for (const auto& [index, id] : a_.points_to_.LeavesOf(root)) {
      if (!output_index_[id]) output_index_[id] = index;
      a_.placements_[id].live_end = a_.schedule_.size() - 1;
    }
  }

  int32_t AddAllocation(thunks::Allocation allocation, int64_t buffer_id) {
    allocation.alignment = kBufferAlignment;
    allocation.output = output_index_[buffer_id];
    a_.allocations_.push_back(std::move(allocation));
    int32_t number = static_cast<int32_t>(a_.allocations_.size() - 1);
    a_.placements_[buffer_id].slice = {number, 0, a_.points_to_.buffer(buffer_id).size};
    assigned_[buffer_id] = true;
    return number;
  }

  void AssignParameters() {
    std::vector<const LogicalBuffer*> params;
    for (const LogicalBuffer& b : a_.points_to_.buffers())
      if (b.defining->opcode() == hlo::HloOpcode::kParameter) params.push_back(&b);
    std::sort(params.begin(), params.end(), [](const LogicalBuffer* x, const LogicalBuffer* y) {
      if (x->defining->parameter_number() != y->defining->parameter_number())
        return x->defining->parameter_number() < y->defining->parameter_number();
      return x->index < y->index;
    });
    for (const LogicalBuffer* b : params) {
      thunks::Allocation allocation;
      allocation.size = b->size;
      allocation.parameter = thunks::ParameterRef{b->defining->parameter_number(), b->index};
      AddAllocation(std::move(allocation), b->id);
    }
  }

  void AssignConstants() {
    for (const hlo::HloInstruction* inst : a_.schedule_.sequence) {
      if (inst->opcode() != hlo::HloOpcode::kConstant) continue;
      for (const auto& [index, id] : a_.points_to_.LeavesOf(inst)) {
        thunks::Allocation allocation;
        allocation.size = a_.points_to_.buffer(id).size;
        allocation.constant = static_cast<int64_t>(a_.constants_.size());
        a_.constants_.push_back(inst);
        AddAllocation(std::move(allocation), id);
      }
    }
  }

  void AssignOutputs() {
    const hlo::HloInstruction* root = a_.schedule_.computation->root();
    if (root == nullptr) return;
    for (const auto& [index, id] : a_.points_to_.LeavesOf(root)) {
      if (assigned_[id]) continue;  // parameter, constant, or repeated leaf
      thunks::Allocation allocation;
      allocation.size = a_.points_to_.buffer(id).size;
      AddAllocation(std::move(allocation), id);
    }
  }

  void AssignTemps() {
    std::vector<int64_t> temps;
    std::vector<HeapRequest> requests;
    for (const LogicalBuffer& b : a_.points_to_.buffers()) {
      if (assigned_[b.id]) continue;
      temps.push_back(b.id);
      requests.push_back({b.size, a_.placements_[b.id].live_start, a_.placements_[b.id].live_end});
    }
    if (temps.empty()) return;
    HeapResult heap = SimulateHeap(requests, kBufferAlignment);
    thunks::Allocation arena;
    arena.size = heap.arena_size;
    arena.alignment = kBufferAlignment;
    a_.allocations_.push_back(arena);
    a_.temp_allocation_ = static_cast<int32_t>(a_.allocations_.size() - 1);
    a_.peak_temp_bytes_ = heap.arena_size;
    a_.temp_lower_bound_ = heap.lower_bound;
    for (size_t i = 0; i < temps.size(); ++i)
      a_.placements_[temps[i]].slice = {a_.temp_allocation_, heap.offsets[i], requests[i].size};
  }

  BufferAssignment& a_;
  std::vector<std::optional<ShapeIndex>> output_index_;
  std::vector<bool> assigned_;  // buffers with an allocation of their own
};

StatusOr<thunks::BufferSlice> BufferAssignment::SliceFor(const hlo::HloInstruction* inst,
                                                         const ShapeIndex& index) const {
  KILN_ASSIGN_OR_RETURN(int64_t id, points_to_.BufferAt(inst, index));
  return placements_[id].slice;
}

StatusOr<BufferAssignment> AssignBuffers(const hlo::HloComputation& computation, SequentialSchedule schedule) {
  if (schedule.computation != &computation) return Error("schedule is not of computation " + computation.name());
  schedule.Reindex();
  KILN_RETURN_IF_ERROR(VerifySchedule(schedule));
  return BufferAssigner::Assign(computation, std::move(schedule));
}

StatusOr<BufferAssignment> AssignBuffers(const hlo::HloModule& module) {
  if (module.entry() == nullptr) return Error("module has no entry computation");
  return AssignBuffers(*module.entry(), PostOrderSchedule(*module.entry()));
}

}  // namespace kiln::pipeline
