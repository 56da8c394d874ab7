// SendRecvToPermute: a send/recv pair between devices (send, recv,
// send-done, recv-done with _xla_send_recv_source_target_pairs, as XLA's
// pipelined collective-permutes lower to) becomes the collective-permute
// it is: recv-done's data is collective-permute(send's data) on the same
// device plane (replica ids when channel_id is 0 or absent, partition ids
// when positive; hlo/collective_groups.h) and the tokens become
// after-all. The runtime then moves the data as it moves every
// collective-permute: Gloo send/recv on the host, grouped ncclSend/ncclRecv
// on CUDA.
//
// A send pairs with the first recv of its computation (in instruction
// order) with the same channel and pairs, as the devices match them.
// _xla_send_recv_validation is accepted where it skips no execution: in
// the entry, bounds that include 0; in a while body with a proven trip
// count N, bounds that include 0..N-1. A validation that skips executions,
// or an unmatched send or recv, is a one-line error.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class SendRecvToPermute : public HloPass {
 public:
  std::string_view name() const override { return "send-recv-to-permute"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
