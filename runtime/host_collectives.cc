// HostCollectives (see host_collectives.h): the data layout of each HLO
// collective around the HostCommunicator's exchanges.
#include "runtime/host_collectives.h"

#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include "runtime/collective_common.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

// Where one buffer's source and destination live in this execution.
struct Operand {
  const uint8_t* source = nullptr;
  uint8_t* destination = nullptr;
  const th::CollectiveBuffer* buffer = nullptr;
  size_t bytes() const { return static_cast<size_t>(buffer->source.size); }
};

// Bytes of one index of `dim` and everything after it (a "row" of the
// dimensions from `dim` on), and how many such rows precede it.
struct Split {
  size_t outer = 1;  // product of the dimensions before dim
  size_t chunk = 0;  // bytes of dims[dim:]
};
Split SplitAt(const th::CollectiveBuffer& b, int64_t dim) {
  Split s;
  for (int64_t d = 0; d < dim; ++d) s.outer *= static_cast<size_t>(b.dims[d]);
  s.chunk = s.outer == 0 ? 0 : static_cast<size_t>(b.source.size) / s.outer;
  return s;
}

// The collective's exchanges, on a group of one device without any.
class Exchange {
 public:
  Exchange(HostCommunicator* comm, DeviceGroup group, uint32_t tag, std::string what)
      : comm_(comm), group_(std::move(group)), tag_(tag), what_(std::move(what)) {}
  int64_t size() const { return group_.size(); }
  int64_t rank() const { return group_.rank; }

  Status AllReduce(const void* in, void* out, size_t count, size_t elem_size, ReduceFunction reduce) {
    if (size() == 1) return Copy(out, in, count * elem_size);
    return comm_->AllReduce(group_, in, out, count, elem_size, reduce, tag_, what_);
  }
  // `out` holds count elements; block rank() of them receives the result.
  Status ReduceScatter(const void* in, void* out, size_t count, size_t elem_size, ReduceFunction reduce) {
    if (size() == 1) return Copy(out, in, count * elem_size);
    return comm_->ReduceScatter(group_, in, out, count, elem_size, reduce, tag_, what_);
  }
  Status AllGather(const void* in, void* out, size_t bytes) {
    if (size() == 1) return Copy(out, in, bytes);
    return comm_->AllGather(group_, in, out, bytes, tag_, what_);
  }
  Status AllToAll(const void* in, void* out, size_t bytes) {
    if (size() == 1) return Copy(out, in, bytes);
    return comm_->AllToAll(group_, in, out, bytes, tag_, what_);
  }
  Status Broadcast(void* data, size_t bytes) {
    if (size() == 1) return Status::Ok();
    return comm_->Broadcast(group_, data, bytes, 0, tag_, what_);
  }
  Status SendReceive(const void* send, int64_t to, void* recv, int64_t from, size_t bytes) {
    if (size() == 1) return from == 0 ? Copy(recv, send, bytes) : Status::Ok();
    return comm_->SendReceive(group_, send, to, recv, from, bytes, tag_, what_);
  }

 private:
  static Status Copy(void* out, const void* in, size_t bytes) {
    if (out != in && bytes) std::memmove(out, in, bytes);
    return Status::Ok();
  }
  HostCommunicator* comm_;
  DeviceGroup group_;
  uint32_t tag_;
  std::string what_;
};

void Place(uint8_t* destination, const uint8_t* source, size_t bytes) {
  if (destination != source && bytes) std::memmove(destination, source, bytes);
}

// Scratch whose every byte the collective writes before reading: not
// zeroed first.
std::unique_ptr<uint8_t[]> UninitializedBytes(size_t bytes) { return std::unique_ptr<uint8_t[]>(new uint8_t[bytes]); }

Status AllReduce(const th::AllReduceThunk& t, const std::vector<Operand>& ops, Exchange& ex) {
  for (const Operand& op : ops) {
    KILN_ASSIGN_OR_RETURN(ReduceFunction reduce, CollectiveReduction(op.buffer->element_type, t.reduction));
    KILN_RETURN_IF_ERROR(ex.AllReduce(op.source, op.destination, static_cast<size_t>(op.buffer->element_count),
                                      StorageBytes(op.buffer->element_type), reduce));
  }
  return Status::Ok();
}

// Gathered blocks arrive rank-major; the result interleaves them per row of
// the dimensions before `dimension`.
Status AllGather(const th::AllGatherThunk& t, const std::vector<Operand>& ops, Exchange& ex) {
  const size_t n = static_cast<size_t>(ex.size());
  for (const Operand& op : ops) {
    const Split s = SplitAt(*op.buffer, t.dimension);
    if (s.outer == 1) {
      KILN_RETURN_IF_ERROR(ex.AllGather(op.source, op.destination, op.bytes()));
      continue;
    }
    std::unique_ptr<uint8_t[]> gathered = UninitializedBytes(op.bytes() * n);
    KILN_RETURN_IF_ERROR(ex.AllGather(op.source, gathered.get(), op.bytes()));
    for (size_t r = 0; r < n; ++r)
      for (size_t o = 0; o < s.outer; ++o)
        std::memcpy(op.destination + (o * n + r) * s.chunk, gathered.get() + r * op.bytes() + o * s.chunk, s.chunk);
  }
  return Status::Ok();
}

// Rank q's part of every row is made contiguous (block q of the operand,
// unless the scatter dimension is the major one and it already is); the
// ring's reduce-scatter then leaves block `rank`, this device's result, in
// a scratch buffer of the operand's size.
Status ReduceScatter(const th::ReduceScatterThunk& t, const std::vector<Operand>& ops, Exchange& ex) {
  const size_t n = static_cast<size_t>(ex.size());
  const size_t rank = static_cast<size_t>(ex.rank());
  for (const Operand& op : ops) {
    KILN_ASSIGN_OR_RETURN(ReduceFunction reduce, CollectiveReduction(op.buffer->element_type, t.reduction));
    const Split s = SplitAt(*op.buffer, t.dimension);
    const size_t block = s.chunk / n, result = s.outer * block;
    const uint8_t* ordered = op.source;
    std::unique_ptr<uint8_t[]> reordered;
    if (s.outer != 1) {
      reordered = UninitializedBytes(op.bytes());
      for (size_t q = 0; q < n; ++q)
        for (size_t o = 0; o < s.outer; ++o)
          std::memcpy(reordered.get() + (q * s.outer + o) * block, op.source + o * s.chunk + q * block, block);
      ordered = reordered.get();
    }
    std::unique_ptr<uint8_t[]> reduced = UninitializedBytes(op.bytes());
    KILN_RETURN_IF_ERROR(ex.ReduceScatter(ordered, reduced.get(), static_cast<size_t>(op.buffer->element_count),
                                          StorageBytes(op.buffer->element_type), reduce));
    Place(op.destination, reduced.get() + rank * result, result);
  }
  return Status::Ok();
}

Status AllToAll(const th::AllToAllThunk& t, const std::vector<Operand>& ops, Exchange& ex) {
  const size_t n = static_cast<size_t>(ex.size());
  if (!t.split_dimension) {
    // Tuple form: operand r goes to rank r; result j comes from rank j.
    const size_t bytes = ops.empty() ? 0 : ops[0].bytes();
    std::unique_ptr<uint8_t[]> send = UninitializedBytes(bytes * n), received = UninitializedBytes(bytes * n);
    for (size_t r = 0; r < n; ++r) std::memcpy(send.get() + r * bytes, ops[r].source, bytes);
    KILN_RETURN_IF_ERROR(ex.AllToAll(send.get(), received.get(), bytes * n));
    for (size_t j = 0; j < n; ++j) std::memcpy(ops[j].destination, received.get() + j * bytes, bytes);
    return Status::Ok();
  }
  for (const Operand& op : ops) {
    const Split s = SplitAt(*op.buffer, *t.split_dimension);
    const size_t block = s.chunk / n;
    std::unique_ptr<uint8_t[]> send = UninitializedBytes(op.bytes()), received = UninitializedBytes(op.bytes());
    for (size_t r = 0; r < n; ++r)
      for (size_t o = 0; o < s.outer; ++o)
        std::memcpy(send.get() + (r * s.outer + o) * block, op.source + o * s.chunk + r * block, block);
    KILN_RETURN_IF_ERROR(ex.AllToAll(send.get(), received.get(), op.bytes()));
    for (size_t r = 0; r < n; ++r)
      for (size_t o = 0; o < s.outer; ++o)
        std::memcpy(op.destination + o * s.chunk + r * block, received.get() + (r * s.outer + o) * block, block);
  }
  return Status::Ok();
}

Status CollectivePermute(const th::CollectivePermuteThunk& t, const Operand& op, int64_t device, Exchange& ex) {
  int64_t to = -1, from = -1;
  for (const auto& [source, target] : t.device_pairs) {
    if (source == device) to = target;
    if (target == device) from = source;
  }
  // A device that receives nothing gets zeros; the source is read before
  // the destination is written, even when they overlap.
  std::vector<uint8_t> copy;
  const uint8_t* send = op.source;
  if (to >= 0 && from >= 0 && op.source < op.destination + op.bytes() && op.destination < op.source + op.bytes()) {
    copy.assign(op.source, op.source + op.bytes());
    send = copy.data();
  }
  if (to == device) {
    // A device sending to itself copies; it still joins the exchange, which
    // its peers' connection needs.
    Place(op.destination, op.source, op.bytes());
    return ex.SendReceive(nullptr, -1, nullptr, -1, op.bytes());
  }
  if (from < 0) std::memset(op.destination, 0, op.bytes());
  return ex.SendReceive(send, to, op.destination, from, op.bytes());
}

Status Broadcast(const std::vector<Operand>& ops, Exchange& ex) {
  for (const Operand& op : ops) {
    Place(op.destination, op.source, op.bytes());
    KILN_RETURN_IF_ERROR(ex.Broadcast(op.destination, op.bytes()));
  }
  return Status::Ok();
}

}  // namespace

PendingCollectives::~PendingCollectives() {
  for (auto& [id, future] : in_flight)
    if (future.valid()) future.wait();
}

StatusOr<std::unique_ptr<HostCollectives>> HostCollectives::Create(const th::ThunkProgram& program, int64_t device,
                                                                   std::shared_ptr<CollectiveRendezvous> rendezvous) {
  if (device < 0 || device >= program.device_count())
    return Error("device " + std::to_string(device) + " is outside the program's " +
                 std::to_string(program.device_count()) + " devices");
  std::unique_ptr<HostCollectives> c(new HostCollectives(program, device));
  uint32_t next_tag = 0;
  th::ForEachThunk(program.root, [&](const th::Thunk& t, int) {
    if (th::IsCollective(t.kind())) c->tags_[&t] = next_tag++;
  });
  KILN_ASSIGN_OR_RETURN(bool needs_peers, CollectivesNeedPeers(program, rendezvous.get()));
  if (!needs_peers) return c;
  const int64_t load = rendezvous->NextLoad(device);
  KILN_ASSIGN_OR_RETURN(c->communicator_, HostCommunicator::Create(device, std::move(rendezvous), load));
  return c;
}

Status HostCollectives::Run(const th::Thunk& thunk, const std::vector<uint8_t*>& base,
                            PendingCollectives& pending) const {
  if (const auto* id = thunk.As<th::DeviceIdThunk>()) {
    const uint32_t value = static_cast<uint32_t>(id->kind == th::DeviceIdKind::kReplica
                                                     ? device_ / program_.num_partitions
                                                     : device_ % program_.num_partitions);
    std::memcpy(base[id->destination.allocation] + id->destination.offset, &value, sizeof value);
    return Status::Ok();
  }
  if (const auto* done = thunk.As<th::CollectiveDoneThunk>()) {
    auto it = pending.in_flight.find(done->async_id);
    if (it == pending.in_flight.end())
      return Error("collective-done: async collective " + std::to_string(done->async_id) + " was not started");
    Status status = it->second.get();
    pending.in_flight.erase(it);
    return status;
  }
  const th::CollectiveConfig* config = th::CollectiveConfigOf(thunk);
  if (!config) return Error("not a collective: " + std::string(th::ThunkKindName(thunk.kind())));
  auto address = [&](const th::BufferSlice& s) { return base[s.allocation] + s.offset; };

  // Snapshots of the sources of an async start, which its thread reads
  // after the thunks that follow may have reused their buffers.
  auto snapshots = std::make_shared<std::vector<std::vector<uint8_t>>>();
  std::vector<Operand> ops;
  const th::CollectiveBuffer* permuted = nullptr;
  if (const auto* p = thunk.As<th::CollectivePermuteThunk>()) permuted = &p->buffer;
  std::vector<const th::CollectiveBuffer*> all;
  if (permuted) all.push_back(permuted);
  else
    for (const th::CollectiveBuffer& b : CollectiveBuffersOf(thunk)) all.push_back(&b);
  for (const th::CollectiveBuffer* b : all) {
    Operand op{address(b->source), address(b->destination), b};
    if (config->async_id) {
      snapshots->emplace_back(op.source, op.source + op.bytes());
      op.source = snapshots->back().data();
    }
    ops.push_back(op);
  }

  std::optional<DeviceGroup> group;
  if (permuted) {
    std::vector<int64_t> world(program_.device_count());
    std::iota(world.begin(), world.end(), 0);
    group = DeviceGroup{world, device_};
  } else {
    KILN_ASSIGN_OR_RETURN(group, FindDeviceGroup(config->device_groups, device_));
  }
  auto tag = tags_.find(&thunk);
  if (tag == tags_.end()) return Error("internal: collective without a tag");
  auto exchange =
      std::make_shared<Exchange>(communicator_.get(), std::move(*group), tag->second, DescribeCollective(thunk));
  auto run = [&thunk, ops, exchange, snapshots, device = device_]() -> Status {
    Exchange& ex = *exchange;
    switch (thunk.kind()) {
      case th::ThunkKind::kAllReduce: return AllReduce(*thunk.As<th::AllReduceThunk>(), ops, ex);
      case th::ThunkKind::kAllGather: return AllGather(*thunk.As<th::AllGatherThunk>(), ops, ex);
      case th::ThunkKind::kReduceScatter: return ReduceScatter(*thunk.As<th::ReduceScatterThunk>(), ops, ex);
      case th::ThunkKind::kAllToAll: return AllToAll(*thunk.As<th::AllToAllThunk>(), ops, ex);
      case th::ThunkKind::kCollectivePermute:
        return CollectivePermute(*thunk.As<th::CollectivePermuteThunk>(), ops[0], device, ex);
      case th::ThunkKind::kCollectiveBroadcast: return Broadcast(ops, ex);
      default: return Error("not a collective");
    }
  };
  if (exchange->size() > 1 && !communicator_) return Error("internal: a collective without a communicator");
  if (!config->async_id) return run();
  if (pending.in_flight.count(*config->async_id))
    return Error("async collective " + std::to_string(*config->async_id) + " started twice");
  if (exchange->size() == 1) {
    // A group of one device exchanges nothing (its collective is a copy):
    // run it now, on this thread, and let the done find it finished; a
    // thread per start cost more than the copy.
    std::promise<Status> finished;
    finished.set_value(run());
    pending.in_flight[*config->async_id] = finished.get_future();
    return Status::Ok();
  }
  pending.in_flight[*config->async_id] = std::async(std::launch::async, std::move(run));
  return Status::Ok();
}

}  // namespace kiln::runtime
