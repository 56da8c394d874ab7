// A key-value store over TCP for the processes of one SPMD run, after the
// model of torch.distributed's TCPStore: process 0 serves it on the
// coordinator address (HOST:PORT) and uses it in memory, the others connect
// to it. The protocol is private to kiln (set, and a get that does not
// block); waits poll, so a process's devices never hold the connection
// while they wait. Every socket operation and every wait is bounded by the
// store's timeout.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "runtime/collective_store.h"

namespace kiln::runtime {

// "HOST:PORT" (HOST may be a name, an IPv4 address or [IPv6]).
struct HostPort {
  std::string host;
  int port = 0;
  std::string ToString() const;
};
StatusOr<HostPort> ParseHostPort(const std::string& text);
// Whether `host` names this machine's loopback interface.
bool IsLoopbackHost(const std::string& host);

// The serving process's store, which also counts its clients' connections
// (a client that has closed its connection needs the store no more).
class ServedKeyValueStore : public KeyValueStore {
 public:
  virtual int64_t clients_connected() const = 0;  // ever
  virtual int64_t clients_closed() const = 0;

 protected:
  using KeyValueStore::KeyValueStore;
};

// Serves a store on `address` until the returned store is destroyed.
StatusOr<std::shared_ptr<ServedKeyValueStore>> ServeTcpKeyValueStore(const HostPort& address,
                                                                     std::chrono::milliseconds timeout);
// Connects to the store served on `address`, retrying until `timeout`
// while the serving process starts.
StatusOr<std::shared_ptr<KeyValueStore>> ConnectTcpKeyValueStore(const HostPort& address,
                                                                 std::chrono::milliseconds timeout);

}  // namespace kiln::runtime
