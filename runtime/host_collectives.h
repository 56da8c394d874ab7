// HostCollectives: the collective, collective-done and device-id thunks of
// one loaded executable on one host device. Internal to the runtime.
//
// Each collective moves its operands between the devices of its group
// through the executable's HostCommunicator (Gloo), then rearranges them
// into the destination as the HLO op defines (all-gather along a dimension,
// reduce-scatter's block, all-to-all's split blocks). A group of one device
// needs no communication. An async start snapshots its sources, runs the
// exchange on a thread of its own and returns; its done waits for it, so
// the thunks between them run meanwhile.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <unordered_map>

#include "common/status.h"
#include "runtime/host_communicator.h"
#include "thunks/program.h"

namespace kiln::runtime {

// The async collectives of one execution still in flight, by async id.
// Destroying it waits for them (an execution that failed between a start
// and its done must not leave a thread writing its buffers).
struct PendingCollectives {
  std::map<int64_t, std::future<Status>> in_flight;
  ~PendingCollectives();
};

class HostCollectives {
 public:
  // `device` of the program's replica_count * num_partitions devices;
  // `rendezvous` may be null only when no collective needs another device.
  static StatusOr<std::unique_ptr<HostCollectives>> Create(const thunks::ThunkProgram& program, int64_t device,
                                                           std::shared_ptr<CollectiveRendezvous> rendezvous);

  // Runs a collective, collective-done or device-id thunk with the
  // allocations' base addresses.
  Status Run(const thunks::Thunk& thunk, const std::vector<uint8_t*>& allocation_base,
             PendingCollectives& pending) const;

 private:
  HostCollectives(const thunks::ThunkProgram& program, int64_t device) : program_(program), device_(device) {}

  const thunks::ThunkProgram& program_;
  int64_t device_;
  std::unique_ptr<HostCommunicator> communicator_;  // null: every group is one device
  std::unordered_map<const thunks::Thunk*, uint32_t> tags_;
};

}  // namespace kiln::runtime
