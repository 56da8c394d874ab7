// CollectiveRendezvous (see collective_rendezvous.h) and its in-memory
// store.
#include "runtime/collective_rendezvous.h"

#include <condition_variable>
#include <stdexcept>

#include <gloo/rendezvous/store.h>

namespace kiln::runtime {

std::vector<int64_t> ArrivalBoard::Behind(int64_t count) const {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < size_; ++r)
    if (counts_[r].load() < count) out.push_back(r);
  return out;
}

// Gloo's Store in memory, for the devices of one process. A wait that times
// out throws (Gloo turns the exception into the failed connect); the
// caller then asks which keys are missing.
class CollectiveRendezvous::MemoryStore : public gloo::rendezvous::Store {
 public:
  explicit MemoryStore(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      values_[key] = data;
    }
    changed_.notify_all();
  }
  std::vector<char> get(const std::string& key) override {
    wait({key});
    std::lock_guard<std::mutex> lock(mutex_);
    return values_.at(key);
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool arrived = changed_.wait_for(lock, timeout, [&] {
      for (const std::string& k : keys)
        if (!values_.count(k)) return false;
      return true;
    });
    if (!arrived) throw std::runtime_error("rendezvous timed out");
  }
  bool Has(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    return values_.count(key) > 0;
  }

 private:
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<char>> values_;
};

CollectiveRendezvous::CollectiveRendezvous(int64_t num_devices, std::chrono::milliseconds timeout)
    : num_devices_(num_devices),
      timeout_(timeout),
      memory_store_(std::make_unique<MemoryStore>(timeout)),
      store_(memory_store_.get()) {}

CollectiveRendezvous::~CollectiveRendezvous() = default;

std::shared_ptr<CollectiveRendezvous> CollectiveRendezvous::InProcess(int64_t num_devices,
                                                                      std::chrono::milliseconds timeout) {
  return std::shared_ptr<CollectiveRendezvous>(new CollectiveRendezvous(num_devices, timeout));
}

std::vector<int64_t> CollectiveRendezvous::UnpublishedRanks(const std::string& prefix, int64_t size) {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < size; ++r)
    if (!memory_store_->Has(prefix + "/" + std::to_string(r))) out.push_back(r);
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
