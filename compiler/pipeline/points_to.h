// Logical buffers and a points-to analysis over one computation.
//
// A logical buffer is the storage of one array (or token) leaf of an
// instruction's output. Instructions that only rearrange references —
// tuple, get-tuple-element, bitcast, opt-barrier — define no buffer: each of
// their leaves points to the buffer of the operand leaf it forwards. A
// collective -done defines none either: its leaves are its start's result
// leaves (IsForwardingDone). HLO has
// no tuple-select, so every leaf points to exactly one buffer, which keeps
// the analysis a plain map instead of XLA's points-to sets.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "common/shape.h"
#include "common/status.h"
#include "compiler/hlo/computation.h"

namespace kiln::pipeline {

struct LogicalBuffer {
  int64_t id = 0;
  const hlo::HloInstruction* defining = nullptr;
  ShapeIndex index;   // leaf of defining->shape()
  int64_t size = 0;   // bytes (Shape::ByteSize of the leaf; 0 for tokens)
  int64_t color = 0;  // memory space S(n) of the leaf's layout
};

// One operand leaf a (non-forwarding) instruction reads, and its buffer.
struct OperandUse {
  int64_t operand_number = 0;
  ShapeIndex operand_index;
  int64_t buffer = 0;
};

// True for opcodes whose output only forwards operand buffers.
bool IsAliasingOpcode(hlo::HloOpcode opcode);

// True for a collective -done (all-reduce-done, all-gather-done,
// collective-permute-done, async-done) whose operand is its start: its
// result is the start's result buffer (leaf {1, ...} of the start's tuple,
// the start's own value for all-reduce-start), which the exchange fills in
// place, so the done moves no data. Unlike the aliasing opcodes it still
// reads that buffer: it waits for the exchange, so buffer assignment keeps
// the buffer (and the start's operands, which the exchange reads until
// then) live until the done runs.
bool IsForwardingDone(const hlo::HloInstruction& inst);

// Every leaf index (non-tuple sub-shape) of `shape`, in pre-order.
std::vector<ShapeIndex> LeafIndices(const Shape& shape);

class PointsToAnalysis {
 public:
  static StatusOr<PointsToAnalysis> Run(const hlo::HloComputation& computation);

  const std::vector<LogicalBuffer>& buffers() const { return buffers_; }
  const LogicalBuffer& buffer(int64_t id) const { return buffers_[id]; }

  // Leaf index -> buffer id for `inst`'s output; empty if `inst` is unknown.
  const std::map<ShapeIndex, int64_t>& LeavesOf(const hlo::HloInstruction* inst) const;
  // The buffer at leaf `index` of `inst`, or an error naming the instruction.
  StatusOr<int64_t> BufferAt(const hlo::HloInstruction* inst, const ShapeIndex& index) const;
  // Every operand leaf `inst` reads, in operand order; a buffer read through
  // two operands (or two leaves) appears twice.
  std::vector<OperandUse> OperandUses(const hlo::HloInstruction* inst) const;

 private:
  Status Define(const hlo::HloInstruction* inst);
  Status Alias(const hlo::HloInstruction* inst);

  std::vector<LogicalBuffer> buffers_;
  std::unordered_map<const hlo::HloInstruction*, std::map<ShapeIndex, int64_t>> leaves_;
};

}  // namespace kiln::pipeline
