// CudaCollectives: the collective, collective-done and device-id thunks of
// one loaded executable on one CUDA device, through NCCL. Internal to the
// runtime; needs the CUDA headers.
//
// Every device group a collective names (global device ids in rank order,
// as the thunks carry them) becomes one NCCL communicator the first time
// the device runs a collective on it: rank 0 of the group makes an
// ncclUniqueId and publishes it in the CollectiveRendezvous' store, the
// others read it, and each calls ncclCommInitRank with its own context
// current. The communicator is kept for the executable's lifetime; a group
// of one device needs none. Collectives are issued on the execution's
// stream, so they are ordered with the kernels around them:
//   all-reduce        ncclAllReduce per operand (pred and/or as u8 min/max,
//                     c64/c128 sums as f32/f64 pairs)
//   all-gather        ncclAllGather, then the blocks interleaved per row
//                     of the dimensions before the gathered one
//   reduce-scatter    each rank's block gathered contiguous, then
//                     ncclReduceScatter
//   all-to-all        grouped ncclSend/ncclRecv of staged blocks
//   collective-permute grouped ncclSend/ncclRecv on the group of every
//                     device (a device receiving nothing gets zeros)
//   collective-broadcast ncclBroadcast from the group's rank 0
//   replica-id, partition-id  a 32-bit memset of the device's id
// Rearrangements use device-to-device copies through the stream's library
// scratch. The start of an async pair between several devices runs on the
// Device stream's communication stream (ctx.comm, cuda_comm_stream.h),
// after the compute stream's work so far (from copies of its sources where
// a thunk before its done may touch them, async_source_hazards.h), and its
// done makes the compute stream wait for it: the thunks between them
// overlap the exchange. Without a communication stream (or in a group of
// one device) the start is issued where it stands and its done is a no-op.
//
// Reductions NCCL lacks (s16, u16, f8 types, products of complex numbers,
// bitwise and/or of integers) are a one-line error at load.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "runtime/collective_rendezvous.h"
#include "runtime/cuda_executor.h"
#include "thunks/program.h"

namespace kiln::runtime {

class CudaCollectives {
 public:
  // `device` of the program's replica_count * num_partitions devices;
  // checks every reduction and loads NCCL when a collective needs peers.
  static StatusOr<std::unique_ptr<CudaCollectives>> Create(const thunks::ThunkProgram& program, int64_t device,
                                                           std::shared_ptr<CollectiveRendezvous> rendezvous,
                                                           CudaBackend& backend);
  // Destroys the communicators (the backend's context must be current).
  ~CudaCollectives();

  // Issues a collective, collective-done or device-id thunk on ctx.stream
  // (an async start on ctx.comm when set).
  Status Run(const thunks::Thunk& thunk, CudaExecutionContext& ctx) const;
  // Whether the program has an async collective between devices, which an
  // execution runs on a communication stream.
  bool UsesCommStream() const { return nccl_ != nullptr && has_async_; }

 private:
  CudaCollectives(const thunks::ThunkProgram& program, int64_t device, CudaBackend& backend)
      : program_(program), device_(device), backend_(backend) {}
  // The communicator of `group` (devices in rank order), created on first
  // use; `what` names the collective in errors.
  StatusOr<ncclComm_t> Communicator(const std::vector<int64_t>& group, int64_t rank, const std::string& what) const;

  const thunks::ThunkProgram& program_;
  int64_t device_;
  CudaBackend& backend_;
  const kernels::NcclLibrary* nccl_ = nullptr;  // null: every group is one device
  std::shared_ptr<CollectiveRendezvous> rendezvous_;
  int64_t load_ = 0;
  bool has_async_ = false;
  std::set<int64_t> snapshot_ids_;  // async starts that copy their sources
  mutable std::mutex mu_;
  mutable std::map<std::vector<int64_t>, ncclComm_t> comms_;
};

}  // namespace kiln::runtime
