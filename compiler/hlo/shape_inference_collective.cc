// Shape inference for collectives: all-reduce, all-gather, reduce-scatter,
// all-to-all, collective-permute, collective-broadcast, their async
// -start/-done forms, and replica-id / partition-id.
//
// How many devices take part in one collective (the "subgroup size") depends
// on the replica groups and on the group mode XLA derives from channel_id
// and use_global_device_ids; all-gather multiplies and reduce-scatter divides
// the gathered dimension by it. As in XLA's verifier, the shard count is read
// off the declared shape and checked against the subgroup size whenever the
// module's replica/partition counts make that size known (greater than 1).
#include <algorithm>
#include <set>

#include "compiler/hlo/module.h"
#include "compiler/hlo/shape_inference.h"

namespace kiln::hlo::shape_inference {
namespace {

enum class GroupMode { kCrossReplica, kCrossReplicaAndPartition, kFlattenedId, kCrossPartition };

struct DeviceCounts {
  int64_t replicas = 1, partitions = 1;
};

DeviceCounts CountsOf(const HloInstruction& inst) {
  DeviceCounts counts;
  if (inst.parent() != nullptr && inst.parent()->parent() != nullptr) {
    const ModuleConfig& config = inst.parent()->parent()->config();
    counts.replicas = config.replica_count;
    counts.partitions = config.num_partitions;
  }
  return counts;
}

std::vector<std::vector<int64_t>> Groups(const HloInstruction& inst) {
  if (const auto* g = inst.GetAttribute<ReplicaGroups>("replica_groups")) return g->groups;
  return {};
}

// XLA's GetCollectiveOpGroupMode; `allows_global_ids` is false for
// all-to-all and collective-permute, whose channel form is cross-partition.
StatusOr<GroupMode> ModeOf(const HloInstruction& inst, bool allows_global_ids) {
  const bool has_channel = IntAttr(inst, "channel_id").has_value();
  const bool global_ids = BoolAttr(inst, "use_global_device_ids", false);
  if (!allows_global_ids) return has_channel ? GroupMode::kCrossPartition : GroupMode::kCrossReplica;
  if (!has_channel) {
    if (global_ids) return Fail(inst, "use_global_device_ids=true needs a channel_id");
    return GroupMode::kCrossReplica;
  }
  return global_ids ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

// Every id in [0, n) appears exactly once; n matches the mode's device count
// (unless that count is the unset default 1); groups have one size if
// `uniform`.
Status CheckGroups(const HloInstruction& inst, GroupMode mode, bool uniform) {
  const auto groups = Groups(inst);
  if (groups.empty()) {
    if (mode == GroupMode::kFlattenedId)
      return Fail(inst, "replica_groups must be given with use_global_device_ids");
    return Status::Ok();
  }
  std::set<int64_t> seen;
  for (const auto& g : groups) {
    if (g.empty()) return Fail(inst, "has an empty replica group");
    if (uniform && g.size() != groups[0].size())
      return Fail(inst, "replica groups must all have the same size");
    for (int64_t id : g)
      if (id < 0 || !seen.insert(id).second)
        return Fail(inst, "replica id " + std::to_string(id) + " is negative or repeated");
  }
  const int64_t n = static_cast<int64_t>(seen.size());
  if (*seen.rbegin() != n - 1) return Fail(inst, "replica groups must name ids 0.." + std::to_string(n - 1));
  const DeviceCounts c = CountsOf(inst);
  const int64_t expected = mode == GroupMode::kCrossPartition ? c.partitions
                           : mode == GroupMode::kFlattenedId  ? c.replicas * c.partitions
                                                              : c.replicas;
  if (expected != 1 && n != expected)
    return Fail(inst, "replica groups name " + std::to_string(n) + " devices, expected " +
                          std::to_string(expected));
  return Status::Ok();
}

// XLA's GetSubgroupSize.
int64_t SubgroupSize(const HloInstruction& inst, GroupMode mode) {
  const auto groups = Groups(inst);
  const DeviceCounts c = CountsOf(inst);
  const int64_t group = groups.empty() ? 0 : static_cast<int64_t>(groups[0].size());
  switch (mode) {
    case GroupMode::kCrossReplica: return group ? group : c.replicas;
    case GroupMode::kCrossReplicaAndPartition: return (group ? group : c.replicas) * c.partitions;
    case GroupMode::kFlattenedId: return group;
    case GroupMode::kCrossPartition: return group ? group : c.partitions;
  }
  return 1;
}

// One result per operand: a single shape, or a tuple for several operands.
Shape OneOrTuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return shapes[0];
  return Shape::Tuple(std::move(shapes));
}

const Shape& NthResult(const Shape& declared, int64_t operand_count, int64_t i) {
  if (operand_count == 1 || !declared.IsTuple() || i >= declared.tuple_size()) return declared;
  return declared.tuple_shape(i);
}

StatusOr<Shape> InferAllReduce(const HloInstruction& inst) {
  KILN_ASSIGN_OR_RETURN(GroupMode mode, ModeOf(inst, true));
  KILN_RETURN_IF_ERROR(CheckGroups(inst, mode, /*uniform=*/false));
  if (inst.opcode() != HloOpcode::kCollectiveBroadcast) {
    KILN_ASSIGN_OR_RETURN(Signature reducer, CalleeSignature(inst, "to_apply"));
    if (reducer.parameters.size() != 2 || !reducer.result.IsScalar())
      return Fail(inst, "all-reduce computation " + reducer.name +
                            " must take 2 scalars and return a scalar");
  }
  std::vector<Shape> results;
  for (const HloInstruction* operand : inst.operands()) {
    KILN_RETURN_IF_ERROR(ExpectArray(inst, operand->shape(), "collective operand"));
    results.push_back(WithoutLayout(operand->shape()));
  }
  return OneOrTuple(std::move(results));
}

// all-gather (gather = true) and reduce-scatter: the result's dimension
// `dim` is the operand's times / divided by the shard count.
StatusOr<Shape> InferGatherOrScatter(const HloInstruction& inst, const Shape& declared_result,
                                     bool gather) {
  KILN_ASSIGN_OR_RETURN(GroupMode mode, ModeOf(inst, true));
  KILN_RETURN_IF_ERROR(CheckGroups(inst, mode, /*uniform=*/true));
  if (!gather) {
    KILN_ASSIGN_OR_RETURN(Signature reducer, CalleeSignature(inst, "to_apply"));
    if (reducer.parameters.size() != 2 || !reducer.result.IsScalar())
      return Fail(inst, "reduce-scatter computation " + reducer.name +
                            " must take 2 scalars and return a scalar");
  }
  std::optional<int64_t> dim = IntAttr(inst, "dimensions");
  if (!dim) return Fail(inst, "needs dimensions={d}");
  const int64_t n = inst.operand_count();
  // PyTorch/XLA threads a scalar through combined collectives as an ordering
  // token; such scalars pass through unchanged. The first array operand of
  // rank >= 1 determines the shard count.
  int64_t reference = -1;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = inst.operand(i)->shape();
    KILN_RETURN_IF_ERROR(ExpectArray(inst, s, "collective operand"));
    if (n > 1 && s.rank() == 0) continue;
    const Shape& out = NthResult(declared_result, n, i);
    if (*dim < 0 || *dim >= s.rank() || !out.IsArray() || *dim >= out.rank())
      return Fail(inst, "dimension " + std::to_string(*dim) + " is out of range for " + Str(s));
    if (reference < 0) reference = i;
  }
  if (reference < 0) return Fail(inst, "has no operand of rank >= 1 to gather or scatter");
  const int64_t in0 = inst.operand(reference)->shape().dim(*dim);
  const int64_t out0 = NthResult(declared_result, n, reference).dim(*dim);
  const int64_t big = gather ? out0 : in0, small = gather ? in0 : out0;
  const int64_t subgroup = SubgroupSize(inst, mode);
  const int64_t shards = small == 0 ? std::max<int64_t>(subgroup, 1) : (big + small - 1) / small;
  if (subgroup != 1 && shards != subgroup)
    return Fail(inst, "shard count " + std::to_string(shards) + " (from " +
                          Str(inst.operand(reference)->shape()) +
                          " and the declared result) differs from " +
                          "the group size " + std::to_string(subgroup));
  std::vector<Shape> results;
  for (const HloInstruction* operand : inst.operands()) {
    Shape s = WithoutLayout(operand->shape());
    std::vector<int64_t> dims = s.dims();
    if (n > 1 && s.rank() == 0) {
      results.push_back(s);
      continue;
    }
    if (gather) {
      dims[*dim] *= shards;
    } else {
      if (dims[*dim] % shards != 0)
        return Fail(inst, "dimension " + std::to_string(*dim) + " of " + Str(s) +
                              " is not divisible by the shard count " + std::to_string(shards));
      dims[*dim] /= shards;
    }
    results.push_back(Shape(s.element_type(), dims));
  }
  return OneOrTuple(std::move(results));
}

StatusOr<Shape> InferAllToAll(const HloInstruction& inst) {
  KILN_ASSIGN_OR_RETURN(GroupMode mode, ModeOf(inst, false));
  KILN_RETURN_IF_ERROR(CheckGroups(inst, mode, /*uniform=*/true));
  const int64_t split_count = SubgroupSize(inst, mode);
  if (inst.HasAttribute("dimensions")) {
    // Array form: split and concatenate along one dimension; shape kept.
    std::optional<int64_t> dim = IntAttr(inst, "dimensions");
    const Shape& s = inst.operand(0)->shape();
    if (inst.operand_count() != 1) return Fail(inst, "array all-to-all takes one operand");
    KILN_RETURN_IF_ERROR(ExpectArray(inst, s, "the operand of all-to-all"));
    if (!dim || *dim < 0 || *dim >= s.rank())
      return Fail(inst, "all-to-all dimension is out of range for " + Str(s));
    if (split_count > 0 && s.dim(*dim) % split_count != 0)
      return Fail(inst, "all-to-all dimension " + std::to_string(*dim) + " of " + Str(s) +
                            " is not divisible by the split count " + std::to_string(split_count));
    return WithoutLayout(s);
  }
  // Tuple form: one operand per participant, all of one shape.
  if (split_count > 1 && inst.operand_count() != split_count)
    return Fail(inst, "tuple all-to-all needs " + std::to_string(split_count) + " operands");
  std::vector<Shape> results;
  for (const HloInstruction* operand : inst.operands()) {
    if (!operand->shape().Compatible(inst.operand(0)->shape()))
      return Fail(inst, "all-to-all operands differ: " + Str(inst.operand(0)->shape()) + " and " +
                            Str(operand->shape()));
    results.push_back(WithoutLayout(operand->shape()));
  }
  return Shape::Tuple(std::move(results));
}

Status CheckSourceTargetPairs(const HloInstruction& inst) {
  KILN_ASSIGN_OR_RETURN(GroupMode mode, ModeOf(inst, false));
  const DeviceCounts c = CountsOf(inst);
  const int64_t limit = mode == GroupMode::kCrossReplica ? c.replicas : c.partitions;
  std::set<int64_t> sources, targets;
  const auto* pairs = inst.GetAttribute<IntListList>("source_target_pairs");
  if (!pairs) return Status::Ok();
  for (const auto& p : pairs->lists) {
    if (p.size() != 2) return Fail(inst, "source_target_pairs entries must be {source,target}");
    for (int64_t id : p)
      if (id < 0 || (limit != 1 && id >= limit))
        return Fail(inst, "source_target_pairs id " + std::to_string(id) + " is out of range");
    // The in-place (4-operand) form may name a device several times.
    if (inst.operand_count() == 1 &&
        (!sources.insert(p[0]).second || !targets.insert(p[1]).second))
      return Fail(inst, "source_target_pairs repeat a source or target");
  }
  return Status::Ok();
}

// Element `index` of an async collective's tuple operand.
StatusOr<Shape> AsyncElement(const HloInstruction& inst, int64_t index) {
  const Shape& operand = inst.operand(0)->shape();
  if (!operand.IsTuple() || operand.tuple_size() <= index)
    return Fail(inst, "operand must be the tuple of a -start op, got " + Str(operand));
  return WithoutLayout(operand.tuple_shape(index));
}

StatusOr<Shape> InferCollectivePermute(const HloInstruction& inst) {
  KILN_RETURN_IF_ERROR(CheckSourceTargetPairs(inst));
  const int64_t data = inst.operand_count() == 4 ? 1 : 0;  // in-place form: output buffer
  if (inst.opcode() == HloOpcode::kCollectivePermute)
    return WithoutLayout(inst.operand(data)->shape());
  // -start: (operand, result buffer, context...)
  std::vector<Shape> elements{WithoutLayout(inst.operand(0)->shape()),
                              WithoutLayout(inst.operand(data)->shape())};
  const Shape& declared = inst.shape();
  for (int64_t i = 2; declared.IsTuple() && i < declared.tuple_size(); ++i)
    elements.push_back(WithoutLayout(declared.tuple_shape(i)));
  return Shape::Tuple(std::move(elements));
}

}  // namespace

StatusOr<Shape> InferCollective(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
    case HloOpcode::kCollectiveBroadcast:
      return InferAllReduce(inst);
    case HloOpcode::kAllReduceDone:
      return WithoutLayout(inst.operand(0)->shape());
    case HloOpcode::kAllGather:
      return InferGatherOrScatter(inst, inst.shape(), /*gather=*/true);
    case HloOpcode::kAllGatherStart: {
      // (input(s), gathered result(s))
      const Shape& declared = inst.shape();
      if (!declared.IsTuple() || declared.tuple_size() != 2)
        return Fail(inst, "all-gather-start must produce (inputs, results), declared " +
                              Str(declared));
      KILN_ASSIGN_OR_RETURN(Shape gathered,
                            InferGatherOrScatter(inst, declared.tuple_shape(1), /*gather=*/true));
      std::vector<Shape> inputs;
      for (const HloInstruction* operand : inst.operands())
        inputs.push_back(WithoutLayout(operand->shape()));
      return Shape::Tuple({OneOrTuple(std::move(inputs)), gathered});
    }
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
      return AsyncElement(inst, 1);
    case HloOpcode::kReduceScatter:
      return InferGatherOrScatter(inst, inst.shape(), /*gather=*/false);
    case HloOpcode::kAllToAll:
      return InferAllToAll(inst);
    case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteStart:
      return InferCollectivePermute(inst);
    default:  // replica-id, partition-id
      return Shape::Scalar(ElementType::kU32);
  }
}

}  // namespace kiln::hlo::shape_inference
