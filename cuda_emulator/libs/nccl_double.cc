// The NCCL double: the NCCL entry points kiln calls (unique ids,
// communicators by rank or all at once, groups, all-reduce, all-gather,
// reduce-scatter, broadcast, send/recv, errors), performing the
// collectives across the emulator's devices in one process (nccl_clique.h
// matches the ranks and moves the data).
//
// What makes it a faithful double is everything around the data movement:
//   - arguments are checked as NCCL documents (null communicator or
//     pointers, unknown types and reductions, a root or peer outside the
//     communicator, a stream that is not live: ncclInvalidArgument);
//   - every buffer must lie in a live device allocation of the
//     communicator's own device (memcheck; with initcheck, what is sent must
//     have been written), else the call is reported and the context made
//     sticky-failed like a kernel's illegal address (ncclUnhandledCudaError);
//   - group semantics: calls between ncclGroupStart and ncclGroupEnd are
//     only recorded and run at the outermost ncclGroupEnd, so one thread may
//     drive every rank of a communicator made by ncclCommInitAll, and grouped
//     sends and receives never deadlock (all sends are posted first);
//   - a rank whose peers never arrive fails after a timeout naming them
//     (ncclRemoteError, also ncclCommGetAsyncError's answer), never hangs.
// Streams execute work when it is issued (the emulator's stream model), so
// a call returns when its data has moved. Its modeled time (the H100
// timing model's NVLink 4 figures, not measured) starts when the last rank
// arrives (each rank's stream clock moves to the latest of theirs) and
// lasts the collective's bus bytes, as nccl-tests defines them, at
// kNvlinkBusBytesPerSecond plus a latency per ring step.
#include <nccl.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "cuda_emulator/driver/driver_errors.h"
#include "cuda_emulator/driver/emulated_device.h"
#include "cuda_emulator/driver/exports.h"
#include "cuda_emulator/libs/nccl_clique.h"

// The communicator: one rank of a clique; ncclComm_t points at it.
struct ncclComm {
  std::shared_ptr<kiln::emu::libs::NcclClique> clique;
  int rank = 0;
  int device = 0;
  std::atomic<int> async_error{ncclSuccess};
};

namespace {

using kiln::emu::driver::EmulatedDevice;
using kiln::emu::driver::StreamTimeline;
using namespace kiln::emu::libs;

// NVLink 4 on an H100 SXM: 18 links of 25 GB/s per direction, 450 GB/s of
// bus bandwidth per direction through the NVSwitches; and a modeled
// latency per ring step (a launch plus one hop), so small messages cost
// their steps.
constexpr double kNvlinkBusBytesPerSecond = 450e9;
constexpr double kLaunchSeconds = 4e-6;
constexpr double kStepSeconds = 1e-6;

EmulatedDevice& Device() { return EmulatedDevice::Get(); }

ncclResult_t Reject(ncclResult_t result, std::string detail) {
  kiln::emu::driver::SetErrorDetail(std::move(detail));
  return result;
}

// One recorded call of a group.
struct PendingCall {
  enum class Kind : uint8_t { kCollective, kSend, kRecv, kJoin } kind = Kind::kCollective;
  ncclComm* comm = nullptr;
  NcclCollective collective;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t bytes = 0;  // point-to-point
  int peer = 0;
  std::shared_ptr<StreamTimeline> stream;
  const char* call = "";
  double bus_bytes = 0;
  int steps = 1;
};

thread_local int t_group_depth = 0;
thread_local std::vector<PendingCall> t_pending;
thread_local ncclResult_t t_group_error = ncclSuccess;
thread_local std::string t_group_detail;

// Modeled seconds of a call moving `bus_bytes` in `steps` ring steps.
double ModelSeconds(double bus_bytes, int steps) {
  return kLaunchSeconds + steps * kStepSeconds + bus_bytes / kNvlinkBusBytesPerSecond;
}

// Checks [address, address + bytes) against the device's ledger: a live
// device allocation of `device`; reads must have been written under
// initcheck, writes are marked written. Returns the fault, or "".
std::string CheckBuffer(const char* call, const char* name, const void* pointer, size_t bytes, int device,
                        bool written) {
  if (bytes == 0) return "";
  const uint64_t address = reinterpret_cast<uint64_t>(pointer);
  kiln::emu::DeviceMemory& memory = Device().memory();
  auto lock = memory.ReadLock();
  kiln::emu::Allocation* a = address + bytes >= address ? memory.Find(address, bytes) : nullptr;
  const std::string what = std::string(written ? "invalid write of " : "invalid read of ") + name + " by " + call;
  if (!a) return what + ": " + memory.Describe(address, bytes);
  if (a->kind != kiln::emu::MemoryKind::kDevice) return what + ": pinned host memory, not device memory";
  if (a->device != device)
    return what + ": the buffer is device " + std::to_string(a->device) + "'s memory, the communicator's rank is on device " +
           std::to_string(device);
  if (written) {
    a->MarkInitialized(address, bytes);
  } else if (Device().checks().uninitialized) {
    int64_t bad = a->FirstUninitialized(address, bytes);
    if (bad >= 0)
      return std::string("uninitialized read of ") + name + " by " + call + ": byte " +
             memory.Describe(static_cast<uint64_t>(bad), 1) + " was never written";
  }
  return "";
}

// The common preamble of a data call: a live context, a communicator, the
// stream's timeline and no injected fault. Null with *result set otherwise.
std::shared_ptr<StreamTimeline> Enter(const char* call, ncclComm* comm, cudaStream_t stream, ncclResult_t* result) {
  *result = ncclInvalidArgument;
  if (Device().EnterContext() != CUDA_SUCCESS) {
    *result = ncclUnhandledCudaError;  // detail set
    return nullptr;
  }
  if (!comm) return Reject(ncclInvalidArgument, std::string(call) + ": null communicator"), nullptr;
  std::shared_ptr<StreamTimeline> timeline = Device().timeline().Find(reinterpret_cast<CUstream>(stream));
  if (!timeline) return Reject(ncclInvalidArgument, std::string(call) + ": the stream is not live"), nullptr;
  if (std::string injected = Device().faults().Take(kiln::emu::driver::FaultKind::kLibrary, call);
      !injected.empty()) {
    *result = Reject(ncclInternalError, std::move(injected));
    return nullptr;
  }
  *result = ncclSuccess;
  return timeline;
}

// A memcheck fault: reported and sticky, as a kernel's.
ncclResult_t Fault(const std::string& message) {
  Device().FailLaunch(message);
  return ncclUnhandledCudaError;
}

// Runs `calls` (one call, or a whole group): joins and collectives are
// deposited and sends posted before any receive waits, then everything is
// waited for. Returns the first failure.
ncclResult_t RunCalls(std::vector<PendingCall>& calls) {
  NcclOutcome first;
  auto note = [&first](ncclComm* comm, const NcclOutcome& o) {
    if (o.result == ncclSuccess) return;
    if (comm) comm->async_error.store(o.result);
    if (first.result == ncclSuccess) first = o;
  };
  std::vector<uint64_t> rounds(calls.size());
  std::vector<NcclClique::SendTicket> tickets(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    PendingCall& c = calls[i];
    if (c.kind == PendingCall::Kind::kCollective) {
      c.collective.clock_us = c.stream->clock_us();
      rounds[i] = c.comm->clique->Deposit(c.comm->rank, c.collective);
    } else if (c.kind == PendingCall::Kind::kSend) {
      tickets[i] = c.comm->clique->PostSend(c.comm->rank, c.peer, c.send, c.bytes);
    }
  }
  for (PendingCall& c : calls) {
    if (c.kind == PendingCall::Kind::kRecv) note(c.comm, c.comm->clique->Receive(c.comm->rank, c.peer, c.recv, c.bytes));
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    PendingCall& c = calls[i];
    NcclOutcome o;
    switch (c.kind) {
      case PendingCall::Kind::kJoin: o = c.comm->clique->WaitJoined(c.comm->rank); break;
      case PendingCall::Kind::kCollective:
        o = c.comm->clique->WaitRound(c.comm->rank, rounds[i], c.call);
        c.stream->AdvanceTo(o.start_us);
        break;
      case PendingCall::Kind::kSend: o = c.comm->clique->WaitSend(c.comm->rank, c.peer, tickets[i]); break;
      case PendingCall::Kind::kRecv: break;
    }
    note(c.comm, o);
    if (c.stream && o.result == ncclSuccess) {
      const double seconds = ModelSeconds(c.bus_bytes, c.steps);
      c.stream->AddLibraryCall(seconds, seconds - c.steps * kStepSeconds);
    }
  }
  if (first.result != ncclSuccess) return Reject(first.result, first.detail);
  return ncclSuccess;
}

// Runs `call` now, or records it when a group is open.
ncclResult_t Issue(PendingCall call) {
  if (t_group_depth > 0) {
    t_pending.push_back(std::move(call));
    return ncclSuccess;
  }
  std::vector<PendingCall> calls{std::move(call)};
  return RunCalls(calls);
}

// A collective's checks, then Issue. `send_bytes` and `recv_bytes` are the
// buffers' sizes on this rank.
ncclResult_t Collective(const char* call, NcclCollective op, size_t send_bytes, size_t recv_bytes, double bus_bytes,
                        int steps, ncclComm* comm, cudaStream_t stream) {
  ncclResult_t result;
  std::shared_ptr<StreamTimeline> timeline = Enter(call, comm, stream, &result);
  if (!timeline) return result;
  if (NcclTypeBytes(op.type) == 0)
    return Reject(ncclInvalidArgument, std::string(call) + ": unknown data type " + std::to_string(op.type));
  if (op.op < ncclSum || op.op > ncclAvg)
    return Reject(ncclInvalidArgument, std::string(call) + ": unknown reduction " + std::to_string(op.op));
  if (op.root < 0 || op.root >= comm->clique->size())
    return Reject(ncclInvalidArgument, std::string(call) + ": root " + std::to_string(op.root) + " outside the " +
                                           std::to_string(comm->clique->size()) + " ranks");
  if (op.count > 0 && (!op.send || !op.recv))
    return Reject(ncclInvalidArgument, std::string(call) + ": null buffer");
  const bool sends = op.kind != NcclOpKind::kBroadcast || op.root == comm->rank;
  if (sends) {
    if (std::string f = CheckBuffer(call, "sendbuff", op.send, send_bytes, comm->device, false); !f.empty())
      return Fault(f);
  }
  if (std::string f = CheckBuffer(call, "recvbuff", op.recv, recv_bytes, comm->device, true); !f.empty())
    return Fault(f);
  PendingCall c;
  c.kind = PendingCall::Kind::kCollective;
  c.comm = comm;
  c.collective = op;
  c.stream = std::move(timeline);
  c.call = call;
  c.bus_bytes = bus_bytes;
  c.steps = steps;
  return Issue(std::move(c));
}

ncclResult_t PointToPoint(const char* call, bool is_send, const void* send, void* recv, size_t count,
                          ncclDataType_t type, int peer, ncclComm* comm, cudaStream_t stream) {
  ncclResult_t result;
  std::shared_ptr<StreamTimeline> timeline = Enter(call, comm, stream, &result);
  if (!timeline) return result;
  const size_t element = NcclTypeBytes(type);
  if (element == 0) return Reject(ncclInvalidArgument, std::string(call) + ": unknown data type " + std::to_string(type));
  if (peer < 0 || peer >= comm->clique->size())
    return Reject(ncclInvalidArgument, std::string(call) + ": peer " + std::to_string(peer) + " outside the " +
                                           std::to_string(comm->clique->size()) + " ranks");
  const size_t bytes = count * element;
  if (bytes > 0 && !(is_send ? send : recv)) return Reject(ncclInvalidArgument, std::string(call) + ": null buffer");
  if (std::string f = CheckBuffer(call, is_send ? "sendbuff" : "recvbuff", is_send ? send : recv, bytes,
                                  comm->device, !is_send);
      !f.empty())
    return Fault(f);
  PendingCall c;
  c.kind = is_send ? PendingCall::Kind::kSend : PendingCall::Kind::kRecv;
  c.comm = comm;
  c.send = send;
  c.recv = recv;
  c.bytes = bytes;
  c.peer = peer;
  c.stream = std::move(timeline);
  c.call = call;
  c.bus_bytes = static_cast<double>(bytes);
  return Issue(std::move(c));
}

// Unique ids name cliques: "kilnnccl" and a number.
std::mutex g_registry_mu;
std::map<uint64_t, std::shared_ptr<NcclClique>> g_registry;
constexpr char kIdMagic[8] = {'k', 'i', 'l', 'n', 'n', 'c', 'c', 'l'};

ncclResult_t JoinClique(ncclComm_t* out, const std::shared_ptr<NcclClique>& clique, int rank, int device,
                        bool wait) {
  NcclOutcome joined = clique->Join(rank, device);
  if (joined.result != ncclSuccess) return Reject(joined.result, "ncclCommInitRank: " + joined.detail);
  auto* comm = new ncclComm();
  comm->clique = clique;
  comm->rank = rank;
  comm->device = device;
  Device().CountLibraryHandles(1);
  *out = comm;
  if (!wait) return ncclSuccess;
  PendingCall c;
  c.kind = PendingCall::Kind::kJoin;
  c.comm = comm;
  return Issue(std::move(c));
}

}  // namespace

extern "C" {

KILN_EMU_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (!version) return Reject(ncclInvalidArgument, "ncclGetVersion: null pointer");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

KILN_EMU_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (!id) return Reject(ncclInvalidArgument, "ncclGetUniqueId: null pointer");
  static std::atomic<uint64_t> next{std::random_device{}() | 1};
  const uint64_t n = next.fetch_add(1);
  std::memset(id->internal, 0, sizeof id->internal);
  std::memcpy(id->internal, kIdMagic, sizeof kIdMagic);
  std::memcpy(id->internal + sizeof kIdMagic, &n, sizeof n);
  return ncclSuccess;
}

KILN_EMU_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  if (Device().EnterContext() != CUDA_SUCCESS) return ncclUnhandledCudaError;
  if (!comm) return Reject(ncclInvalidArgument, "ncclCommInitRank: null communicator pointer");
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return Reject(ncclInvalidArgument, "ncclCommInitRank: rank " + std::to_string(rank) + " of " +
                                           std::to_string(nranks) + " ranks");
  if (std::memcmp(id.internal, kIdMagic, sizeof kIdMagic) != 0)
    return Reject(ncclInvalidArgument, "ncclCommInitRank: not an id from ncclGetUniqueId");
  uint64_t key;
  std::memcpy(&key, id.internal + sizeof kIdMagic, sizeof key);
  std::shared_ptr<NcclClique> clique;
  {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    std::shared_ptr<NcclClique>& slot = g_registry[key];
    if (!slot) slot = std::make_shared<NcclClique>(nranks, NcclTimeout());
    clique = slot;
  }
  if (clique->size() != nranks)
    return Reject(ncclInvalidUsage, "ncclCommInitRank: " + std::to_string(nranks) + " ranks, but the id's other ranks said " +
                                        std::to_string(clique->size()));
  return JoinClique(comm, clique, rank, Device().current_device(), /*wait=*/true);
}

KILN_EMU_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                                    ncclConfig_t* config) {
  // Blocking initialization only; the config's other fields tune
  // transports the double does not have.
  if (config && config->blocking == 0)
    return Reject(ncclInvalidArgument, "ncclCommInitRankConfig: non-blocking communicators are not emulated");
  return ncclCommInitRank(comm, nranks, id, rank);
}

KILN_EMU_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (Device().EnterDriver() != CUDA_SUCCESS) return ncclUnhandledCudaError;
  if (!comms || ndev < 1) return Reject(ncclInvalidArgument, "ncclCommInitAll: null array or no devices");
  for (int r = 0; r < ndev; ++r) {
    const int device = devlist ? devlist[r] : r;
    if (device < 0 || device >= Device().device_count())
      return Reject(ncclInvalidArgument, "ncclCommInitAll: device " + std::to_string(device) + " (the emulator has " +
                                             std::to_string(Device().device_count()) + ")");
  }
  auto clique = std::make_shared<NcclClique>(ndev, NcclTimeout());
  for (int r = 0; r < ndev; ++r) {
    if (ncclResult_t s = JoinClique(&comms[r], clique, r, devlist ? devlist[r] : r, /*wait=*/false); s != ncclSuccess) {
      for (int q = 0; q < r; ++q) {
        delete comms[q];
        Device().CountLibraryHandles(-1);
      }
      return s;
    }
  }
  return ncclSuccess;
}

KILN_EMU_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  delete comm;
  Device().CountLibraryHandles(-1);
  return ncclSuccess;
}

KILN_EMU_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return comm ? ncclSuccess : Reject(ncclInvalidArgument, "ncclCommFinalize: null communicator");
}

KILN_EMU_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  comm->clique->Abort("rank " + std::to_string(comm->rank) + " called ncclCommAbort");
  return ncclCommDestroy(comm);
}

KILN_EMU_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

KILN_EMU_EXPORT const char* ncclGetLastError(ncclComm_t) {
  return kiln::emu::driver::ErrorDetail().c_str();
}

KILN_EMU_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  if (!comm || !error) return Reject(ncclInvalidArgument, "ncclCommGetAsyncError: null argument");
  *error = static_cast<ncclResult_t>(comm->async_error.load());
  return ncclSuccess;
}

KILN_EMU_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (!comm || !count) return Reject(ncclInvalidArgument, "ncclCommCount: null argument");
  *count = comm->clique->size();
  return ncclSuccess;
}

KILN_EMU_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (!comm || !device) return Reject(ncclInvalidArgument, "ncclCommCuDevice: null argument");
  *device = comm->device;
  return ncclSuccess;
}

KILN_EMU_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (!comm || !rank) return Reject(ncclInvalidArgument, "ncclCommUserRank: null argument");
  *rank = comm->rank;
  return ncclSuccess;
}

KILN_EMU_EXPORT ncclResult_t ncclGroupStart() {
  if (t_group_depth++ == 0) {
    t_pending.clear();
    t_group_error = ncclSuccess;
  }
  return ncclSuccess;
}

KILN_EMU_EXPORT ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return Reject(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--t_group_depth > 0) return ncclSuccess;
  std::vector<PendingCall> calls;
  calls.swap(t_pending);
  return RunCalls(calls);
}

KILN_EMU_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  const int n = comm ? comm->clique->size() : 1;
  const size_t bytes = count * NcclTypeBytes(datatype);
  return Collective("ncclAllReduce", {NcclOpKind::kAllReduce, sendbuff, recvbuff, count, datatype, op, 0}, bytes,
                    bytes, 2.0 * (n - 1) / n * static_cast<double>(bytes), 2 * (n - 1), comm, stream);
}

KILN_EMU_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  const int n = comm ? comm->clique->size() : 1;
  const size_t bytes = sendcount * NcclTypeBytes(datatype);
  return Collective("ncclAllGather", {NcclOpKind::kAllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0},
                    bytes, bytes * n, static_cast<double>(n - 1) * static_cast<double>(bytes), n - 1, comm, stream);
}

KILN_EMU_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                               cudaStream_t stream) {
  const int n = comm ? comm->clique->size() : 1;
  const size_t bytes = recvcount * NcclTypeBytes(datatype);
  return Collective("ncclReduceScatter",
                    {NcclOpKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0}, bytes * n, bytes,
                    static_cast<double>(n - 1) * static_cast<double>(bytes), n - 1, comm, stream);
}

KILN_EMU_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                           int root, ncclComm_t comm, cudaStream_t stream) {
  const int n = comm ? comm->clique->size() : 1;
  const size_t bytes = count * NcclTypeBytes(datatype);
  return Collective("ncclBroadcast", {NcclOpKind::kBroadcast, sendbuff, recvbuff, count, datatype, ncclSum, root},
                    bytes, bytes, static_cast<double>(bytes), n - 1, comm, stream);
}

KILN_EMU_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                                      ncclComm_t comm, cudaStream_t stream) {
  return PointToPoint("ncclSend", true, sendbuff, nullptr, count, datatype, peer, comm, stream);
}

KILN_EMU_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                                      cudaStream_t stream) {
  return PointToPoint("ncclRecv", false, nullptr, recvbuff, count, datatype, peer, comm, stream);
}

}  // extern "C"
