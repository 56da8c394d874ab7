#include "compiler/evaluator/rendezvous.h"

#include <chrono>

namespace kiln::hlo {

StatusOr<std::vector<Literal>> Rendezvous::Exchange(const std::string& key, int64_t device_id,
                                                    const std::vector<int64_t>& participants,
                                                    Literal value) {
  std::unique_lock<std::mutex> lock(mu_);
  Slot& slot = slots_[key];
  if (slot.contributions.count(device_id))
    return Error("device " + std::to_string(device_id) + " joined collective " + key + " twice");
  slot.contributions.emplace(device_id, std::move(value));
  cv_.notify_all();
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds_ * 1000));
  bool complete = cv_.wait_until(lock, deadline, [&] {
    return !abort_reason_.empty() || slot.contributions.size() == participants.size();
  });
  if (!abort_reason_.empty()) return Error(abort_reason_);
  if (!complete)
    return Error("collective " + key + " timed out: only " +
                 std::to_string(slot.contributions.size()) + " of " +
                 std::to_string(participants.size()) + " devices arrived");
  std::vector<Literal> result;
  for (int64_t p : participants) {
    auto it = slot.contributions.find(p);
    if (it == slot.contributions.end())
      return Error("collective " + key + ": device " + std::to_string(p) + " did not contribute");
    result.push_back(it->second);
  }
  // The last participant to collect frees the slot.
  if (++slot.collected == static_cast<int64_t>(participants.size())) slots_.erase(key);
  return result;
}

void Rendezvous::Abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (abort_reason_.empty()) abort_reason_ = reason;
  cv_.notify_all();
}

}  // namespace kiln::hlo
