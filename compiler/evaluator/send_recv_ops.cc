// send, recv, send-done and recv-done of the reference evaluator, over
// simulated devices.
//
// A send and the recv it pairs with are separate instructions, matched on
// every device by channel and program order (as NCCL matches a send with
// its peer's recv). The send carries the exchange: every device of its
// PermutePlane (collective_groups.h) contributes its data, and each keeps
// what its source in _xla_send_recv_source_target_pairs sent it (zeros
// when no valid pair targets it) in a per-channel queue; recv-done takes
// the oldest entry of its channel. _xla_send_recv_validation drops a pair
// from the executions outside its bounds. recv itself only allocates: its
// data is what recv-done returns.
#include <string>

#include "compiler/evaluator/collective_groups.h"
#include "compiler/evaluator/op_evaluators.h"
#include "compiler/evaluator/rendezvous.h"
#include "compiler/hlo/computation.h"

namespace kiln::hlo {

namespace {

int64_t ChannelOf(const HloInstruction& inst) {
  const int64_t* channel = inst.GetAttribute<int64_t>("channel_id");
  return channel ? *channel : 0;
}

// The pairs of `inst` that transfer in its execution number `execution`.
StatusOr<SourceTargetPairs> ValidPairs(const HloInstruction& inst, int64_t execution) {
  KILN_ASSIGN_OR_RETURN(SourceTargetPairs pairs, SendRecvPairs(inst));
  KILN_ASSIGN_OR_RETURN(std::optional<SourceTargetPairs> bounds, SendRecvValidation(inst));
  if (!bounds) return pairs;
  if (bounds->empty()) return SourceTargetPairs{};  // "invalid"
  if (bounds->size() != pairs.size())
    return Error(inst.DebugName() + ": _xla_send_recv_validation needs one bound per source-target pair");
  SourceTargetPairs valid;
  for (size_t i = 0; i < pairs.size(); ++i)
    if ((*bounds)[i].first <= execution && execution <= (*bounds)[i].second) valid.push_back(pairs[i]);
  return valid;
}

StatusOr<Literal> Send(const HloInstruction& inst, const Operands& operands, EvalContext& ctx) {
  if (operands.size() != 2 || !operands[0]->shape().IsArray())
    return Error(inst.DebugName() + ": send takes an array and a token");
  const int64_t execution = ctx.ExecutionCount(inst);
  KILN_ASSIGN_OR_RETURN(SourceTargetPairs pairs, ValidPairs(inst, execution));
  int64_t own_id = 0;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> plane, PermutePlane(inst, GridOf(ctx), own_id));
  int64_t source = -1;
  for (const auto& [s, t] : pairs) {
    if (s < 0 || t < 0 || s >= static_cast<int64_t>(plane.size()) || t >= static_cast<int64_t>(plane.size()))
      return Error(inst.DebugName() + ": source-target pair {" + std::to_string(s) + "," + std::to_string(t) +
                   "} outside the " + std::to_string(plane.size()) + " devices it addresses");
    if (t != own_id) continue;
    if (source >= 0) return Error(inst.DebugName() + ": two sources send to " + std::to_string(own_id));
    source = s;
  }
  std::string key = (inst.parent() ? inst.parent()->name() : std::string()) + "/" + inst.name() + "#" +
                    std::to_string(execution) + "@";
  for (int64_t p : plane) key += std::to_string(p) + ",";
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> all,
                        ctx.rendezvous().Exchange(key, ctx.device_id(), plane, *operands[0]));
  Literal received = source >= 0 ? std::move(all[source]) : Literal(operands[0]->shape());
  ctx.ReceivedOn(ChannelOf(inst)).push_back(std::move(received));
  return Literal::MakeTuple({*operands[0], Literal::Scalar(ElementType::kU32, uint32_t{0}), Literal(Shape::Token())});
}

}  // namespace

StatusOr<Literal> EvalSendRecvOp(const HloInstruction& inst, const Operands& operands, EvalContext& ctx) {
  switch (inst.opcode()) {
    case HloOpcode::kSend: return Send(inst, operands, ctx);
    case HloOpcode::kRecv: {
      const Shape& shape = inst.shape();
      if (!shape.IsTuple() || shape.tuple_size() != 3 || !shape.tuple_shape(0).IsArray())
        return Error(inst.DebugName() + ": recv must produce (data, u32[], token[])");
      return Literal::MakeTuple(
          {Literal(shape.tuple_shape(0)), Literal::Scalar(ElementType::kU32, uint32_t{0}), Literal(Shape::Token())});
    }
    case HloOpcode::kRecvDone: {
      std::deque<Literal>& queue = ctx.ReceivedOn(ChannelOf(inst));
      if (queue.empty())
        return Error(inst.DebugName() + ": no send of channel " + std::to_string(ChannelOf(inst)) +
                     " ran before it");
      Literal data = std::move(queue.front());
      queue.pop_front();
      return Literal::MakeTuple({std::move(data), Literal(Shape::Token())});
    }
    case HloOpcode::kSendDone: return Literal(Shape::Token());
    default: return UnsupportedOp(inst);
  }
}

}  // namespace kiln::hlo
