// Collective ops of the reference evaluator, over simulated devices.
//
// Each device runs on its own thread; a collective contributes this device's
// operands to a Rendezvous keyed by (computation, instruction, how many times
// this device has run it, participant list) and receives every participant's
// contribution in group order. Every participant then computes its own
// result from the same data, so results are deterministic:
//   all-reduce       the reducer folded left in participant order, per element
//   all-gather       contributions concatenated along dimensions={d}
//   reduce-scatter   all-reduce, then the block at the caller's group position
//   all-to-all       block i of the split dimension goes to participant i and
//                    received blocks concatenate in participant order; the
//                    tuple form (no dimensions) sends operand i to participant i
//   collective-permute  source_target_pairs; a device that receives nothing
//                    gets zeros
//   collective-broadcast  the group's first device's value
//   ragged-all-to-all  (input, output, input_offsets, send_sizes,
//                    output_offsets, recv_sizes): participant i's rows
//                    input[input_offsets[j] .. + send_sizes[j]) land at
//                    rows output_offsets[j].. of participant j's result,
//                    which starts as j's output operand (offsets and sizes
//                    in rows of the leading dimension, indexed by group
//                    position; XLA's operation semantics)
// The -start ops compute the value; -done ops unpack it: all-reduce-start has
// the result's shape, all-gather-start and collective-permute-start produce
// (operand(s), result(s), ...context) tuples.
#include <cstring>
#include <string>

#include "common/float_formats.h"
#include "compiler/evaluator/collective_groups.h"
#include "compiler/evaluator/op_evaluators.h"
#include "compiler/evaluator/rendezvous.h"
#include "compiler/hlo/computation.h"

namespace kiln::hlo {

DeviceGrid GridOf(EvalContext& ctx) {
  DeviceGrid grid;
  grid.replica_count = std::max<int64_t>(ctx.module().config().replica_count, 1);
  grid.partition_count = std::max<int64_t>(ctx.module().config().num_partitions, 1);
  grid.replica = ctx.replica_id();
  grid.partition = ctx.partition_id();
  return grid;
}

namespace {

// Meets the other participants of this execution of `inst` and returns every
// participant's contribution in `participants` order.
StatusOr<std::vector<Literal>> Exchange(const HloInstruction& inst, EvalContext& ctx,
                                        const std::vector<int64_t>& participants, Literal value) {
  std::string key = (inst.parent() ? inst.parent()->name() : std::string()) + "/" + inst.name() +
                    "#" + std::to_string(ctx.ExecutionCount(inst)) + "@";
  for (int64_t p : participants) key += std::to_string(p) + ",";
  // Errors name the key (timeouts) or repeat a failed peer's own message.
  return ctx.rendezvous().Exchange(key, ctx.device_id(), participants, std::move(value));
}

// The operands as one value: the operand itself, or a tuple of several.
Literal PackOperands(const Operands& operands) {
  if (operands.size() == 1) return *operands[0];
  std::vector<Literal> elements;
  for (const Literal* op : operands) elements.push_back(*op);
  return Literal::MakeTuple(std::move(elements));
}

// Operand i of a packed contribution of `count` operands.
const Literal& Unpack(const Literal& packed, size_t count, size_t i) {
  return count == 1 ? packed : packed.element(i);
}

// Results as one value: a single array, or a tuple of them.
Literal PackResults(std::vector<Literal> results) {
  if (results.size() == 1) return std::move(results[0]);
  return Literal::MakeTuple(std::move(results));
}

int64_t PositionOf(const std::vector<int64_t>& participants, int64_t device) {
  for (size_t i = 0; i < participants.size(); ++i)
    if (participants[i] == device) return static_cast<int64_t>(i);
  return -1;
}

Status CheckArray(const HloInstruction& inst, const Literal& lit) {
  if (!lit.shape().IsArray()) return Error(inst.DebugName() + ": collective operands must be arrays");
  return Status::Ok();
}

// Elements in one index of dimension `dim` (the product of later dimensions).
int64_t InnerElements(const std::vector<int64_t>& dims, int64_t dim) {
  int64_t n = 1;
  for (size_t d = dim + 1; d < dims.size(); ++d) n *= dims[d];
  return n;
}

// Concatenation of `pieces` (same type, equal dims except `dim`) along `dim`.
Literal ConcatAlong(const std::vector<const Literal*>& pieces, int64_t dim) {
  std::vector<int64_t> dims = pieces[0]->shape().dims();
  dims[dim] = 0;
  for (const Literal* p : pieces) dims[dim] += p->shape().dim(dim);
  Literal out(Shape(pieces[0]->element_type(), dims));
  const int64_t bytes = StorageBytes(out.element_type());
  const int64_t inner = InnerElements(dims, dim) * bytes;
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= dims[d];
  uint8_t* dst = out.raw();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Literal* p : pieces) {
      const int64_t block = p->shape().dim(dim) * inner;
      if (block) std::memcpy(dst, p->raw() + o * block, block);
      dst += block;
    }
  }
  return out;
}

// Elements [start, start + size) of dimension `dim`.
Literal SliceAlong(const Literal& lit, int64_t dim, int64_t start, int64_t size) {
  std::vector<int64_t> dims = lit.shape().dims();
  const int64_t full = dims[dim];
  dims[dim] = size;
  Literal out(Shape(lit.element_type(), dims));
  const int64_t bytes = StorageBytes(lit.element_type());
  const int64_t inner = InnerElements(dims, dim) * bytes;
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= dims[d];
  if (size == 0 || inner == 0) return out;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.raw() + o * size * inner, lit.raw() + (o * full + start) * inner,
                  size * inner);
  return out;
}

StatusOr<int64_t> SingleDimension(const HloInstruction& inst, int64_t rank) {
  std::vector<int64_t> dims = inst.dimensions();
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= rank)
    return Error(inst.DebugName() + ": needs dimensions={d} with d below the operand rank " +
                 std::to_string(rank));
  return dims[0];
}

// --- all-reduce ---

// True when `reducer` is add(parameter(0), parameter(1)) on scalars.
bool IsScalarAdd(const HloComputation& reducer) {
  const HloInstruction* root = reducer.root();
  if (!root || root->opcode() != HloOpcode::kAdd || !root->shape().IsScalar()) return false;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter) return false;
  return a->parameter_number() + b->parameter_number() == 1;
}

// Left fold of `inputs` (same shape) with a scalar add, rounding after each
// step as the reducer would: one add in double is exact-then-rounded for every
// real type up to f32 (double has more than 2p+2 bits), and is f64's own add.
Literal FoldAdd(const std::vector<const Literal*>& inputs) {
  Literal out = *inputs[0];
  const ElementType t = out.element_type();
  const int64_t n = out.element_count();
  for (size_t p = 1; p < inputs.size(); ++p) {
    const Literal& x = *inputs[p];
    for (int64_t i = 0; i < n; ++i) {
      if (IsPred(t)) out.SetPred(i, out.GetPred(i) || x.GetPred(i));
      else if (IsInteger(t)) out.SetU64(i, out.GetU64(i) + x.GetU64(i));
      else if (IsComplex(t)) out.SetC128(i, out.GetC128(i) + x.GetC128(i));
      else out.SetF64(i, out.GetF64(i) + x.GetF64(i));
    }
  }
  return out;
}

// Left fold of `inputs` with any scalar reducer, one call per element step.
StatusOr<Literal> FoldWithReducer(const HloInstruction& inst, const HloComputation& reducer,
                                  const std::vector<const Literal*>& inputs, EvalContext& ctx) {
  Literal out = *inputs[0];
  const Shape scalar = Shape::Scalar(out.element_type());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    Literal acc(scalar);
    acc.CopyElementFrom(0, out, i);
    for (size_t p = 1; p < inputs.size(); ++p) {
      Literal x(scalar);
      x.CopyElementFrom(0, *inputs[p], i);
      StatusOr<Literal> r = ctx.Call(reducer, {std::move(acc), std::move(x)});
      if (!r.ok()) return r.status().WithContext("in the reducer of " + inst.DebugName());
      if (!r->shape().IsScalar() || r->element_type() != scalar.element_type())
        return Error(inst.DebugName() + ": reducer must return " + scalar.ToString(false));
      acc = std::move(*r);
    }
    out.CopyElementFrom(i, acc, 0);
  }
  return out;
}

// Reduces operand `index` over all contributions.
StatusOr<Literal> ReduceContributions(const HloInstruction& inst, const std::vector<Literal>& all,
                                      size_t operand_count, size_t index, EvalContext& ctx) {
  const HloComputation* reducer = inst.to_apply();
  if (!reducer) return Error(inst.DebugName() + ": needs to_apply");
  std::vector<const Literal*> inputs;
  for (const Literal& c : all) {
    const Literal& x = Unpack(c, operand_count, index);
    if (!x.shape().Compatible(Unpack(all[0], operand_count, index).shape()))
      return Error(inst.DebugName() + ": participants contributed different shapes");
    inputs.push_back(&x);
  }
  if (IsScalarAdd(*reducer) && reducer->root()->shape().element_type() == inputs[0]->element_type())
    return FoldAdd(inputs);
  return FoldWithReducer(inst, *reducer, inputs, ctx);
}

StatusOr<Literal> AllReduce(const HloInstruction& inst, const Operands& operands, EvalContext& ctx) {
  for (const Literal* op : operands) KILN_RETURN_IF_ERROR(CheckArray(inst, *op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> participants, CollectiveParticipants(inst, GridOf(ctx)));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> all,
                        Exchange(inst, ctx, participants, PackOperands(operands)));
  std::vector<Literal> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Literal r, ReduceContributions(inst, all, operands.size(), i, ctx));
    results.push_back(std::move(r));
  }
  return PackResults(std::move(results));
}

StatusOr<Literal> ReduceScatter(const HloInstruction& inst, const Operands& operands,
                                EvalContext& ctx) {
  for (const Literal* op : operands) KILN_RETURN_IF_ERROR(CheckArray(inst, *op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> participants, CollectiveParticipants(inst, GridOf(ctx)));
  const int64_t me = PositionOf(participants, ctx.device_id());
  const int64_t n = static_cast<int64_t>(participants.size());
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> all,
                        Exchange(inst, ctx, participants, PackOperands(operands)));
  std::vector<Literal> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Literal reduced, ReduceContributions(inst, all, operands.size(), i, ctx));
    if (reduced.shape().rank() == 0 && n == 1) {  // nothing to scatter
      results.push_back(std::move(reduced));
      continue;
    }
    KILN_ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst, reduced.shape().rank()));
    if (reduced.shape().dim(dim) % n != 0)
      return Error(inst.DebugName() + ": scattered dimension is not divisible by the group size " +
                   std::to_string(n));
    const int64_t block = reduced.shape().dim(dim) / n;
    results.push_back(SliceAlong(reduced, dim, me * block, block));
  }
  return PackResults(std::move(results));
}

// --- all-gather ---

StatusOr<Literal> AllGather(const HloInstruction& inst, const Operands& operands, EvalContext& ctx) {
  for (const Literal* op : operands) KILN_RETURN_IF_ERROR(CheckArray(inst, *op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> participants, CollectiveParticipants(inst, GridOf(ctx)));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> all,
                        Exchange(inst, ctx, participants, PackOperands(operands)));
  std::vector<Literal> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    // PyTorch/XLA threads a scalar through combined all-gathers as an
    // ordering token; it passes through unchanged (as the verifier infers).
    if (operands.size() > 1 && operands[i]->shape().rank() == 0) {
      results.push_back(*operands[i]);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst, operands[i]->shape().rank()));
    std::vector<const Literal*> pieces;
    for (const Literal& c : all) {
      const Literal& piece = Unpack(c, operands.size(), i);
      if (!piece.shape().Compatible(operands[i]->shape()))
        return Error(inst.DebugName() + ": participants contributed different shapes");
      pieces.push_back(&piece);
    }
    results.push_back(ConcatAlong(pieces, dim));
  }
  return PackResults(std::move(results));
}

// --- all-to-all ---

StatusOr<Literal> AllToAll(const HloInstruction& inst, const Operands& operands, EvalContext& ctx) {
  for (const Literal* op : operands) KILN_RETURN_IF_ERROR(CheckArray(inst, *op));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> participants, CollectiveParticipants(inst, GridOf(ctx)));
  const int64_t me = PositionOf(participants, ctx.device_id());
  const int64_t n = static_cast<int64_t>(participants.size());
  const bool split = !inst.dimensions().empty();
  if (!split && static_cast<int64_t>(operands.size()) != n)
    return Error(inst.DebugName() + ": tuple all-to-all needs one operand per participant (" +
                 std::to_string(n) + "), got " + std::to_string(operands.size()));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> all,
                        Exchange(inst, ctx, participants, PackOperands(operands)));
  std::vector<Literal> results;
  if (!split) {
    // Element j of the result is participant j's operand number `me`.
    for (int64_t j = 0; j < n; ++j) results.push_back(Unpack(all[j], operands.size(), me));
    return Literal::MakeTuple(std::move(results));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst, operands[i]->shape().rank()));
    if (operands[i]->shape().dim(dim) % n != 0)
      return Error(inst.DebugName() + ": split dimension is not divisible by the group size " +
                   std::to_string(n));
    const int64_t block = operands[i]->shape().dim(dim) / n;
    std::vector<Literal> received;
    for (int64_t j = 0; j < n; ++j) {
      const Literal& from = Unpack(all[j], operands.size(), i);
      if (!from.shape().Compatible(operands[i]->shape()))
        return Error(inst.DebugName() + ": participants contributed different shapes");
      received.push_back(SliceAlong(from, dim, me * block, block));
    }
    std::vector<const Literal*> pieces;
    for (const Literal& r : received) pieces.push_back(&r);
    results.push_back(ConcatAlong(pieces, dim));
  }
  return PackResults(std::move(results));
}

// --- collective-permute and collective-broadcast ---

StatusOr<Literal> CollectivePermute(const HloInstruction& inst, const Operands& operands,
                                    const Shape& result_shape, EvalContext& ctx) {
  if (operands.size() == 4 && inst.HasAttribute("slice_sizes"))
    return Error(inst.DebugName() + ": in-place collective-permute with slices is not supported");
  int64_t own_id = 0;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> plane, PermutePlane(inst, GridOf(ctx), own_id));
  std::vector<std::vector<int64_t>> pairs;
  if (const auto* p = inst.GetAttribute<IntListList>("source_target_pairs")) pairs = p->lists;
  int64_t source = -1;
  for (const auto& pair : pairs) {
    if (pair.size() != 2 || pair[0] < 0 || pair[1] < 0 ||
        pair[0] >= static_cast<int64_t>(plane.size()) || pair[1] >= static_cast<int64_t>(plane.size()))
      return Error(inst.DebugName() + ": invalid source_target_pairs entry");
    if (pair[1] != own_id) continue;
    if (source >= 0) return Error(inst.DebugName() + ": two sources send to " + std::to_string(own_id));
    source = pair[0];
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> all,
                        Exchange(inst, ctx, plane, PackOperands(operands)));
  if (source < 0) return Literal(result_shape);  // receives nothing: zeros
  if (!all[source].shape().Compatible(result_shape))
    return Error(inst.DebugName() + ": received " + all[source].shape().ToString(false) +
                 " but the result is " + result_shape.ToString(false));
  return std::move(all[source]);
}

StatusOr<Literal> CollectiveBroadcast(const HloInstruction& inst, const Operands& operands,
                                      EvalContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> participants, CollectiveParticipants(inst, GridOf(ctx)));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> all,
                        Exchange(inst, ctx, participants, PackOperands(operands)));
  return std::move(all[0]);
}

// --- ragged-all-to-all ---

StatusOr<Literal> RaggedAllToAll(const HloInstruction& inst, const Operands& operands, EvalContext& ctx) {
  if (operands.size() != 6) return Error(inst.DebugName() + ": ragged-all-to-all takes 6 operands");
  const Literal& input = *operands[0];
  const Literal& output = *operands[1];
  if (!input.shape().IsArray() || !output.shape().IsArray() || input.shape().rank() < 1 ||
      input.shape().rank() != output.shape().rank() || input.element_type() != output.element_type())
    return Error(inst.DebugName() + ": input and output must be arrays of one type and rank");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> participants, CollectiveParticipants(inst, GridOf(ctx)));
  const int64_t n = static_cast<int64_t>(participants.size());
  const int64_t me = PositionOf(participants, ctx.device_id());
  for (size_t i = 2; i < 6; ++i)
    if (!operands[i]->shape().IsArray() || operands[i]->shape().ElementCount() != n)
      return Error(inst.DebugName() + ": offsets and sizes need one entry per participant (" +
                   std::to_string(n) + ")");
  // Each participant's input with its input offsets, send sizes and output offsets.
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> all,
                        Exchange(inst, ctx, participants,
                                 Literal::MakeTuple({input, *operands[2], *operands[3], *operands[4]})));
  Literal result = output;
  const int64_t row_bytes = InnerElements(output.shape().dims(), 0) * StorageBytes(output.element_type());
  const int64_t out_rows = output.shape().dim(0);
  for (int64_t i = 0; i < n; ++i) {
    const Literal& from = all[i].element(0);
    if (!from.shape().Compatible(input.shape()))
      return Error(inst.DebugName() + ": participants contributed different shapes");
    const int64_t start = all[i].element(1).GetS64(me);
    const int64_t rows = all[i].element(2).GetS64(me);
    const int64_t at = all[i].element(3).GetS64(me);
    if (rows != operands[5]->GetS64(i))
      return Error(inst.DebugName() + ": recv_sizes[" + std::to_string(i) + "] is " +
                   std::to_string(operands[5]->GetS64(i)) + " but participant " + std::to_string(i) + " sends " +
                   std::to_string(rows) + " rows");
    if (rows < 0 || start < 0 || at < 0 || start + rows > from.shape().dim(0) || at + rows > out_rows)
      return Error(inst.DebugName() + ": participant " + std::to_string(i) + "'s rows [" + std::to_string(start) +
                   ", +" + std::to_string(rows) + ") to output row " + std::to_string(at) + " are out of bounds");
    if (rows > 0) std::memcpy(result.raw() + at * row_bytes, from.raw() + start * row_bytes, rows * row_bytes);
  }
  return result;
}

// (operand(s), result(s), context...) as an -start op declares it.
StatusOr<Literal> StartTuple(const HloInstruction& inst, const Operands& operands, Literal result) {
  const Shape& shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_size() < 2)
    return Error(inst.DebugName() + ": expected a (operand, result, ...) tuple shape");
  Literal value(shape);
  value.mutable_elements()[0] = PackOperands(operands);
  value.mutable_elements()[1] = std::move(result);
  return value;
}

}  // namespace

StatusOr<Literal> EvalCollectiveOp(const HloInstruction& inst, const Operands& operands,
                                   EvalContext& ctx) {
  switch (inst.opcode()) {
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId: {
      Literal id(inst.shape());
      if (!id.shape().IsScalar()) return Error(inst.DebugName() + ": must produce a scalar");
      id.SetU64(0, inst.opcode() == HloOpcode::kReplicaId ? ctx.replica_id() : ctx.partition_id());
      return id;
    }
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
      return AllReduce(inst, operands, ctx);
    case HloOpcode::kAllReduceDone:
      return *operands[0];
    case HloOpcode::kReduceScatter:
      return ReduceScatter(inst, operands, ctx);
    case HloOpcode::kAllGather:
      return AllGather(inst, operands, ctx);
    case HloOpcode::kAllGatherStart: {
      KILN_ASSIGN_OR_RETURN(Literal result, AllGather(inst, operands, ctx));
      return StartTuple(inst, operands, std::move(result));
    }
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
      if (!operands[0]->shape().IsTuple() || operands[0]->elements().size() < 2)
        return Error(inst.DebugName() + ": operand must be the tuple of its -start op");
      return operands[0]->element(1);
    case HloOpcode::kAllToAll:
      return AllToAll(inst, operands, ctx);
    case HloOpcode::kCollectivePermute:
      return CollectivePermute(inst, operands, inst.shape(), ctx);
    case HloOpcode::kCollectivePermuteStart: {
      if (!inst.shape().IsTuple() || inst.shape().tuple_size() < 2)
        return Error(inst.DebugName() + ": expected a (operand, result, ...) tuple shape");
      KILN_ASSIGN_OR_RETURN(Literal result,
                            CollectivePermute(inst, operands, inst.shape().tuple_shape(1), ctx));
      return StartTuple(inst, operands, std::move(result));
    }
    case HloOpcode::kCollectiveBroadcast:
      return CollectiveBroadcast(inst, operands, ctx);
    case HloOpcode::kRaggedAllToAll:
      return RaggedAllToAll(inst, operands, ctx);
    default:
      return UnsupportedOp(inst);
  }
}

}  // namespace kiln::hlo
