// CollectiveRendezvous: how the devices of one SPMD run find each other.
//
// Every device of a multi-device run loads the executable with the same
// rendezvous (LoadOptions). Devices meet through a key-value store, as
// Gloo's rendezvous does: each group of devices that a collective names
// becomes one Gloo context, its members exchanging their TCP addresses
// through the store and connecting a full mesh of loopback (or network)
// pairs. In one process the store is in memory; the TCP transport is the
// same one processes on several machines use.
//
// The rendezvous also keeps, per device group, how many collectives each
// member of this process has entered, so a collective that times out can
// name the ranks that never arrived (a device that failed earlier, or never
// ran).
//
// Across processes (bef-run --num_processes) every process has a
// rendezvous over one shared store (tcp_store.h, or a file store) and loads
// only its own devices; Gloo's TCP transport then connects the processes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::runtime {

class KeyValueStore;  // runtime/collective_store.h

// Where Gloo's TCP transport listens for this process's peers: a host name
// or address, or a network interface's name (which wins when set).
struct TransportAddress {
  std::string hostname = "127.0.0.1";
  std::string interface;
};

// How many collectives each rank of one group has entered.
class ArrivalBoard {
 public:
  explicit ArrivalBoard(int64_t size) : size_(size), counts_(new std::atomic<int64_t>[size]) {
    for (int64_t r = 0; r < size; ++r) counts_[r] = 0;
  }
  // Records that `rank` entered its next collective; returns its count.
  int64_t Enter(int64_t rank) { return ++counts_[rank]; }
  // Ranks that have entered fewer than `count` collectives.
  std::vector<int64_t> Behind(int64_t count) const;

 private:
  int64_t size_;
  std::unique_ptr<std::atomic<int64_t>[]> counts_;
};

class CollectiveRendezvous {
 public:
  // `num_devices` devices in this process; collectives wait `timeout` for
  // their peers (and for the connection to them) before failing.
  static std::shared_ptr<CollectiveRendezvous> InProcess(int64_t num_devices, std::chrono::milliseconds timeout);
  // `num_devices` devices in all, some of them in this process, meeting
  // through `store` (shared with the other processes).
  static std::shared_ptr<CollectiveRendezvous> Shared(int64_t num_devices, std::chrono::milliseconds timeout,
                                                      std::shared_ptr<KeyValueStore> store,
                                                      TransportAddress transport);
  ~CollectiveRendezvous();

  int64_t num_devices() const { return num_devices_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // The key-value store Gloo contexts connect through.
  KeyValueStore& store() { return *store_; }
  const TransportAddress& transport() const { return transport_; }
  // Whether `device` loaded an executable with this rendezvous (it runs in
  // this process): arrivals are known for those devices only.
  bool IsLocal(int64_t device);
  // Ranks 0..size-1 that have not published `prefix`/rank in the store.
  std::vector<int64_t> UnpublishedRanks(const std::string& prefix, int64_t size);
  // The arrival board of the group named `key` (created on first use).
  std::shared_ptr<ArrivalBoard> Arrivals(const std::string& key, int64_t size);
  // The number of the next executable `device` loads with this rendezvous:
  // devices load the same executables in the same order, so equal numbers
  // name the same executable and keep the store keys of two apart.
  int64_t NextLoad(int64_t device);

 private:
  CollectiveRendezvous(int64_t num_devices, std::chrono::milliseconds timeout, std::shared_ptr<KeyValueStore> store,
                      TransportAddress transport);
  int64_t num_devices_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<KeyValueStore> store_;
  TransportAddress transport_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<ArrivalBoard>> arrivals_;
  std::map<int64_t, int64_t> loads_;
};

}  // namespace kiln::runtime
