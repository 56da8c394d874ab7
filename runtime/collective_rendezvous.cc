// CollectiveRendezvous (see collective_rendezvous.h).
#include "runtime/collective_rendezvous.h"

#include "runtime/collective_store.h"

namespace kiln::runtime {

std::vector<int64_t> ArrivalBoard::Behind(int64_t count) const {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < size_; ++r)
    if (counts_[r].load() < count) out.push_back(r);
  return out;
}

CollectiveRendezvous::CollectiveRendezvous(int64_t num_devices, std::chrono::milliseconds timeout,
                                           std::shared_ptr<KeyValueStore> store, TransportAddress transport)
    : num_devices_(num_devices), timeout_(timeout), store_(std::move(store)), transport_(std::move(transport)) {}

CollectiveRendezvous::~CollectiveRendezvous() = default;

std::shared_ptr<CollectiveRendezvous> CollectiveRendezvous::InProcess(int64_t num_devices,
                                                                      std::chrono::milliseconds timeout) {
  return std::shared_ptr<CollectiveRendezvous>(new CollectiveRendezvous(
      num_devices, timeout, std::make_shared<MemoryKeyValueStore>(timeout), TransportAddress{}));
}

std::shared_ptr<CollectiveRendezvous> CollectiveRendezvous::Shared(int64_t num_devices,
                                                                   std::chrono::milliseconds timeout,
                                                                   std::shared_ptr<KeyValueStore> store,
                                                                   TransportAddress transport) {
  return std::shared_ptr<CollectiveRendezvous>(
      new CollectiveRendezvous(num_devices, timeout, std::move(store), std::move(transport)));
}

bool CollectiveRendezvous::IsLocal(int64_t device) {
  std::lock_guard<std::mutex> lock(mutex_);
  return loads_.count(device) > 0;
}

std::vector<int64_t> CollectiveRendezvous::UnpublishedRanks(const std::string& prefix, int64_t size) {
  std::vector<int64_t> out;
  // Gloo publishes a rank's host name ("rank_R") before it waits for its
  // peers' and then its pairs' addresses ("R"); older Gloo only the latter.
  for (int64_t r = 0; r < size; ++r)
    if (!store_->Has(prefix + "/rank_" + std::to_string(r)) && !store_->Has(prefix + "/" + std::to_string(r)))
      out.push_back(r);
  return out;
}

std::shared_ptr<ArrivalBoard> CollectiveRendezvous::Arrivals(const std::string& key, int64_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<ArrivalBoard>& board = arrivals_[key];
  if (!board) board = std::make_shared<ArrivalBoard>(size);
  return board;
}

int64_t CollectiveRendezvous::NextLoad(int64_t device) {
  std::lock_guard<std::mutex> lock(mutex_);
  return loads_[device]++;
}

}  // namespace kiln::runtime
