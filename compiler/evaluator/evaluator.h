// Reference evaluator: executes an HLO module on the host exactly per XLA's
// operation semantics. It is kiln's correctness oracle and constant folder,
// so it favours obviously-right code over speed: values are Literals,
// arithmetic happens in one widest type per value class and is rounded to
// the result type after every op, as XLA does for bf16/f16.
//
// Modules with replica_count * num_partitions > 1 run one thread per
// simulated device; collectives meet at a rendezvous.
#pragma once

#include <cstdint>
#include <vector>

#include "common/literal.h"
#include "common/status.h"
#include "compiler/hlo/module.h"

namespace kiln::hlo {

struct EvaluatorOptions {
  // A while loop that runs longer than this is reported as an error rather
  // than hanging the caller.
  int64_t max_while_iterations = int64_t{1} << 31;
  // Seconds a device waits at a collective for its peers before failing.
  double collective_timeout_seconds = 60;
  // Wall-clock budget of one evaluation; exceeding it is an error. 0 means
  // no limit. Tests use it to bound work on very large modules.
  double time_limit_seconds = 0;
};

class Evaluator {
 public:
  explicit Evaluator(EvaluatorOptions options = {}) : options_(options) {}

  // Evaluates the entry computation with `args` (one per entry parameter,
  // shapes checked). Multi-device modules run every device on the same
  // arguments and return device 0's result.
  StatusOr<Literal> Evaluate(const HloModule& module, const std::vector<Literal>& args) const;

  // One argument list per device, device = replica * num_partitions +
  // partition; returns one result per device.
  StatusOr<std::vector<Literal>> EvaluateOnDevices(
      const HloModule& module, const std::vector<std::vector<Literal>>& args_per_device) const;

 private:
  EvaluatorOptions options_;
};

// The fewest simulated devices the module's collectives name: one more than
// the largest id in any replica_groups or source_target_pairs (at least 1).
// Collective tests are often dumped without replica_count; callers use this
// to pick a device count that makes such modules runnable.
int64_t RequiredDeviceCount(const HloModule& module);

}  // namespace kiln::hlo
