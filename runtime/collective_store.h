// Key-value stores the devices of an SPMD run meet through (Gloo's
// rendezvous::Store, plus a non-blocking lookup that lets a failed
// rendezvous name the ranks that never published their address).
//
// - MemoryKeyValueStore: the devices of one process.
// - FileKeyValueStore: Gloo's FileStore on a directory every process sees
//   (bef-run --coordinator=file:DIR); waits bounded by the run's timeout.
// - TcpKeyValueStore (tcp_store.h): one process serves the store on
//   HOST:PORT, the others connect (bef-run --coordinator=HOST:PORT).
//
// Every wait throws std::runtime_error after the store's timeout, as Gloo's
// own stores do; the rendezvous turns that into one line naming the
// missing ranks.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/store.h>

namespace kiln::runtime {

class KeyValueStore : public gloo::rendezvous::Store {
 public:
  // Whether `key` is set, without waiting.
  virtual bool Has(const std::string& key) = 0;
  // A wait without its own timeout waits the store's.
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override = 0;
  std::chrono::milliseconds timeout() const { return timeout_; }

 protected:
  explicit KeyValueStore(std::chrono::milliseconds timeout) : timeout_(timeout) {}

 private:
  std::chrono::milliseconds timeout_;
};

class MemoryKeyValueStore : public KeyValueStore {
 public:
  explicit MemoryKeyValueStore(std::chrono::milliseconds timeout) : KeyValueStore(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  using KeyValueStore::wait;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;
  bool Has(const std::string& key) override;
  // The value of `key` when set (the TCP store's server answers with it).
  bool TryGet(const std::string& key, std::vector<char>* value);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<char>> values_;
};

// Gloo's FileStore, whose get() and one-argument wait() would otherwise
// wait Gloo's fixed 30 s.
class FileKeyValueStore : public KeyValueStore {
 public:
  FileKeyValueStore(const std::string& directory, std::chrono::milliseconds timeout);
  ~FileKeyValueStore() override;
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  using KeyValueStore::wait;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;
  bool Has(const std::string& key) override;

 private:
  class Files;
  std::unique_ptr<Files> files_;
};

}  // namespace kiln::runtime
