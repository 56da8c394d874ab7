// The latency-hiding scheduler's cost model; see overlap_cost_model.h.
#include "compiler/pipeline/overlap_cost_model.h"

#include <algorithm>

#include "compiler/analysis/hlo_cost_analysis.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/module.h"
#include "compiler/passes/wrapped_collective.h"
#include "compiler/pipeline/points_to.h"

namespace kiln::pipeline {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

constexpr double kExchangeLaunchSeconds = 4e-6;
constexpr double kRingStepSeconds = 1e-6;
constexpr double kBusBytesPerSecond = 450e9;
constexpr double kLaunchSeconds = 2e-6;
constexpr double kFlopsPerSecond = 66.9e12;
constexpr double kBytesPerSecond = 3e12;

// Devices in the collective's group: its first replica group's, or every
// device of the module when the groups are empty.
double GroupSize(const HloInstruction& c) {
  if (const auto* groups = c.GetAttribute<hlo::IntListList>("replica_groups"); groups && !groups->lists.empty())
    return static_cast<double>(std::max<size_t>(groups->lists[0].size(), 1));
  const hlo::HloModule* module = c.parent() ? c.parent()->parent() : nullptr;
  if (!module) return 1;
  return static_cast<double>(std::max<int64_t>(module->config().replica_count * module->config().num_partitions, 1));
}

// Bytes of the collective's operands (array leaves).
double OperandBytes(const HloInstruction& c) {
  double bytes = 0;
  for (const HloInstruction* op : c.operands())
    for (const ShapeIndex& index : LeafIndices(op->shape()))
      if (const Shape* leaf = SubShape(op->shape(), index); leaf && leaf->IsArray())
        bytes += static_cast<double>(leaf->ByteSize());
  return bytes;
}

}  // namespace

double EstimatedExchangeSeconds(const HloInstruction& start) {
  const HloInstruction* c = start.opcode() == HloOpcode::kAsyncStart ? passes::WrappedCollective(start) : &start;
  if (!c) return 0;
  const double n = GroupSize(*c), bytes = OperandBytes(*c);
  double bus_bytes = 0, steps = 0;
  switch (c->opcode()) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: bus_bytes = 2 * (n - 1) / n * bytes, steps = 2 * (n - 1); break;
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: bus_bytes = (n - 1) * bytes, steps = n - 1; break;
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll: bus_bytes = (n - 1) / n * bytes, steps = n - 1; break;
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectiveBroadcast: bus_bytes = bytes, steps = 1; break;
    default: return 0;
  }
  return kExchangeLaunchSeconds + steps * kRingStepSeconds + bus_bytes / kBusBytesPerSecond;
}

double EstimatedComputeSeconds(const HloInstruction& instruction) {
  const HloOpcode op = instruction.opcode();
  if (op == HloOpcode::kParameter || op == HloOpcode::kConstant || IsAliasingOpcode(op)) return 0;
  const analysis::HloCost cost = analysis::InstructionCost(instruction);
  return kLaunchSeconds + std::max(static_cast<double>(cost.flops + cost.transcendentals) / kFlopsPerSecond,
                                   static_cast<double>(cost.bytes_accessed()) / kBytesPerSecond);
}

}  // namespace kiln::pipeline
