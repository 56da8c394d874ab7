// Which simulated devices take part in one execution of a collective.
//
// XLA reads replica_groups according to a group mode derived from whether
// the op has a channel_id and, for all-reduce / reduce-scatter / all-gather,
// from use_global_device_ids (xla/service/collective_ops_utils.cc,
// GetCollectiveOpGroupMode and GetParticipatingDevices):
//   no channel_id                     -> cross-replica: groups list replica
//       ids; the participants are those replicas in the caller's partition.
//   channel_id, op without the flag   -> cross-partition (all-to-all,
//       collective-permute, collective-broadcast): groups list partition ids
//       within the caller's replica.
//   channel_id, use_global_device_ids=false (absent) on all-reduce,
//       reduce-scatter, all-gather    -> cross-replica-and-partition: groups
//       list replica ids; participants are every partition of each listed
//       replica, replica-major.
//   channel_id, use_global_device_ids=true -> flattened ids: groups list
//       device ids replica * num_partitions + partition.
// Empty replica_groups means one group of every replica (every partition in
// cross-partition mode); it is an error in flattened-id mode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/hlo/instruction.h"

namespace kiln::hlo {

enum class CollectiveGroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

std::string CollectiveGroupModeName(CollectiveGroupMode mode);

// The group mode of a collective instruction, or an error for the invalid
// combination use_global_device_ids=true without channel_id.
StatusOr<CollectiveGroupMode> GroupModeOf(const HloInstruction& inst);

// Where a device sits in the module's device grid.
struct DeviceGrid {
  int64_t replica_count = 1;
  int64_t partition_count = 1;
  int64_t replica = 0;
  int64_t partition = 0;
  int64_t device_id() const { return replica * partition_count + partition; }
};

// Device ids of the participants of `inst` (read from its replica_groups) on
// the device `grid` describes, in group order; the caller is among them.
StatusOr<std::vector<int64_t>> CollectiveParticipants(const HloInstruction& inst,
                                                      const DeviceGrid& grid);

// The device ids a collective-permute / -start addresses on this device:
// every replica of its partition (cross-replica mode, source_target_pairs
// hold replica ids) or every partition of its replica (cross-partition mode,
// pairs hold partition ids), ordered by that id. `own_id` receives the
// caller's id in the pairs' numbering.
StatusOr<std::vector<int64_t>> PermutePlane(const HloInstruction& inst, const DeviceGrid& grid,
                                            int64_t& own_id);

// The group size a collective's shapes imply, when they imply one: an
// all-gather's result over its operand along the gathered dimension, a
// reduce-scatter's operand over its result, a tuple all-to-all's operand
// count. Collective tests are often dumped with empty replica_groups and
// no replica_count; this is the device count they were written for.
std::optional<int64_t> ShapeImpliedGroupSize(const HloInstruction& inst);

// send / recv: XLA gives their source-target pairs as the frontend
// attribute _xla_send_recv_source_target_pairs="{{s,t},...}" (ids on the
// PermutePlane: replica ids when channel_id is 0 or absent, partition ids
// when it is positive, as XLA's GPU P2P thunks read them), and optionally
// _xla_send_recv_validation="{{lo,hi},...}": pair i transfers only in the
// executions lo..hi of the instruction (the iterations of its loop).
// Absent attributes give no pairs; malformed ones are an error.
using SourceTargetPairs = std::vector<std::pair<int64_t, int64_t>>;
StatusOr<SourceTargetPairs> SendRecvPairs(const HloInstruction& inst);
StatusOr<std::optional<SourceTargetPairs>> SendRecvValidation(const HloInstruction& inst);

}  // namespace kiln::hlo
