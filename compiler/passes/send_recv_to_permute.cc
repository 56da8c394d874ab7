// SendRecvToPermute: see send_recv_to_permute.h.
#include "compiler/passes/send_recv_to_permute.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/evaluator/collective_groups.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/while_loop_trip_count.h"

namespace kiln::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

int64_t ChannelOf(const HloInstruction& inst) {
  const int64_t* channel = inst.GetAttribute<int64_t>("channel_id");
  return channel ? *channel : 0;
}

// The only user of `inst` with `opcode`, or nullptr.
HloInstruction* UserOf(const HloInstruction& inst, HloOpcode opcode) {
  HloInstruction* found = nullptr;
  for (HloInstruction* user : inst.users())
    if (user->opcode() == opcode) {
      if (found) return nullptr;
      found = user;
    }
  return found;
}

// How many times one run of the module executes `computation`'s
// instructions: 1 for the entry, the proven trip count of the one while
// loop whose body it is, else nullopt (unknown).
std::optional<int64_t> ExecutionsOf(const hlo::HloModule& module, const hlo::HloComputation& computation) {
  if (&computation == module.entry()) return 1;
  std::optional<int64_t> trips;
  int loops = 0;
  for (const hlo::HloComputation* c : module.computations())
    for (const HloInstruction* inst : c->instructions())
      if (inst->opcode() == HloOpcode::kWhile && inst->called_computation("body") == &computation) {
        ++loops;
        if (c != module.entry()) return std::nullopt;  // a nested loop runs its body more often
        trips = ComputeWhileTripCount(*inst);
      }
  return loops == 1 ? trips : std::nullopt;
}

// An error unless `inst`'s validation lets every pair transfer in each of
// its executions.
Status CheckValidationSkipsNothing(const hlo::HloModule& module, const HloInstruction& inst) {
  KILN_ASSIGN_OR_RETURN(std::optional<hlo::SourceTargetPairs> bounds, hlo::SendRecvValidation(inst));
  if (!bounds) return Status::Ok();
  std::optional<int64_t> executions = ExecutionsOf(module, *inst.parent());
  KILN_ASSIGN_OR_RETURN(hlo::SourceTargetPairs pairs, hlo::SendRecvPairs(inst));
  bool skips = !executions || bounds->size() != pairs.size();
  for (const auto& [lo, hi] : *bounds) skips = skips || !executions || lo > 0 || hi < *executions - 1;
  if (skips)
    return Error(inst.DebugName() + ": bef-compile does not support a _xla_send_recv_validation that skips "
                 "executions of the transfer");
  return Status::Ok();
}

}  // namespace

StatusOr<bool> SendRecvToPermute::Run(hlo::HloModule& module) {
  bool changed = false;
  NameUniquer names(module);
  for (hlo::HloComputation* comp : module.computations()) {
    std::vector<HloInstruction*> sends, recvs;
    for (HloInstruction* inst : comp->instructions()) {
      if (inst->opcode() == HloOpcode::kSend) sends.push_back(inst);
      if (inst->opcode() == HloOpcode::kRecv) recvs.push_back(inst);
    }
    std::set<HloInstruction*> matched;
    for (HloInstruction* recv : recvs) {
      KILN_ASSIGN_OR_RETURN(hlo::SourceTargetPairs pairs, hlo::SendRecvPairs(*recv));
      HloInstruction* send = nullptr;
      for (HloInstruction* s : sends) {
        if (matched.count(s) || ChannelOf(*s) != ChannelOf(*recv)) continue;
        KILN_ASSIGN_OR_RETURN(hlo::SourceTargetPairs send_pairs, hlo::SendRecvPairs(*s));
        if (send_pairs != pairs) continue;
        send = s;
        break;
      }
      HloInstruction* recv_done = UserOf(*recv, HloOpcode::kRecvDone);
      HloInstruction* send_done = send ? UserOf(*send, HloOpcode::kSendDone) : nullptr;
      if (!send || !recv_done || !send_done || pairs.empty() || recv->users().size() != 1 ||
          send->users().size() != 1 || send->operand_count() != 2)
        return Error(recv->DebugName() + ": bef-compile runs a recv only with the send, send-done and recv-done "
                     "of the same channel and source-target pairs in its computation");
      matched.insert(send);
      KILN_RETURN_IF_ERROR(CheckValidationSkipsNothing(module, *send));
      KILN_RETURN_IF_ERROR(CheckValidationSkipsNothing(module, *recv));

      HloInstruction* data = send->operand(0);
      HloInstruction* permute = AddInstruction(*comp, HloOpcode::kCollectivePermute, data->shape(), {data},
                                               names.Get(recv_done->name() + ".permute"));
      hlo::IntListList lists;
      for (const auto& [source, target] : pairs) lists.lists.push_back({source, target});
      permute->SetAttribute("source_target_pairs", lists);
      if (ChannelOf(*send) > 0) permute->SetAttribute("channel_id", ChannelOf(*send));
      HloInstruction* recv_token = AddInstruction(*comp, HloOpcode::kAfterAll, Shape::Token(), {},
                                                  names.Get(recv_done->name() + ".token"));
      HloInstruction* received =
          AddInstruction(*comp, HloOpcode::kTuple, recv_done->shape(), {permute, recv_token}, names.Get(recv_done->name()));
      HloInstruction* send_token =
          AddInstruction(*comp, HloOpcode::kAfterAll, Shape::Token(), {}, names.Get(send_done->name()));
      recv_done->ReplaceAllUsesWith(received);
      send_done->ReplaceAllUsesWith(send_token);
      for (HloInstruction* dead : {recv_done, send_done, send, recv}) {
        dead->DropAllControlDependencies();
        KILN_RETURN_IF_ERROR(comp->RemoveInstruction(dead));
      }
      changed = true;
    }
    for (HloInstruction* send : sends)
      if (!matched.count(send))
        return Error(send->DebugName() + ": bef-compile runs a send only with a recv of the same channel and "
                     "source-target pairs in its computation");
  }
  return changed;
}

}  // namespace kiln::passes
