// Collective thunks: all-reduce, all-gather, reduce-scatter, all-to-all,
// collective-permute and collective-broadcast (and the -start/-done pairs),
// replica-id and partition-id.
//
// Replica groups are resolved here, once, on the module's device grid
// (ThunkProgram::replica_count x num_partitions) with the evaluator's
// participant rules (hlo/collective_groups.h, XLA's
// GetParticipatingDevices): the thunk carries the groups as global device
// ids, so the runtime only looks up its device's group and rank. The
// reduction is read off the reducer computation; anything but a plain sum,
// product, min, max, and or or of its two parameters is a one-line error.
#include <algorithm>
#include <set>

#include "compiler/emitter/cost_model.h"
#include "compiler/emitter/program_builder.h"
#include "compiler/evaluator/collective_groups.h"
#include "compiler/passes/wrapped_collective.h"

namespace kiln::emitter {

namespace th = ::kiln::thunks;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

hlo::DeviceGrid GridOf(const th::ThunkProgram& program, int64_t device) {
  hlo::DeviceGrid grid;
  grid.replica_count = program.replica_count;
  grid.partition_count = program.num_partitions;
  grid.replica = device / program.num_partitions;
  grid.partition = device % program.num_partitions;
  return grid;
}

// Every device's group, each listed once, in the order of its first device;
// an error when two devices disagree on a group they share.
StatusOr<std::vector<std::vector<int64_t>>> ResolveDeviceGroups(const HloInstruction& inst,
                                                               const th::ThunkProgram& program) {
  std::vector<std::vector<int64_t>> of_device(program.device_count());
  for (int64_t d = 0; d < program.device_count(); ++d) {
    KILN_ASSIGN_OR_RETURN(of_device[d], hlo::CollectiveParticipants(inst, GridOf(program, d)));
  }
  std::vector<std::vector<int64_t>> groups;
  std::set<int64_t> placed;
  for (int64_t d = 0; d < program.device_count(); ++d) {
    if (placed.count(d)) continue;
    for (int64_t member : of_device[d]) {
      if (of_device[member] != of_device[d])
        return Error(inst.DebugName() + ": devices " + std::to_string(d) + " and " + std::to_string(member) +
                     " disagree on their replica group");
      placed.insert(member);
    }
    groups.push_back(of_device[d]);
  }
  return groups;
}

// (source, target) device pairs of a collective-permute on every replica
// (cross-replica mode) or partition plane.
StatusOr<std::vector<std::pair<int64_t, int64_t>>> ResolvePermutePairs(const HloInstruction& inst,
                                                                      const th::ThunkProgram& program) {
  std::vector<std::vector<int64_t>> pairs;
  if (const auto* p = inst.GetAttribute<hlo::IntListList>("source_target_pairs")) pairs = p->lists;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t d = 0; d < program.device_count(); ++d) {
    int64_t own_id = 0;
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> plane, hlo::PermutePlane(inst, GridOf(program, d), own_id));
    for (const std::vector<int64_t>& pair : pairs) {
      const int64_t n = static_cast<int64_t>(plane.size());
      if (pair.size() != 2 || pair[0] < 0 || pair[1] < 0 || pair[0] >= n || pair[1] >= n)
        return Error(inst.DebugName() + ": invalid source_target_pairs entry (ids below " + std::to_string(n) +
                     ")");
      if (pair[0] == own_id) out.emplace_back(d, plane[pair[1]]);
    }
  }
  return out;
}

// The reduction a reducer computation performs: op(parameter(0),
// parameter(1)) of scalars, in either order.
StatusOr<th::ReductionKind> ReductionOf(const HloInstruction& inst) {
  const hlo::HloComputation* reducer = inst.to_apply();
  const HloInstruction* root = reducer ? reducer->root() : nullptr;
  auto is_plain = [&] {
    if (!root || root->operand_count() != 2 || !root->shape().IsScalar()) return false;
    const HloInstruction* a = root->operand(0);
    const HloInstruction* b = root->operand(1);
    return a->opcode() == HloOpcode::kParameter && b->opcode() == HloOpcode::kParameter &&
           a->parameter_number() + b->parameter_number() == 1 && reducer->instructions().size() == 3;
  };
  if (is_plain()) {
    const bool pred = root->shape().element_type() == ElementType::kPred;
    switch (root->opcode()) {
      case HloOpcode::kAdd: return pred ? th::ReductionKind::kOr : th::ReductionKind::kSum;
      case HloOpcode::kMultiply: return pred ? th::ReductionKind::kAnd : th::ReductionKind::kProduct;
      case HloOpcode::kMinimum: return th::ReductionKind::kMin;
      case HloOpcode::kMaximum: return th::ReductionKind::kMax;
      case HloOpcode::kAnd: return th::ReductionKind::kAnd;
      case HloOpcode::kOr: return th::ReductionKind::kOr;
      default: break;
    }
  }
  return Error(inst.DebugName() + ": bef-compile supports reducers that are a plain sum, product, min, max, and "
               "or or of their two parameters, not '" + (reducer ? reducer->name() : std::string("?")) + "'");
}

// Element types a reduction runs on: every XLA array type (the host
// reduces them all, runtime/collective_reduction.h); NCCL reduces fewer,
// and the CUDA runtime refuses the rest at load.
bool IsReducibleType(ElementType t) {
  return t != ElementType::kInvalid && t != ElementType::kToken && t != ElementType::kTuple &&
         t != ElementType::kOpaque;
}

// Where result `i` of `count` lies in the instruction's value: the value
// itself, element i of a tuple, or within element 1 of a -start's tuple.
ShapeIndex ResultIndex(const HloInstruction& inst, size_t i, size_t count) {
  const bool start = inst.opcode() == HloOpcode::kAllGatherStart ||
                     inst.opcode() == HloOpcode::kCollectivePermuteStart || inst.opcode() == HloOpcode::kAsyncStart;
  ShapeIndex index;
  if (start) index.push_back(1);
  if (count > 1) index.push_back(static_cast<int64_t>(i));
  return index;
}

StatusOr<int64_t> SingleDimension(const HloInstruction& inst) {
  std::vector<int64_t> dims = inst.dimensions();
  if (dims.size() != 1) return Error(inst.DebugName() + ": needs dimensions={d}");
  return dims[0];
}

int64_t TotalBytes(const std::vector<th::CollectiveBuffer>& buffers) {
  int64_t bytes = 0;
  for (const th::CollectiveBuffer& b : buffers) bytes += b.destination.size;
  return bytes;
}

}  // namespace

StatusOr<std::vector<th::CollectiveBuffer>> ComputationEmitter::CollectiveBuffers(const HloInstruction& inst,
                                                                                 bool reduces) const {
  std::vector<th::CollectiveBuffer> buffers;
  const size_t count = static_cast<size_t>(inst.operand_count());
  for (size_t i = 0; i < count; ++i) {
    const Shape& shape = inst.operand(static_cast<int64_t>(i))->shape();
    if (!shape.IsArray()) return Error(inst.DebugName() + ": collective operands must be arrays");
    if (reduces && !IsReducibleType(shape.element_type()))
      return Error(inst.DebugName() + ": bef-compile does not reduce " +
                   std::string(ElementTypeName(shape.element_type())) + " across devices");
    th::CollectiveBuffer b;
    KILN_ASSIGN_OR_RETURN(b.source, Slice(inst.operand(static_cast<int64_t>(i)), {}));
    KILN_ASSIGN_OR_RETURN(b.destination, Slice(&inst, ResultIndex(inst, i, count)));
    b.element_type = shape.element_type();
    b.element_count = shape.ElementCount();
    b.dims = shape.dims();
    buffers.push_back(std::move(b));
  }
  return buffers;
}

StatusOr<th::CollectiveConfig> ComputationEmitter::CollectiveConfigFor(const HloInstruction& inst,
                                                                         const HloInstruction& at) {
  th::CollectiveConfig config;
  if (const auto* groups = inst.GetAttribute<hlo::IntListList>("replica_groups")) config.replica_groups = groups->lists;
  if (const int64_t* channel = inst.GetAttribute<int64_t>("channel_id")) config.channel_id = *channel;
  config.use_global_device_ids = inst.GetBool("use_global_device_ids", false);
  if (inst.opcode() != HloOpcode::kCollectivePermute && inst.opcode() != HloOpcode::kCollectivePermuteStart) {
    KILN_ASSIGN_OR_RETURN(config.device_groups, ResolveDeviceGroups(inst, builder_.program()));
  }
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kAllReduceStart || op == HloOpcode::kAllGatherStart ||
      op == HloOpcode::kCollectivePermuteStart || at.opcode() == HloOpcode::kAsyncStart) {
    config.async_id = builder_.NextAsyncId();
    async_ids_[&at] = *config.async_id;
  }
  return config;
}

Status ComputationEmitter::EmitCollective(const HloInstruction& at, th::SequenceThunk& seq) {
  // `inst` is the collective (its opcode and attributes), `at` the
  // instruction whose operands and result hold its buffers: the same, or an
  // async-start wrapping it.
  const HloInstruction* wrapped = at.opcode() == HloOpcode::kAsyncStart ? passes::WrappedCollective(at) : &at;
  if (!wrapped) return Error(at.DebugName() + ": bef-compile runs async-start only around a single collective");
  const HloInstruction& inst = *wrapped;
  KILN_ASSIGN_OR_RETURN(th::CollectiveConfig config, CollectiveConfigFor(inst, at));
  th::ThunkBody body;
  switch (inst.opcode()) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: {
      th::AllReduceThunk t;
      t.config = std::move(config);
      KILN_ASSIGN_OR_RETURN(t.reduction, ReductionOf(inst));
      KILN_ASSIGN_OR_RETURN(t.buffers, CollectiveBuffers(at, true));
      body = std::move(t);
      break;
    }
    case HloOpcode::kReduceScatter: {
      th::ReduceScatterThunk t;
      t.config = std::move(config);
      KILN_ASSIGN_OR_RETURN(t.reduction, ReductionOf(inst));
      KILN_ASSIGN_OR_RETURN(t.buffers, CollectiveBuffers(at, true));
      KILN_ASSIGN_OR_RETURN(t.dimension, SingleDimension(inst));
      body = std::move(t);
      break;
    }
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: {
      th::AllGatherThunk t;
      t.config = std::move(config);
      KILN_ASSIGN_OR_RETURN(t.buffers, CollectiveBuffers(at, false));
      // PyTorch/XLA threads a scalar through combined all-gathers as an
      // ordering token: it passes through unchanged (as the evaluator and
      // the verifier have it).
      if (inst.operand_count() > 1) {
        std::vector<th::CollectiveBuffer> gathered;
        for (th::CollectiveBuffer& b : t.buffers) {
          if (!b.dims.empty()) {
            gathered.push_back(std::move(b));
          } else if (b.source != b.destination) {
            th::ThunkInfo info = InfoFor(at);
            info.profile_name += ".token";
            info.cost = CopyCost(b.source.size);
            seq.thunks.push_back(th::Thunk{std::move(info), th::CopyThunk{b.source, b.destination}});
          }
        }
        t.buffers = std::move(gathered);
      }
      KILN_ASSIGN_OR_RETURN(t.dimension, SingleDimension(inst));
      body = std::move(t);
      break;
    }
    case HloOpcode::kAllToAll: {
      th::AllToAllThunk t;
      t.config = std::move(config);
      KILN_ASSIGN_OR_RETURN(t.buffers, CollectiveBuffers(at, false));
      std::vector<int64_t> dims = inst.dimensions();
      if (dims.size() > 1) return Error(inst.DebugName() + ": needs at most one split dimension");
      if (!dims.empty()) t.split_dimension = dims[0];
      body = std::move(t);
      break;
    }
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: {
      if (inst.operand_count() != 1)
        return Error(inst.DebugName() + ": bef-compile supports collective-permute of one operand (not the "
                     "in-place form with slices)");
      th::CollectivePermuteThunk t;
      t.config = std::move(config);
      if (const auto* p = inst.GetAttribute<hlo::IntListList>("source_target_pairs"))
        for (const auto& pair : p->lists)
          if (pair.size() == 2) t.source_target_pairs.emplace_back(pair[0], pair[1]);
      KILN_ASSIGN_OR_RETURN(std::vector<th::CollectiveBuffer> buffers, CollectiveBuffers(at, false));
      t.buffer = std::move(buffers[0]);
      KILN_ASSIGN_OR_RETURN(t.device_pairs, ResolvePermutePairs(inst, builder_.program()));
      body = std::move(t);
      break;
    }
    case HloOpcode::kCollectiveBroadcast: {
      th::CollectiveBroadcastThunk t;
      t.config = std::move(config);
      KILN_ASSIGN_OR_RETURN(t.buffers, CollectiveBuffers(at, false));
      body = std::move(t);
      break;
    }
    default: return Error(inst.DebugName() + ": not a collective");
  }
  th::ThunkInfo info = InfoFor(at);
  std::visit(
      [&](const auto& b) {
        if constexpr (requires { b.buffers; }) info.cost = CopyCost(TotalBytes(b.buffers));
        else if constexpr (requires { b.buffer; }) info.cost = CopyCost(b.buffer.destination.size);
      },
      body);
  seq.thunks.push_back(th::Thunk{std::move(info), std::move(body)});
  return Status::Ok();
}

// A -done op: wait for its start. Its result is the start's result buffer
// (pipeline::IsForwardingDone), so nothing moves; the copies below run only
// for a done that reaches its start through async-updates, which buffer
// assignment gives buffers of their own.
Status ComputationEmitter::EmitCollectiveDone(const HloInstruction& done, th::SequenceThunk& seq) {
  const HloInstruction* start = done.operand_count() == 1 ? done.operand(0) : nullptr;
  while (start && start->opcode() == HloOpcode::kAsyncUpdate && start->operand_count() == 1)
    start = start->operand(0);
  auto it = start ? async_ids_.find(start) : async_ids_.end();
  if (it == async_ids_.end()) return Error(done.DebugName() + ": its operand is not a collective start");
  seq.thunks.push_back(th::Thunk{InfoFor(done), th::CollectiveDoneThunk{it->second}});
  const bool in_tuple = start->opcode() != HloOpcode::kAllReduceStart;
  for (const ShapeIndex& index : ArrayLeaves(done.shape())) {
    ShapeIndex from = index;
    if (in_tuple) from.insert(from.begin(), 1);
    KILN_ASSIGN_OR_RETURN(th::BufferSlice source, Slice(start, from));
    KILN_ASSIGN_OR_RETURN(th::BufferSlice destination, Slice(&done, index));
    if (source == destination || source.size == 0) continue;
    th::ThunkInfo info = InfoFor(done);
    info.profile_name += ".result";
    info.cost = CopyCost(source.size);
    seq.thunks.push_back(th::Thunk{std::move(info), th::CopyThunk{source, destination}});
  }
  return Status::Ok();
}

Status ComputationEmitter::EmitDeviceId(const HloInstruction& inst, th::SequenceThunk& seq) {
  if (!inst.shape().IsScalar() || inst.shape().element_type() != ElementType::kU32)
    return Error(inst.DebugName() + ": must produce u32[], not " + inst.shape().ToString(false));
  th::DeviceIdThunk t;
  t.kind = inst.opcode() == HloOpcode::kReplicaId ? th::DeviceIdKind::kReplica : th::DeviceIdKind::kPartition;
  KILN_ASSIGN_OR_RETURN(t.destination, Slice(&inst, {}));
  seq.thunks.push_back(th::Thunk{InfoFor(inst), std::move(t)});
  return Status::Ok();
}

}  // namespace kiln::emitter
