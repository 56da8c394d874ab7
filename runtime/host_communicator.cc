// HostCommunicator (see host_communicator.h): Gloo contexts per device group
// and the collectives kiln runs on them.
#include "runtime/host_communicator.h"

#include <signal.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include "runtime/collective_common.h"
#include "runtime/collective_store.h"
#include "runtime/host_ring_allreduce.h"

namespace kiln::runtime {
namespace {

// The first line of an exception's message, without the source position
// Gloo's messages start with ("[./gloo/transport/tcp/pair.cc:589] ").
std::string FirstLine(const std::exception& e) {
  std::string m = e.what();
  m = m.substr(0, m.find('\n'));
  if (m.rfind("[", 0) == 0 && m.find("] ") != std::string::npos && m.find(".cc:") < m.find("] "))
    m = m.substr(m.find("] ") + 2);
  return m;
}

// Message slots of SendReceive and of the ring all-reduce, with the tag in
// the low bits: prefixes (the top byte) none of Gloo's collectives use
// (types.h: 0x02 to 0x08; kiln runs no gather, 0x01).
constexpr uint64_t kRingAllReduceSlot = uint64_t{0x21} << 56;
constexpr uint64_t kSendReceiveSlot = uint64_t{1} << 56;

// An element of `kBytes` bytes: Gloo sizes its segments in elements, so a
// reduction never splits one.
template <size_t kBytes>
struct Element {
  uint8_t bytes[kBytes];
};

// In place (`in` is `out`).
template <size_t kBytes>
void AllReduceInPlace(const std::shared_ptr<gloo::Context>& context, void* data, size_t count,
                      ReduceFunction reduce, uint32_t tag, std::chrono::milliseconds timeout) {
  gloo::AllreduceOptions opts(context);
  opts.setOutput(static_cast<Element<kBytes>*>(data), count);
  opts.setReduceFunction([reduce](void* o, const void* a, const void* b, size_t n) { reduce(o, a, b, n); });
  opts.setTag(tag);
  opts.setTimeout(timeout);
  gloo::allreduce(opts);
}

// Gloo's TCP pairs write with writev, which raises SIGPIPE when the peer
// has gone (a process that died mid-collective); its default action would
// kill this process instead of letting the write fail and the collective
// report it. A handler the program installed is left alone.
void IgnoreSigpipeUnlessHandled() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current{};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
  });
}

}  // namespace

StatusOr<DeviceGroup> FindDeviceGroup(const std::vector<std::vector<int64_t>>& groups, int64_t device) {
  for (const std::vector<int64_t>& g : groups) {
    auto it = std::find(g.begin(), g.end(), device);
    if (it != g.end()) return DeviceGroup{g, it - g.begin()};
  }
  return Error("device " + std::to_string(device) + " is in no device group of the collective");
}

HostCommunicator::HostCommunicator(int64_t device, std::shared_ptr<CollectiveRendezvous> rendezvous, int64_t load,
                                   std::shared_ptr<gloo::transport::Device> transport)
    : device_(device), rendezvous_(std::move(rendezvous)), load_(load), transport_(std::move(transport)) {}

HostCommunicator::~HostCommunicator() = default;

StatusOr<std::unique_ptr<HostCommunicator>> HostCommunicator::Create(int64_t device,
                                                                     std::shared_ptr<CollectiveRendezvous> rendezvous,
                                                                     int64_t load) {
  const TransportAddress& where = rendezvous->transport();
  IgnoreSigpipeUnlessHandled();
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = where.hostname;
    attr.iface = where.interface;
    std::shared_ptr<gloo::transport::Device> transport = gloo::transport::tcp::CreateDevice(attr);
    return std::unique_ptr<HostCommunicator>(
        new HostCommunicator(device, std::move(rendezvous), load, std::move(transport)));
  } catch (const std::exception& e) {
    return Error("cannot open Gloo's TCP transport on " +
                 (where.interface.empty() ? where.hostname.empty() ? "this host's name" : where.hostname
                                          : "interface " + where.interface) +
                 ": " + FirstLine(e));
  }
}

StatusOr<HostCommunicator::Clique*> HostCommunicator::CliqueFor(const DeviceGroup& group, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<Clique>& clique = cliques_[group.devices];
  if (clique) return clique.get();
  const std::string name = GroupName(group.devices);
  const std::string prefix = "load" + std::to_string(load_) + "/group" + name;
  auto context = std::make_shared<gloo::rendezvous::Context>(static_cast<int>(group.rank),
                                                             static_cast<int>(group.size()));
  context->setTimeout(rendezvous_->timeout());
  try {
    gloo::rendezvous::PrefixStore store(prefix, rendezvous_->store());
    context->connectFullMesh(store, transport_);
  } catch (const std::exception& e) {
    std::vector<int64_t> missing;
    for (int64_t r : rendezvous_->UnpublishedRanks(prefix, group.size())) missing.push_back(group.devices[r]);
    if (!missing.empty())
      return Error(what + " on devices " + name + ": devices " + IdList(missing) + " did not arrive within " +
                   Seconds(rendezvous_->timeout()));
    return Error(what + " on devices " + name + ": connecting the devices failed: " + FirstLine(e));
  }
  clique = std::make_unique<Clique>();
  clique->context = std::move(context);
  clique->arrivals = rendezvous_->Arrivals(prefix, group.size());
  clique->name = name;
  return clique.get();
}

template <typename Op>
Status HostCommunicator::Run(const DeviceGroup& group, const std::string& what, Op&& op) {
  KILN_ASSIGN_OR_RETURN(Clique * clique, CliqueFor(group, what));
  const int64_t arrived = clique->arrivals->Enter(group.rank);
  try {
    op(clique->context);
    return Status::Ok();
  } catch (const std::exception& e) {
    // Arrivals are known for this process's devices only.
    std::vector<int64_t> missing;
    for (int64_t r : clique->arrivals->Behind(arrived))
      if (rendezvous_->IsLocal(group.devices[r])) missing.push_back(group.devices[r]);
    if (!missing.empty())
      return Error(what + " on devices " + clique->name + ": devices " + IdList(missing) +
                   " did not arrive within " + Seconds(rendezvous_->timeout()));
    return Error(what + " on devices " + clique->name + " failed: " + FirstLine(e));
  }
}

Status HostCommunicator::AllReduce(const DeviceGroup& group, const void* in, void* out, size_t count,
                                   size_t elem_size, ReduceFunction reduce, uint32_t tag, const std::string& what) {
  if (count == 0) return Status::Ok();
  const std::chrono::milliseconds timeout = rendezvous_->timeout();
  const size_t bytes = count * elem_size;
  const auto* from = static_cast<const uint8_t*>(in);
  auto* to = static_cast<uint8_t*>(out);
  if (from + bytes <= to || to + bytes <= from) {
    // Apart: the ring reads `in` where Gloo would first copy it into `out`.
    return Run(group, what, [&](const std::shared_ptr<gloo::Context>& context) {
      RingAllReduce(*context, in, out, count, elem_size, reduce, kRingAllReduceSlot | tag, timeout);
    });
  }
  if (from != to) std::memmove(to, from, bytes);  // overlapping: in place from here
  return Run(group, what, [&](const std::shared_ptr<gloo::Context>& context) {
    switch (elem_size) {
      case 1: return AllReduceInPlace<1>(context, out, count, reduce, tag, timeout);
      case 2: return AllReduceInPlace<2>(context, out, count, reduce, tag, timeout);
      case 4: return AllReduceInPlace<4>(context, out, count, reduce, tag, timeout);
      case 8: return AllReduceInPlace<8>(context, out, count, reduce, tag, timeout);
      case 16: return AllReduceInPlace<16>(context, out, count, reduce, tag, timeout);
      default: throw std::runtime_error("no all-reduce of " + std::to_string(elem_size) + "-byte elements");
    }
  });
}

Status HostCommunicator::ReduceScatter(const DeviceGroup& group, const void* in, void* out, size_t count,
                                       size_t elem_size, ReduceFunction reduce, uint32_t tag,
                                       const std::string& what) {
  if (count == 0) return Status::Ok();
  const std::chrono::milliseconds timeout = rendezvous_->timeout();
  return Run(group, what, [&](const std::shared_ptr<gloo::Context>& context) {
    RingReduceScatter(*context, in, out, count, elem_size, reduce, kRingAllReduceSlot | tag, timeout);
  });
}

Status HostCommunicator::AllGather(const DeviceGroup& group, const void* in, void* out, size_t bytes, uint32_t tag,
                                   const std::string& what) {
  if (bytes == 0) return Status::Ok();
  return Run(group, what, [&](const std::shared_ptr<gloo::Context>& context) {
    gloo::AllgatherOptions opts(context);
    opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), bytes);
    opts.setOutput(static_cast<uint8_t*>(out), bytes * group.size());
    opts.setTag(tag);
    opts.setTimeout(rendezvous_->timeout());
    gloo::allgather(opts);
  });
}

Status HostCommunicator::AllToAll(const DeviceGroup& group, const void* in, void* out, size_t bytes, uint32_t tag,
                                  const std::string& what) {
  if (bytes == 0) return Status::Ok();
  return Run(group, what, [&](const std::shared_ptr<gloo::Context>& context) {
    gloo::AlltoallOptions opts(context);
    opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), bytes);
    opts.setOutput(static_cast<uint8_t*>(out), bytes);
    opts.setTag(tag);
    opts.setTimeout(rendezvous_->timeout());
    gloo::alltoall(opts);
  });
}

Status HostCommunicator::Broadcast(const DeviceGroup& group, void* data, size_t bytes, int64_t root, uint32_t tag,
                                   const std::string& what) {
  if (bytes == 0) return Status::Ok();
  return Run(group, what, [&](const std::shared_ptr<gloo::Context>& context) {
    gloo::BroadcastOptions opts(context);
    opts.setOutput(static_cast<uint8_t*>(data), bytes);
    opts.setRoot(static_cast<int>(root));
    opts.setTag(tag);
    opts.setTimeout(rendezvous_->timeout());
    gloo::broadcast(opts);
  });
}

Status HostCommunicator::SendReceive(const DeviceGroup& group, const void* send, int64_t to, void* recv, int64_t from,
                                     size_t bytes, uint32_t tag, const std::string& what) {
  if (bytes == 0) return Status::Ok();
  const uint64_t slot = kSendReceiveSlot | tag;
  const std::chrono::milliseconds timeout = rendezvous_->timeout();
  return Run(group, what, [&](const std::shared_ptr<gloo::Context>& context) {
    std::unique_ptr<gloo::transport::UnboundBuffer> out, in;
    if (to >= 0) {
      out = context->createUnboundBuffer(const_cast<void*>(send), bytes);
      out->send(static_cast<int>(to), slot);
    }
    if (from >= 0) {
      in = context->createUnboundBuffer(recv, bytes);
      in->recv(static_cast<int>(from), slot);
    }
    if (in) in->waitRecv(timeout);
    if (out) out->waitSend(timeout);
  });
}

}  // namespace kiln::runtime
