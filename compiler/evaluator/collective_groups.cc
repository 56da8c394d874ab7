// Participant computation for collectives; the rules are in the header.
#include "compiler/evaluator/collective_groups.h"

#include <algorithm>
#include <cctype>

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
  if (inst.opcode() == HloOpcode::kSend || inst.opcode() == HloOpcode::kRecv) {
    const int64_t* channel = inst.GetAttribute<int64_t>("channel_id");
    return channel && *channel > 0 ? CollectiveGroupMode::kCrossPartition : CollectiveGroupMode::kCrossReplica;
  }
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

namespace {

// The quoted value of `key` in the instruction's frontend_attributes.
std::optional<std::string> FrontendAttribute(const HloInstruction& inst, const std::string& key) {
  const Attribute* attr = inst.FindAttribute("frontend_attributes");
  const auto* raw = attr ? std::get_if<RawAttr>(&attr->value) : nullptr;
  if (!raw) return std::nullopt;
  const std::string& t = raw->text;
  for (size_t at = t.find(key); at != std::string::npos; at = t.find(key, at + 1)) {
    const bool starts_word = at == 0 || !(std::isalnum(static_cast<unsigned char>(t[at - 1])) || t[at - 1] == '_');
    size_t i = at + key.size();
    while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
    if (!starts_word || i >= t.size() || t[i] != '=') continue;
    ++i;
    while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
    if (i >= t.size() || t[i] != '"') return std::nullopt;
    const size_t end = t.find('"', i + 1);
    if (end == std::string::npos) return std::nullopt;
    return t.substr(i + 1, end - i - 1);
  }
  return std::nullopt;
}

// "{{a,b},{c,d}}" as pairs.
StatusOr<SourceTargetPairs> ParsePairs(const HloInstruction& inst, const std::string& key, const std::string& text) {
  SourceTargetPairs pairs;
  std::vector<int64_t> numbers;
  int depth = 0;
  std::string digits;
  auto flush = [&]() {
    if (!digits.empty()) numbers.push_back(std::stoll(digits));
    digits.clear();
  };
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '-' && digits.empty())) {
      digits += c;
      continue;
    }
    flush();
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (depth == 2) {
        if (numbers.size() != 2) return Error(inst.DebugName() + ": " + key + " entries must be pairs");
        pairs.emplace_back(numbers[0], numbers[1]);
        numbers.clear();
      }
      --depth;
    } else if (c != ',' && !std::isspace(static_cast<unsigned char>(c))) {
      return Error(inst.DebugName() + ": malformed " + key + " \"" + text + "\"");
    }
    if (depth < 0 || depth > 2) return Error(inst.DebugName() + ": malformed " + key + " \"" + text + "\"");
  }
  if (depth != 0 || !digits.empty()) return Error(inst.DebugName() + ": malformed " + key + " \"" + text + "\"");
  return pairs;
}

}  // namespace

StatusOr<SourceTargetPairs> SendRecvPairs(const HloInstruction& inst) {
  const std::string key = "_xla_send_recv_source_target_pairs";
  std::optional<std::string> text = FrontendAttribute(inst, key);
  if (!text) return SourceTargetPairs{};
  return ParsePairs(inst, key, *text);
}

StatusOr<std::optional<SourceTargetPairs>> SendRecvValidation(const HloInstruction& inst) {
  const std::string key = "_xla_send_recv_validation";
  std::optional<std::string> text = FrontendAttribute(inst, key);
  if (!text) return std::optional<SourceTargetPairs>();
  // XLA's "invalid": the pair never transfers.
  if (*text == "invalid") return std::optional<SourceTargetPairs>(SourceTargetPairs{});
  KILN_ASSIGN_OR_RETURN(SourceTargetPairs bounds, ParsePairs(inst, key, *text));
  return std::optional<SourceTargetPairs>(std::move(bounds));
}

}  // namespace kiln::hlo
