// CudaCollectives (see cuda_collectives.h): each HLO collective's data
// layout around NCCL's calls, on the execution's stream.
#include "runtime/cuda_collectives.h"

#include <gloo/rendezvous/store.h>

#include <concepts>
#include <cstring>
#include <numeric>

#include "runtime/async_source_hazards.h"
#include "runtime/collective_common.h"
#include "runtime/collective_store.h"
#include "runtime/cuda_comm_stream.h"
#include "runtime/host_communicator.h"

namespace kiln::runtime {
namespace {

namespace th = ::kiln::thunks;

// How NCCL reduces one operand: its data type, elements per HLO element
// and reduction.
struct NcclReduction {
  ncclDataType_t type = ncclFloat32;
  size_t per_element = 1;
  ncclRedOp_t op = ncclSum;
};

StatusOr<NcclReduction> ReductionFor(ElementType type, th::ReductionKind kind) {
  NcclReduction r;
  const bool complex = type == ElementType::kC64 || type == ElementType::kC128;
  switch (type) {
    case ElementType::kF32: r.type = ncclFloat32; break;
    case ElementType::kF16: r.type = ncclFloat16; break;
    case ElementType::kBF16: r.type = ncclBfloat16; break;
    case ElementType::kF64: r.type = ncclFloat64; break;
    case ElementType::kS8: r.type = ncclInt8; break;
    case ElementType::kU8: r.type = ncclUint8; break;
    case ElementType::kS32: r.type = ncclInt32; break;
    case ElementType::kU32: r.type = ncclUint32; break;
    case ElementType::kS64: r.type = ncclInt64; break;
    case ElementType::kU64: r.type = ncclUint64; break;
    case ElementType::kPred: r.type = ncclUint8; break;
    case ElementType::kC64: r.type = ncclFloat32, r.per_element = 2; break;
    case ElementType::kC128: r.type = ncclFloat64, r.per_element = 2; break;
    default: r.type = ncclNumTypes; break;
  }
  const std::string refused = "NCCL has no " + std::string(th::ReductionKindName(kind)) + " reduction of " +
                              std::string(ElementTypeName(type)) +
                              " (it reduces f32, f16, bf16, f64, s8, u8, s32, u32, s64 and u64, pred and/or as "
                              "min/max, c64/c128 sums)";
  if (r.type == ncclNumTypes) return Error(refused);
  if (type == ElementType::kPred) {
    // Logical: or (and HLO's add on pred) is a max of 0/1, and (multiply) a min.
    switch (kind) {
      case th::ReductionKind::kSum:
      case th::ReductionKind::kOr:
      case th::ReductionKind::kMax: r.op = ncclMax; return r;
      default: r.op = ncclMin; return r;
    }
  }
  switch (kind) {
    case th::ReductionKind::kSum: r.op = ncclSum; return r;
    case th::ReductionKind::kProduct: r.op = ncclProd; break;
    case th::ReductionKind::kMin: r.op = ncclMin; break;
    case th::ReductionKind::kMax: r.op = ncclMax; break;
    default: return Error(refused);
  }
  if (complex) return Error(refused);
  return r;
}

// Bytes of dims[dim:] and how many such rows precede it (host_collectives'
// split, on device addresses).
struct Split {
  size_t outer = 1, chunk = 0;
};
Split SplitAt(const th::CollectiveBuffer& b, int64_t dim) {
  Split s;
  for (int64_t d = 0; d < dim; ++d) s.outer *= static_cast<size_t>(b.dims[d]);
  s.chunk = s.outer == 0 ? 0 : static_cast<size_t>(b.source.size) / s.outer;
  return s;
}

size_t AlignUp(size_t v) { return (v + 255) / 256 * 256; }

// One collective's issue on one device: the stream, the communicator and
// the copies around NCCL's calls.
class Issuer {
 public:
  Issuer(CudaExecutionContext& ctx, const kernels::NcclLibrary* nccl, ncclComm_t comm, int64_t size, int64_t rank,
         std::string what)
      : ctx_(ctx), nccl_(nccl), comm_(comm), size_(size), rank_(rank), what_(std::move(what)) {}
  size_t size() const { return static_cast<size_t>(size_); }
  size_t rank() const { return static_cast<size_t>(rank_); }
  cudaStream_t stream() const { return reinterpret_cast<cudaStream_t>(ctx_.stream); }
  const kernels::NcclLibrary& nccl() const { return *nccl_; }
  ncclComm_t comm() const { return comm_; }

  Status Copy(CUdeviceptr to, CUdeviceptr from, size_t bytes) const {
    if (bytes == 0 || to == from) return Status::Ok();
    const CudaDriver& d = ctx_.backend->driver();
    return d.Check(d.cuMemcpyDtoDAsync(to, from, bytes, ctx_.stream), "cuMemcpyDtoDAsync");
  }
  Status Zero(CUdeviceptr to, size_t bytes) const {
    if (bytes == 0) return Status::Ok();
    const CudaDriver& d = ctx_.backend->driver();
    return d.Check(d.cuMemsetD8Async(to, 0, bytes, ctx_.stream), "cuMemsetD8Async");
  }
  StatusOr<CUdeviceptr> Scratch(size_t bytes) const {
    return ctx_.backend->LibraryScratch(ctx_.lane, std::max<size_t>(bytes, 1));
  }
  Status Check(ncclResult_t r, const char* call) const { return nccl_->Check(r, what_ + ": " + call); }
  // Sends block r of `send` to rank r and receives block r of `recv` from
  // it, for every r, as one group.
  Status Exchange(CUdeviceptr send, CUdeviceptr recv, size_t block) const {
    KILN_RETURN_IF_ERROR(Check(nccl_->ncclGroupStart(), "ncclGroupStart"));
    Status s;
    for (size_t r = 0; r < size() && s.ok(); ++r) {
      s = Check(nccl_->ncclSend(reinterpret_cast<void*>(send + r * block), block, ncclUint8, static_cast<int>(r),
                                comm_, stream()),
                "ncclSend");
      if (s.ok())
        s = Check(nccl_->ncclRecv(reinterpret_cast<void*>(recv + r * block), block, ncclUint8, static_cast<int>(r),
                                  comm_, stream()),
                  "ncclRecv");
    }
    Status end = Check(nccl_->ncclGroupEnd(), "ncclGroupEnd");
    return s.ok() ? end : s;
  }

 private:
  CudaExecutionContext& ctx_;
  const kernels::NcclLibrary* nccl_;
  ncclComm_t comm_;
  int64_t size_, rank_;
  std::string what_;
};

CUdeviceptr Address(const CudaExecutionContext& ctx, const th::BufferSlice& s) {
  return ctx.allocation_base[s.allocation] + static_cast<CUdeviceptr>(s.offset);
}
void* Pointer(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

// Where a buffer of a collective comes from and goes to. A group of one
// device, or an empty buffer, needs no exchange: the collective is then the
// copy BufferEnds made (`copied`).
struct BufferEnds {
  CUdeviceptr src = 0, dst = 0;
  size_t bytes = 0;  // of the source
  bool copied = false;
};
StatusOr<BufferEnds> EndsOf(const th::CollectiveBuffer& b, const CudaExecutionContext& ctx, const Issuer& io) {
  BufferEnds e{Address(ctx, b.source), Address(ctx, b.destination), static_cast<size_t>(b.source.size)};
  if (io.size() == 1 || e.bytes == 0) {
    KILN_RETURN_IF_ERROR(io.Copy(e.dst, e.src, e.bytes));
    e.copied = true;
  }
  return e;
}

Status AllReduce(const th::AllReduceThunk& t, CudaExecutionContext& ctx, const Issuer& io) {
  for (const th::CollectiveBuffer& b : t.buffers) {
    KILN_ASSIGN_OR_RETURN(const BufferEnds ends, EndsOf(b, ctx, io));
    const auto& [src, dst, bytes, copied] = ends;
    if (copied) continue;
    KILN_ASSIGN_OR_RETURN(NcclReduction r, ReductionFor(b.element_type, t.reduction));
    KILN_RETURN_IF_ERROR(io.Check(io.nccl().ncclAllReduce(Pointer(src), Pointer(dst),
                                                          static_cast<size_t>(b.element_count) * r.per_element,
                                                          r.type, r.op, io.comm(), io.stream()),
                                  "ncclAllReduce"));
  }
  return Status::Ok();
}

Status AllGather(const th::AllGatherThunk& t, CudaExecutionContext& ctx, const Issuer& io) {
  const size_t n = io.size();
  for (const th::CollectiveBuffer& b : t.buffers) {
    KILN_ASSIGN_OR_RETURN(const BufferEnds ends, EndsOf(b, ctx, io));
    const auto& [src, dst, bytes, copied] = ends;
    if (copied) continue;
    const Split s = SplitAt(b, t.dimension);
    CUdeviceptr gathered = dst;
    if (s.outer != 1) {
      KILN_ASSIGN_OR_RETURN(gathered, io.Scratch(bytes * n));
    }
    KILN_RETURN_IF_ERROR(io.Check(
        io.nccl().ncclAllGather(Pointer(src), Pointer(gathered), bytes, ncclUint8, io.comm(), io.stream()),
        "ncclAllGather"));
    if (s.outer == 1) continue;
    for (size_t r = 0; r < n; ++r)
      for (size_t o = 0; o < s.outer; ++o)
        KILN_RETURN_IF_ERROR(io.Copy(dst + (o * n + r) * s.chunk, gathered + r * bytes + o * s.chunk, s.chunk));
  }
  return Status::Ok();
}

Status ReduceScatter(const th::ReduceScatterThunk& t, CudaExecutionContext& ctx, const Issuer& io) {
  const size_t n = io.size();
  for (const th::CollectiveBuffer& b : t.buffers) {
    KILN_ASSIGN_OR_RETURN(const BufferEnds ends, EndsOf(b, ctx, io));
    const auto& [src, dst, bytes, copied] = ends;
    if (copied) continue;
    KILN_ASSIGN_OR_RETURN(NcclReduction r, ReductionFor(b.element_type, t.reduction));
    const Split s = SplitAt(b, t.dimension);
    const size_t block = s.chunk / n;
    // Rank r's part of every row, contiguous and in rank order.
    CUdeviceptr ordered = src;
    if (s.outer != 1) {
      KILN_ASSIGN_OR_RETURN(ordered, io.Scratch(bytes));
      for (size_t q = 0; q < n; ++q)
        for (size_t o = 0; o < s.outer; ++o)
          KILN_RETURN_IF_ERROR(io.Copy(ordered + (q * s.outer + o) * block, src + o * s.chunk + q * block, block));
    }
    const size_t recv_elements = static_cast<size_t>(b.element_count) / n * r.per_element;
    KILN_RETURN_IF_ERROR(io.Check(io.nccl().ncclReduceScatter(Pointer(ordered), Pointer(dst), recv_elements, r.type,
                                                              r.op, io.comm(), io.stream()),
                                  "ncclReduceScatter"));
  }
  return Status::Ok();
}

// Both forms stage what goes to rank r as block r of a send area and
// unpack block r of a receive area, so no send reads memory a receive of
// the same group writes.
Status AllToAll(const th::AllToAllThunk& t, CudaExecutionContext& ctx, const Issuer& io) {
  const size_t n = io.size();
  if (n == 1) {
    for (const th::CollectiveBuffer& b : t.buffers)
      KILN_RETURN_IF_ERROR(io.Copy(Address(ctx, b.destination), Address(ctx, b.source), static_cast<size_t>(b.source.size)));
    return Status::Ok();
  }
  if (!t.split_dimension) {
    const size_t bytes = t.buffers.empty() ? 0 : static_cast<size_t>(t.buffers[0].source.size);
    if (bytes == 0) return Status::Ok();
    const size_t area = AlignUp(bytes * n);
    KILN_ASSIGN_OR_RETURN(CUdeviceptr scratch, io.Scratch(2 * area));
    for (size_t r = 0; r < n; ++r) KILN_RETURN_IF_ERROR(io.Copy(scratch + r * bytes, Address(ctx, t.buffers[r].source), bytes));
    KILN_RETURN_IF_ERROR(io.Exchange(scratch, scratch + area, bytes));
    for (size_t j = 0; j < n; ++j)
      KILN_RETURN_IF_ERROR(io.Copy(Address(ctx, t.buffers[j].destination), scratch + area + j * bytes, bytes));
    return Status::Ok();
  }
  for (const th::CollectiveBuffer& b : t.buffers) {
    const CUdeviceptr src = Address(ctx, b.source), dst = Address(ctx, b.destination);
    const size_t bytes = static_cast<size_t>(b.source.size);
    if (bytes == 0) continue;
    const Split s = SplitAt(b, *t.split_dimension);
    const size_t block = s.chunk / n;
    const size_t area = AlignUp(bytes);
    KILN_ASSIGN_OR_RETURN(CUdeviceptr scratch, io.Scratch(2 * area));
    for (size_t r = 0; r < n; ++r)
      for (size_t o = 0; o < s.outer; ++o)
        KILN_RETURN_IF_ERROR(io.Copy(scratch + (r * s.outer + o) * block, src + o * s.chunk + r * block, block));
    KILN_RETURN_IF_ERROR(io.Exchange(scratch, scratch + area, s.outer * block));
    for (size_t r = 0; r < n; ++r)
      for (size_t o = 0; o < s.outer; ++o)
        KILN_RETURN_IF_ERROR(
            io.Copy(dst + o * s.chunk + r * block, scratch + area + (r * s.outer + o) * block, block));
  }
  return Status::Ok();
}

Status CollectivePermute(const th::CollectivePermuteThunk& t, CudaExecutionContext& ctx, int64_t device,
                         const Issuer& io) {
  int64_t to = -1, from = -1;
  for (const auto& [source, target] : t.device_pairs) {
    if (source == device) to = target;
    if (target == device) from = source;
  }
  const CUdeviceptr src = Address(ctx, t.buffer.source), dst = Address(ctx, t.buffer.destination);
  const size_t bytes = static_cast<size_t>(t.buffer.source.size);
  if (bytes == 0) return Status::Ok();
  if (to == device) return io.Copy(dst, src, bytes);
  if (from < 0) KILN_RETURN_IF_ERROR(io.Zero(dst, bytes));
  if (to < 0 && from < 0) return Status::Ok();
  // The source is read before the destination is written, even when they
  // overlap: it is sent from a copy.
  CUdeviceptr send = src;
  if (to >= 0 && from >= 0) {
    KILN_ASSIGN_OR_RETURN(send, io.Scratch(bytes));
    KILN_RETURN_IF_ERROR(io.Copy(send, src, bytes));
  }
  KILN_RETURN_IF_ERROR(io.Check(io.nccl().ncclGroupStart(), "ncclGroupStart"));
  Status s;
  if (to >= 0)
    s = io.Check(io.nccl().ncclSend(Pointer(send), bytes, ncclUint8, static_cast<int>(to), io.comm(), io.stream()),
                 "ncclSend");
  if (s.ok() && from >= 0)
    s = io.Check(io.nccl().ncclRecv(Pointer(dst), bytes, ncclUint8, static_cast<int>(from), io.comm(), io.stream()),
                 "ncclRecv");
  Status end = io.Check(io.nccl().ncclGroupEnd(), "ncclGroupEnd");
  return s.ok() ? end : s;
}

Status Broadcast(const th::CollectiveBroadcastThunk& t, CudaExecutionContext& ctx, const Issuer& io) {
  for (const th::CollectiveBuffer& b : t.buffers) {
    const CUdeviceptr src = Address(ctx, b.source), dst = Address(ctx, b.destination);
    const size_t bytes = static_cast<size_t>(b.source.size);
    if (io.size() == 1 || bytes == 0) {
      KILN_RETURN_IF_ERROR(io.Copy(dst, src, bytes));
      continue;
    }
    KILN_RETURN_IF_ERROR(io.Check(
        io.nccl().ncclBroadcast(Pointer(src), Pointer(dst), bytes, ncclUint8, 0, io.comm(), io.stream()),
        "ncclBroadcast"));
  }
  return Status::Ok();
}

// Every operand of a collective thunk, to point its sources elsewhere.
std::vector<th::CollectiveBuffer*> MutableBuffersOf(th::Thunk& thunk) {
  std::vector<th::CollectiveBuffer*> out;
  std::visit(
      [&out](auto& body) {
        if constexpr (requires { { body.buffers } -> std::same_as<std::vector<th::CollectiveBuffer>&>; }) {
          for (th::CollectiveBuffer& b : body.buffers) out.push_back(&b);
        } else if constexpr (requires { { body.buffer } -> std::same_as<th::CollectiveBuffer&>; }) {
          out.push_back(&body.buffer);
        }
      },
      thunk.body);
  return out;
}

// Copies the sources of an async start (`moved`, a copy of its thunk) on
// ctx.stream into the snapshot area of `async_id` and points them there:
// at allocation numbers past the program's, bound in
// comm_ctx.allocation_base. A source that is its own destination stays.
Status SnapshotSources(th::Thunk& moved, int64_t async_id, const CudaExecutionContext& ctx,
                       CudaExecutionContext& comm_ctx, CudaCommStream& comm) {
  std::vector<th::CollectiveBuffer*> buffers = MutableBuffersOf(moved);
  auto copied = [](const th::CollectiveBuffer& b) { return b.source.size > 0 && !(b.source == b.destination); };
  size_t total = 0;
  for (const th::CollectiveBuffer* b : buffers)
    if (copied(*b)) total += AlignUp(static_cast<size_t>(b->source.size));
  if (total == 0) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(CUdeviceptr area, comm.SnapshotArea(async_id, total));
  const CudaDriver& d = ctx.backend->driver();
  size_t offset = 0;
  for (th::CollectiveBuffer* b : buffers) {
    if (!copied(*b)) continue;
    const size_t bytes = static_cast<size_t>(b->source.size);
    KILN_RETURN_IF_ERROR(
        d.Check(d.cuMemcpyDtoDAsync(area + offset, Address(ctx, b->source), bytes, ctx.stream), "cuMemcpyDtoDAsync"));
    b->source = th::BufferSlice{static_cast<int32_t>(comm_ctx.allocation_base.size()), 0, b->source.size};
    comm_ctx.allocation_base.push_back(area + offset);
    offset += AlignUp(bytes);
  }
  return Status::Ok();
}

// Issues collective `thunk` through `io` (its stream and communicator).
Status IssueCollective(const th::Thunk& thunk, CudaExecutionContext& ctx, int64_t device, const Issuer& io) {
  switch (thunk.kind()) {
    case th::ThunkKind::kAllReduce: return AllReduce(*thunk.As<th::AllReduceThunk>(), ctx, io);
    case th::ThunkKind::kAllGather: return AllGather(*thunk.As<th::AllGatherThunk>(), ctx, io);
    case th::ThunkKind::kReduceScatter: return ReduceScatter(*thunk.As<th::ReduceScatterThunk>(), ctx, io);
    case th::ThunkKind::kAllToAll: return AllToAll(*thunk.As<th::AllToAllThunk>(), ctx, io);
    case th::ThunkKind::kCollectivePermute:
      return CollectivePermute(*thunk.As<th::CollectivePermuteThunk>(), ctx, device, io);
    case th::ThunkKind::kCollectiveBroadcast: return Broadcast(*thunk.As<th::CollectiveBroadcastThunk>(), ctx, io);
    default: return Error("not a collective: " + std::string(th::ThunkKindName(thunk.kind())));
  }
}

}  // namespace

StatusOr<std::unique_ptr<CudaCollectives>> CudaCollectives::Create(const th::ThunkProgram& program, int64_t device,
                                                                   std::shared_ptr<CollectiveRendezvous> rendezvous,
                                                                   CudaBackend& backend) {
  if (device < 0 || device >= program.device_count())
    return Error("device " + std::to_string(device) + " is outside the program's " +
                 std::to_string(program.device_count()) + " devices");
  std::unique_ptr<CudaCollectives> c(new CudaCollectives(program, device, backend));
  KILN_ASSIGN_OR_RETURN(bool needs_peers, CollectivesNeedPeers(program, rendezvous.get()));
  if (!needs_peers) return c;
  Status refused;
  th::ForEachThunk(program.root, [&](const th::Thunk& t, int) {
    if (const th::CollectiveConfig* config = th::CollectiveConfigOf(t); config && config->async_id) c->has_async_ = true;
    std::optional<th::ReductionKind> kind;
    if (const auto* ar = t.As<th::AllReduceThunk>()) kind = ar->reduction;
    if (const auto* rs = t.As<th::ReduceScatterThunk>()) kind = rs->reduction;
    if (!kind || !refused.ok()) return;
    for (const th::CollectiveBuffer& b : CollectiveBuffersOf(t)) {
      StatusOr<NcclReduction> r = ReductionFor(b.element_type, *kind);
      if (!r.ok()) {
        refused = r.status().WithContext(DescribeCollective(t));
        return;
      }
    }
  });
  KILN_RETURN_IF_ERROR(refused);
  c->snapshot_ids_ = AsyncStartsNeedingSnapshots(program);
  KILN_ASSIGN_OR_RETURN(c->nccl_, backend.Nccl());
  c->load_ = rendezvous->NextLoad(device);
  c->rendezvous_ = std::move(rendezvous);
  return c;
}

CudaCollectives::~CudaCollectives() {
  for (auto& [group, comm] : comms_) nccl_->ncclCommDestroy(comm);
}

StatusOr<ncclComm_t> CudaCollectives::Communicator(const std::vector<int64_t>& group, int64_t rank,
                                                   const std::string& what) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = comms_.find(group);
  if (it != comms_.end()) return it->second;
  const std::string name = GroupName(group);
  const std::string prefix = "nccl/load" + std::to_string(load_) + "/group" + name;
  gloo::rendezvous::Store& store = rendezvous_->store();
  // Every member announces itself and waits for the others first, so a
  // device that never comes is a bounded error naming it (ncclCommInitRank
  // itself would wait for it forever).
  std::vector<std::string> members;
  for (size_t r = 0; r < group.size(); ++r) members.push_back(prefix + "/" + std::to_string(r));
  ncclUniqueId id;
  try {
    if (rank == 0) {
      KILN_RETURN_IF_ERROR(nccl_->Check(nccl_->ncclGetUniqueId(&id), what + ": ncclGetUniqueId"));
      store.set(prefix + "/id", std::vector<char>(id.internal, id.internal + sizeof id.internal));
    }
    store.set(members[static_cast<size_t>(rank)], {1});
    store.wait(members, rendezvous_->timeout());
    std::vector<char> bytes = store.get(prefix + "/id");
    if (bytes.size() != sizeof id.internal) return Error(what + ": malformed NCCL unique id in the rendezvous store");
    std::memcpy(id.internal, bytes.data(), sizeof id.internal);
  } catch (const std::exception& e) {
    std::vector<int64_t> missing;
    for (int64_t r : rendezvous_->UnpublishedRanks(prefix, static_cast<int64_t>(group.size()))) missing.push_back(group[r]);
    if (missing.empty()) return Error(what + " on devices " + name + ": the NCCL rendezvous failed: " + e.what());
    return Error(what + " on devices " + name + ": devices " + IdList(missing) + " did not arrive within " +
                 Seconds(rendezvous_->timeout()));
  }
  ncclComm_t comm = nullptr;
  KILN_RETURN_IF_ERROR(nccl_->Check(
      nccl_->ncclCommInitRank(&comm, static_cast<int>(group.size()), id, static_cast<int>(rank)),
      what + ": ncclCommInitRank on devices " + name));
  comms_[group] = comm;
  return comm;
}

Status CudaCollectives::Run(const th::Thunk& thunk, CudaExecutionContext& ctx) const {
  if (const auto* id = thunk.As<th::DeviceIdThunk>()) {
    const uint32_t value = static_cast<uint32_t>(id->kind == th::DeviceIdKind::kReplica
                                                     ? device_ / program_.num_partitions
                                                     : device_ % program_.num_partitions);
    const CudaDriver& d = ctx.backend->driver();
    return d.Check(d.cuMemsetD32Async(Address(ctx, id->destination), value, 1, ctx.stream), "cuMemsetD32Async");
  }
  if (const auto* done = thunk.As<th::CollectiveDoneThunk>()) {
    // A start issued on the compute stream needs nothing: what follows it
    // on the stream sees its results.
    return ctx.comm ? ctx.comm->Await(done->async_id, ctx.stream) : Status::Ok();
  }
  const th::CollectiveConfig* config = th::CollectiveConfigOf(thunk);
  if (!config) return Error("not a collective: " + std::string(th::ThunkKindName(thunk.kind())));

  std::vector<int64_t> group;
  int64_t rank = 0;
  if (thunk.As<th::CollectivePermuteThunk>()) {
    group.resize(static_cast<size_t>(program_.device_count()));
    std::iota(group.begin(), group.end(), 0);
    rank = device_;
  } else {
    KILN_ASSIGN_OR_RETURN(DeviceGroup g, FindDeviceGroup(config->device_groups, device_));
    group = g.devices;
    rank = g.rank;
  }
  const std::string what = DescribeCollective(thunk);
  ncclComm_t comm = nullptr;
  if (group.size() > 1) {
    if (!nccl_) return Error("internal: a collective without NCCL");
    KILN_ASSIGN_OR_RETURN(comm, Communicator(group, rank, what));
  }
  const int64_t size = static_cast<int64_t>(group.size());
  if (!config->async_id || !ctx.comm || size == 1) {
    return IssueCollective(thunk, ctx, device_, Issuer(ctx, nccl_, comm, size, rank, what));
  }
  // An async start: on the communication stream once the compute stream
  // has made its sources (from copies of them where compute before the
  // done may touch them).
  CudaCommStream& streams = *ctx.comm;
  CudaExecutionContext comm_ctx = ctx;
  comm_ctx.stream = streams.stream();
  comm_ctx.lane = streams.lane();
  const Issuer io(comm_ctx, nccl_, comm, size, rank, what);
  if (!snapshot_ids_.count(*config->async_id)) {
    KILN_RETURN_IF_ERROR(streams.Fork(ctx.stream));
    KILN_RETURN_IF_ERROR(IssueCollective(thunk, comm_ctx, device_, io));
    return streams.Finish(*config->async_id);
  }
  th::Thunk moved{th::ThunkInfo{}, thunk.body};
  KILN_RETURN_IF_ERROR(SnapshotSources(moved, *config->async_id, ctx, comm_ctx, streams));
  KILN_RETURN_IF_ERROR(streams.Fork(ctx.stream));
  KILN_RETURN_IF_ERROR(IssueCollective(moved, comm_ctx, device_, io));
  return streams.Finish(*config->async_id);
}

}  // namespace kiln::runtime
