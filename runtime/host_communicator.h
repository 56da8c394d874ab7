// HostCommunicator: one host device's Gloo contexts for the device groups
// of one loaded executable, and the collectives on them. Internal to the
// runtime.
//
// A group (global device ids in rank order, as the thunks carry them)
// becomes one Gloo context the first time the device runs a collective on
// it: its members connect a full mesh over Gloo's TCP transport (loopback
// in one process) through the rendezvous' store, and the context is kept
// for the executable's lifetime. Every operation waits at most the
// rendezvous' timeout; a failure is one line naming the collective, the
// group and the ranks that did not arrive.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "runtime/collective_reduction.h"
#include "runtime/collective_rendezvous.h"

namespace gloo {
class Context;
namespace transport {
class Device;
}  // namespace transport
}  // namespace gloo

namespace kiln::runtime {

// One group as this device sees it.
struct DeviceGroup {
  std::vector<int64_t> devices;  // global device ids in rank order
  int64_t rank = 0;              // this device's position
  int64_t size() const { return static_cast<int64_t>(devices.size()); }
};

// The group of `groups` that holds `device`, or an error.
StatusOr<DeviceGroup> FindDeviceGroup(const std::vector<std::vector<int64_t>>& groups, int64_t device);

class HostCommunicator {
 public:
  // `load` numbers the executable among those `device` loaded with the
  // rendezvous (CollectiveRendezvous::NextLoad).
  static StatusOr<std::unique_ptr<HostCommunicator>> Create(int64_t device,
                                                            std::shared_ptr<CollectiveRendezvous> rendezvous,
                                                            int64_t load);
  ~HostCommunicator();

  int64_t device() const { return device_; }

  // `what` names the collective in errors ("all-reduce 'ar.1'"); `tag`
  // tells concurrent operations on one group apart.
  // `out` receives the reduction of every rank's `in` (count elements of
  // elem_size bytes; `in` may be `out`).
  Status AllReduce(const DeviceGroup& group, const void* in, void* out, size_t count, size_t elem_size,
                   ReduceFunction reduce, uint32_t tag, const std::string& what);
  // `out` (count elements, apart from `in`) receives in block `rank` (its
  // count / size elements there) the reduction of every rank's block
  // `rank`; the other blocks are left with partial results.
  Status ReduceScatter(const DeviceGroup& group, const void* in, void* out, size_t count, size_t elem_size,
                       ReduceFunction reduce, uint32_t tag, const std::string& what);
  // `out` receives every rank's `bytes` bytes of `in`, in rank order.
  Status AllGather(const DeviceGroup& group, const void* in, void* out, size_t bytes, uint32_t tag,
                   const std::string& what);
  // Block r of `in` (bytes / size bytes each) goes to rank r; block r of
  // `out` comes from rank r.
  Status AllToAll(const DeviceGroup& group, const void* in, void* out, size_t bytes, uint32_t tag,
                  const std::string& what);
  // Every rank's `data` receives rank `root`'s.
  Status Broadcast(const DeviceGroup& group, void* data, size_t bytes, int64_t root, uint32_t tag,
                   const std::string& what);
  // Sends `send` to rank `to` and receives `recv` from rank `from` (either
  // may be -1: nothing to send or receive).
  Status SendReceive(const DeviceGroup& group, const void* send, int64_t to, void* recv, int64_t from,
                     size_t bytes, uint32_t tag, const std::string& what);

 private:
  struct Clique {
    std::shared_ptr<gloo::Context> context;
    std::shared_ptr<ArrivalBoard> arrivals;
    std::string name;  // "{0,1,2,3}"
  };
  HostCommunicator(int64_t device, std::shared_ptr<CollectiveRendezvous> rendezvous, int64_t load,
                   std::shared_ptr<gloo::transport::Device> transport);
  StatusOr<Clique*> CliqueFor(const DeviceGroup& group, const std::string& what);
  // Runs `op` on the group's context; turns Gloo's exceptions into one line.
  template <typename Op>
  Status Run(const DeviceGroup& group, const std::string& what, Op&& op);

  int64_t device_;
  std::shared_ptr<CollectiveRendezvous> rendezvous_;
  int64_t load_;
  std::shared_ptr<gloo::transport::Device> transport_;
  std::mutex mutex_;
  std::map<std::vector<int64_t>, std::unique_ptr<Clique>> cliques_;
};

}  // namespace kiln::runtime
