// The NCCL double's communicators: a clique is the set of ranks that share
// one ncclUniqueId (or one ncclCommInitAll), each rank an ncclComm on one
// emulated device. The ranks of a clique live in one process, so the
// double moves data with host copies between the devices' memory (device
// addresses are host addresses, DeviceMemory).
//
// Matching, as NCCL's semantics require:
//   - collectives: every rank's k-th collective on a clique forms round k;
//     the rank whose call completes a round computes it for all ranks (after
//     checking that they agree on the operation, count, type, reduction and
//     root) and wakes the others;
//   - point-to-point: rank a's k-th send to rank b pairs with rank b's k-th
//     receive from rank a; the receive copies and releases the send.
// A rank whose peers do not arrive waits at most the clique's timeout
// (KILN_EMU_NCCL_TIMEOUT seconds, default 60), then fails naming the ranks
// that never came: a real NCCL would hang, which no test may.
//
// Reductions are computed in rank order (((r0 op r1) op r2) ...), each step
// in the element type (f16 and bf16 combined exactly and rounded back to
// their type after every step, integers wrapping), which is the order the
// reference evaluator uses; a real NCCL's ring or tree order differs only
// in floating-point rounding.
#pragma once

#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::emu::libs {

enum class NcclOpKind : uint8_t { kAllReduce, kAllGather, kReduceScatter, kBroadcast };

// One rank's part of a collective.
struct NcclCollective {
  NcclOpKind kind = NcclOpKind::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  // elements: per rank's send for all-gather, per rank's recv for reduce-scatter
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;
  double clock_us = 0;  // the rank's stream clock when it called
};

// The outcome of a wait: ncclSuccess, or an error with its one-line detail.
struct NcclOutcome {
  ncclResult_t result = ncclSuccess;
  std::string detail;
  double start_us = 0;  // a round: the latest of its ranks' stream clocks
};

class NcclClique {
 public:
  NcclClique(int size, std::chrono::milliseconds timeout) : size_(size), timeout_(timeout), devices_(size, -1) {}
  int size() const { return size_; }

  // Rank `rank` on `device` joins; WaitJoined blocks until every rank has
  // (an error names the missing ranks, or a device two ranks share).
  NcclOutcome Join(int rank, int device);
  NcclOutcome WaitJoined(int rank);
  int device_of(int rank) const { return devices_[rank]; }

  // Deposits `rank`'s next collective; the deposit that completes its round
  // computes it. Returns the round's number for Wait.
  uint64_t Deposit(int rank, const NcclCollective& op);
  NcclOutcome WaitRound(int rank, uint64_t round, const char* call);

  // Point-to-point: a send waits until its receive has copied it.
  struct SendTicket {
    std::shared_ptr<struct NcclSend> send;
  };
  SendTicket PostSend(int from, int to, const void* data, size_t bytes);
  NcclOutcome WaitSend(int from, int to, const SendTicket& ticket);
  NcclOutcome Receive(int to, int from, void* data, size_t bytes);

  // Fails everything pending and every later wait (ncclCommAbort).
  void Abort(const std::string& why);

 private:
  struct Round {
    std::vector<std::optional<NcclCollective>> ops;
    int arrived = 0;
    bool done = false;
    NcclOutcome outcome;
  };
  void Compute(Round& round);  // under mu_
  // The ranks that have not reached `round` (by their deposits).
  std::string Missing(const std::vector<bool>& arrived) const;
  std::chrono::steady_clock::time_point Deadline() const { return std::chrono::steady_clock::now() + timeout_; }

  const int size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> devices_;
  int joined_ = 0;
  std::map<uint64_t, Round> rounds_;
  std::vector<uint64_t> next_round_ = std::vector<uint64_t>(static_cast<size_t>(size_), 0);
  std::map<std::pair<int, int>, std::deque<std::shared_ptr<struct NcclSend>>> sends_;  // (from, to)
  std::optional<std::string> aborted_;
};

struct NcclSend {
  const void* data = nullptr;
  size_t bytes = 0;
  bool received = false;
  std::string error;  // set when the receive refused it
};

// Bytes of one element of `type`, 0 for a type the double does not know.
size_t NcclTypeBytes(ncclDataType_t type);
// out[i] = reduction of the `n` rank inputs' element i, in rank order;
// "" or the error (an op the type has no reduction for).
std::string NcclReduce(ncclDataType_t type, ncclRedOp_t op, const std::vector<const void*>& inputs, void* out,
                       size_t count);
// The timeout KILN_EMU_NCCL_TIMEOUT asks for (default 60 s).
std::chrono::milliseconds NcclTimeout();

}  // namespace kiln::emu::libs
