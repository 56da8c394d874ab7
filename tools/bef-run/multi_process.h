// bef-run's multi-process mode: one process per device, or per node with
// --num_devices local devices each (device process_id * num_devices + l).
//
//   bef-run MODULE.bef --process_id=i --num_processes=P
//           --coordinator=HOST:PORT | --coordinator=file:DIR
//           [--num_devices=L] [--collective_interface=NAME|ADDRESS]
//
// The processes meet through a key-value store: with HOST:PORT process 0
// serves one (runtime/tcp_store.h) and the others connect to it; with
// file:DIR Gloo's FileStore keeps the keys in DIR (a fresh directory per
// run, on a file system every process sees). Collectives then run over
// Gloo's TCP transport, listening on the loopback when the coordinator is
// a loopback address or a directory, else on this host's name;
// --collective_interface names an interface (eth0) or an address instead.
// Process 0 keeps serving the store until every process has said it is
// done or has closed its connection (exited, or died), or the collective
// timeout has passed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "runtime/collective_rendezvous.h"

namespace kiln::runtime {
class KeyValueStore;
class ServedKeyValueStore;
}  // namespace kiln::runtime

namespace kiln::tools {

struct ProcessGroupOptions {
  int64_t process_id = 0;
  int64_t num_processes = 0;  // 0: not a multi-process run
  int64_t local_devices = 1;
  std::string coordinator;
  std::string interface;
  double timeout_seconds = 60;
};

// This process's place among the processes of one run.
class ProcessGroup {
 public:
  // Joins the run of `options` for a program of `total_devices` devices.
  static StatusOr<std::unique_ptr<ProcessGroup>> Join(const ProcessGroupOptions& options, int64_t total_devices);
  ~ProcessGroup();

  int64_t first_device() const { return first_device_; }
  int64_t local_devices() const { return local_devices_; }
  const std::shared_ptr<runtime::CollectiveRendezvous>& rendezvous() const { return rendezvous_; }
  // Says this process is done; process 0 waits for the others (at most the
  // timeout) before its store goes away.
  void Finish();

 private:
  ProcessGroup() = default;
  int64_t process_id_ = 0;
  int64_t num_processes_ = 0;
  int64_t first_device_ = 0;
  int64_t local_devices_ = 0;
  bool finished_ = false;
  std::shared_ptr<runtime::KeyValueStore> store_;
  std::shared_ptr<runtime::ServedKeyValueStore> served_;  // process 0's, with HOST:PORT
  std::shared_ptr<runtime::CollectiveRendezvous> rendezvous_;
};

}  // namespace kiln::tools
