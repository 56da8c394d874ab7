// Rendezvous: where simulated devices meet to exchange collective operands.
//
// Every participant of one collective execution calls Exchange with the same
// key; each receives every participant's contribution once all have arrived.
// A participant that never arrives turns into a timeout error, not a hang.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/literal.h"
#include "common/status.h"

namespace kiln::hlo {

class Rendezvous {
 public:
  explicit Rendezvous(double timeout_seconds) : timeout_seconds_(timeout_seconds) {}

  // Contributes `value` as device `device_id` to the exchange `key` among
  // `participants` (device ids; must include device_id). Returns the
  // contributions ordered as `participants`.
  StatusOr<std::vector<Literal>> Exchange(const std::string& key, int64_t device_id,
                                          const std::vector<int64_t>& participants, Literal value);

  // Wakes every waiter with an error (a device failed).
  void Abort(const std::string& reason);

 private:
  struct Slot {
    std::map<int64_t, Literal> contributions;
    int64_t collected = 0;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Slot> slots_;
  std::string abort_reason_;
  double timeout_seconds_;
};

}  // namespace kiln::hlo
