// Points-to analysis: which logical buffer each output leaf refers to.
#include "compiler/pipeline/points_to.h"

#include <string>

#include "compiler/pipeline/in_place.h"

namespace kiln::pipeline {
namespace {

void CollectLeaves(const Shape& shape, ShapeIndex& prefix, std::vector<ShapeIndex>& out) {
  if (!shape.IsTuple()) {
    out.push_back(prefix);
    return;
  }
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    prefix.push_back(i);
    CollectLeaves(shape.tuple_shape(i), prefix, out);
    prefix.pop_back();
  }
}

int64_t LeafBytes(const Shape& leaf) { return leaf.IsArray() ? leaf.ByteSize() : 0; }

// The operand leaves that `inst`'s leaf `index` forwards: tuple {i, rest}
// -> operand i at {rest}; get-tuple-element {rest} -> operand at {k, rest};
// bitcast and opt-barrier forward the same index.
bool ForwardedLeaf(const hlo::HloInstruction* inst, const ShapeIndex& index,
                   const hlo::HloInstruction** operand, ShapeIndex* operand_index) {
  if (IsForwardingDone(*inst)) {
    *operand = inst->operand(0);
    operand_index->clear();
    if (inst->opcode() != hlo::HloOpcode::kAllReduceDone) operand_index->push_back(1);
    operand_index->insert(operand_index->end(), index.begin(), index.end());
    return true;
  }
  switch (inst->opcode()) {
    case hlo::HloOpcode::kTuple:
      if (index.empty() || index[0] < 0 || index[0] >= inst->operand_count()) return false;
      *operand = inst->operand(index[0]);
      operand_index->assign(index.begin() + 1, index.end());
      return true;
    case hlo::HloOpcode::kGetTupleElement:
      if (inst->operand_count() != 1) return false;
      *operand = inst->operand(0);
      operand_index->clear();
      operand_index->push_back(inst->tuple_index());
      operand_index->insert(operand_index->end(), index.begin(), index.end());
      return true;
    default:
      if (inst->operand_count() != 1) return false;
      *operand = inst->operand(0);
      *operand_index = index;
      return true;
  }
}

}  // namespace

bool IsAliasingOpcode(hlo::HloOpcode opcode) {
  return opcode == hlo::HloOpcode::kTuple || opcode == hlo::HloOpcode::kGetTupleElement ||
         opcode == hlo::HloOpcode::kBitcast || opcode == hlo::HloOpcode::kOptimizationBarrier;
}

bool IsForwardingDone(const hlo::HloInstruction& inst) {
  if (inst.operand_count() != 1) return false;
  const hlo::HloOpcode start = inst.operand(0)->opcode();
  switch (inst.opcode()) {
    case hlo::HloOpcode::kAllReduceDone: return start == hlo::HloOpcode::kAllReduceStart;
    case hlo::HloOpcode::kAllGatherDone: return start == hlo::HloOpcode::kAllGatherStart;
    case hlo::HloOpcode::kCollectivePermuteDone: return start == hlo::HloOpcode::kCollectivePermuteStart;
    case hlo::HloOpcode::kAsyncDone: return start == hlo::HloOpcode::kAsyncStart;
    default: return false;
  }
}

std::vector<ShapeIndex> LeafIndices(const Shape& shape) {
  std::vector<ShapeIndex> out;
  ShapeIndex prefix;
  CollectLeaves(shape, prefix, out);
  return out;
}

StatusOr<PointsToAnalysis> PointsToAnalysis::Run(const hlo::HloComputation& computation) {
  PointsToAnalysis analysis;
  for (const hlo::HloInstruction* inst : computation.PostOrder()) {
    Status status = IsAliasingOpcode(inst->opcode()) || IsForwardingDone(*inst) ? analysis.Alias(inst)
                                                                                  : analysis.Define(inst);
    if (!status.ok()) return status;
  }
  return analysis;
}

Status PointsToAnalysis::Define(const hlo::HloInstruction* inst) {
  auto& leaves = leaves_[inst];
  for (const ShapeIndex& index : LeafIndices(inst->shape())) {
    const Shape* leaf = SubShape(inst->shape(), index);
    LogicalBuffer buffer;
    buffer.id = static_cast<int64_t>(buffers_.size());
    buffer.defining = inst;
    buffer.index = index;
    buffer.size = LeafBytes(*leaf);
    buffer.color = MemorySpaceOf(*leaf);
    leaves[index] = buffer.id;
    buffers_.push_back(std::move(buffer));
  }
  return Status::Ok();
}

Status PointsToAnalysis::Alias(const hlo::HloInstruction* inst) {
  auto& leaves = leaves_[inst];
  for (const ShapeIndex& index : LeafIndices(inst->shape())) {
    const hlo::HloInstruction* operand = nullptr;
    ShapeIndex operand_index;
    if (!ForwardedLeaf(inst, index, &operand, &operand_index))
      return Error(inst->DebugName() + ": cannot forward output leaf " + ShapeIndexToString(index));
    auto found = BufferAt(operand, operand_index);
    if (!found.ok())
      return Error(inst->DebugName() + ": output leaf " + ShapeIndexToString(index) + " has no operand buffer: " +
                   found.status().message());
    leaves[index] = *found;
  }
  return Status::Ok();
}

const std::map<ShapeIndex, int64_t>& PointsToAnalysis::LeavesOf(const hlo::HloInstruction* inst) const {
  static const std::map<ShapeIndex, int64_t> kEmpty;
  auto it = leaves_.find(inst);
  return it == leaves_.end() ? kEmpty : it->second;
}

StatusOr<int64_t> PointsToAnalysis::BufferAt(const hlo::HloInstruction* inst, const ShapeIndex& index) const {
  auto it = leaves_.find(inst);
  if (it == leaves_.end()) return Error(inst->DebugName() + " is not analyzed");
  auto leaf = it->second.find(index);
  if (leaf == it->second.end())
    return Error(inst->DebugName() + " has no array leaf at " + ShapeIndexToString(index));
  return leaf->second;
}

std::vector<OperandUse> PointsToAnalysis::OperandUses(const hlo::HloInstruction* inst) const {
  std::vector<OperandUse> uses;
  for (int64_t i = 0; i < inst->operand_count(); ++i)
    for (const auto& [index, id] : LeavesOf(inst->operand(i))) uses.push_back({i, index, id});
  return uses;
}

}  // namespace kiln::pipeline
