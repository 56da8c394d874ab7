// Participant computation for collectives; the rules are in the header.
#include "compiler/evaluator/collective_groups.h"

#include <algorithm>

namespace kiln::hlo {

namespace {

// Ops whose XLA class carries use_global_device_ids.
bool HasGlobalDeviceIdsFlag(HloOpcode op) {
  return op == HloOpcode::kAllReduce || op == HloOpcode::kAllReduceStart ||
         op == HloOpcode::kReduceScatter || op == HloOpcode::kAllGather ||
         op == HloOpcode::kAllGatherStart;
}

std::string GroupsToString(const std::vector<std::vector<int64_t>>& groups) {
  std::string s = "{";
  for (size_t g = 0; g < groups.size(); ++g) {
    s += g ? ",{" : "{";
    for (size_t i = 0; i < groups[g].size(); ++i) s += (i ? "," : "") + std::to_string(groups[g][i]);
    s += "}";
  }
  return s + "}";
}

// The group (of ids in the mode's numbering) that contains `own_id`;
// empty `groups` means ids 0..total-1.
StatusOr<std::vector<int64_t>> FindGroup(const HloInstruction& inst,
                                         const std::vector<std::vector<int64_t>>& groups,
                                         int64_t own_id, int64_t total) {
  if (groups.empty()) {
    std::vector<int64_t> all(total);
    for (int64_t i = 0; i < total; ++i) all[i] = i;
    return all;
  }
  const std::vector<int64_t>* found = nullptr;
  for (const auto& g : groups) {
    if (std::find(g.begin(), g.end(), own_id) == g.end()) continue;
    if (found)
      return Error(inst.DebugName() + ": id " + std::to_string(own_id) +
                   " appears in two replica groups " + GroupsToString(groups));
    found = &g;
  }
  if (!found)
    return Error(inst.DebugName() + ": id " + std::to_string(own_id) +
                 " is in no replica group of " + GroupsToString(groups));
  for (int64_t id : *found)
    if (id < 0 || id >= total)
      return Error(inst.DebugName() + ": replica group id " + std::to_string(id) +
                   " out of range (" + std::to_string(total) + " ids)");
  return *found;
}

}  // namespace

std::string CollectiveGroupModeName(CollectiveGroupMode mode) {
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica: return "cross-replica";
    case CollectiveGroupMode::kCrossPartition: return "cross-partition";
    case CollectiveGroupMode::kCrossReplicaAndPartition: return "cross-replica-and-partition";
    case CollectiveGroupMode::kFlattenedId: return "flattened-id";
  }
  return "?";
}

StatusOr<CollectiveGroupMode> GroupModeOf(const HloInstruction& inst) {
  const bool has_channel = inst.HasAttribute("channel_id");
  const bool global_ids = inst.GetBool("use_global_device_ids", false);
  if (!has_channel) {
    if (global_ids)
      return Error(inst.DebugName() + ": use_global_device_ids=true requires a channel_id");
    return CollectiveGroupMode::kCrossReplica;
  }
  if (!HasGlobalDeviceIdsFlag(inst.opcode())) return CollectiveGroupMode::kCrossPartition;
  return global_ids ? CollectiveGroupMode::kFlattenedId
                    : CollectiveGroupMode::kCrossReplicaAndPartition;
}

StatusOr<std::vector<int64_t>> CollectiveParticipants(const HloInstruction& inst,
                                                      const DeviceGrid& grid) {
  KILN_ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(inst));
  std::vector<std::vector<int64_t>> groups;
  if (const auto* rg = inst.GetAttribute<ReplicaGroups>("replica_groups")) groups = rg->groups;
  const int64_t P = grid.partition_count;
  std::vector<int64_t> devices;
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica: {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> replicas,
                            FindGroup(inst, groups, grid.replica, grid.replica_count));
      for (int64_t r : replicas) devices.push_back(r * P + grid.partition);
      break;
    }
    case CollectiveGroupMode::kCrossPartition: {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> partitions,
                            FindGroup(inst, groups, grid.partition, P));
      for (int64_t p : partitions) devices.push_back(grid.replica * P + p);
      break;
    }
    case CollectiveGroupMode::kCrossReplicaAndPartition: {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> replicas,
                            FindGroup(inst, groups, grid.replica, grid.replica_count));
      for (int64_t r : replicas)
        for (int64_t p = 0; p < P; ++p) devices.push_back(r * P + p);
      break;
    }
    case CollectiveGroupMode::kFlattenedId: {
      if (groups.empty())
        return Error(inst.DebugName() + ": use_global_device_ids=true needs explicit replica_groups");
      KILN_ASSIGN_OR_RETURN(devices, FindGroup(inst, groups, grid.device_id(),
                                               grid.replica_count * P));
      break;
    }
  }
  return devices;
}

StatusOr<std::vector<int64_t>> PermutePlane(const HloInstruction& inst, const DeviceGrid& grid,
                                            int64_t& own_id) {
  KILN_ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(inst));
  std::vector<int64_t> devices;
  const int64_t P = grid.partition_count;
  if (mode == CollectiveGroupMode::kCrossReplica) {
    own_id = grid.replica;
    for (int64_t r = 0; r < grid.replica_count; ++r) devices.push_back(r * P + grid.partition);
  } else {
    own_id = grid.partition;
    for (int64_t p = 0; p < P; ++p) devices.push_back(grid.replica * P + p);
  }
  return devices;
}

std::optional<int64_t> ShapeImpliedGroupSize(const HloInstruction& inst) {
  const HloOpcode op = inst.opcode();
  const std::vector<int64_t> dims = inst.dimensions();
  if (op == HloOpcode::kAllToAll) {
    if (dims.empty() && inst.operand_count() > 1) return inst.operand_count();
    return std::nullopt;
  }
  const bool gather = op == HloOpcode::kAllGather || op == HloOpcode::kAllGatherStart;
  if ((!gather && op != HloOpcode::kReduceScatter) || dims.size() != 1 || inst.operand_count() < 1) return std::nullopt;
  const Shape& operand = inst.operand(0)->shape();
  const Shape* result = &inst.shape();
  if (op == HloOpcode::kAllGatherStart && result->IsTuple() && result->tuple_size() > 1) result = &result->tuple_shape(1);
  if (inst.operand_count() > 1 && result->IsTuple() && result->tuple_size() > 0) result = &result->tuple_shape(0);
  const int64_t d = dims[0];
  if (!operand.IsArray() || !result->IsArray() || d < 0 || d >= operand.rank() || d >= result->rank())
    return std::nullopt;
  const int64_t small = gather ? operand.dim(d) : result->dim(d);
  const int64_t large = gather ? result->dim(d) : operand.dim(d);
  if (small <= 0 || large % small != 0) return std::nullopt;
  return large / small;
}

}  // namespace kiln::hlo
