// NcclClique: rank matching, the collectives' data movement and the
// reductions of the NCCL double; see nccl_clique.h.
#include "cuda_emulator/libs/nccl_clique.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "common/element_type.h"
#include "common/float_formats.h"

namespace kiln::emu::libs {
namespace {

// The type sums and products of T are computed in: unsigned for integers
// (so they wrap), T itself for floats.
template <typename T, bool = std::is_integral_v<T>>
struct Arithmetic {
  using type = T;
};
template <typename T>
struct Arithmetic<T, true> {
  using type = std::make_unsigned_t<T>;
};

// One step of a reduction on values of T.
template <typename T>
T Combine(ncclRedOp_t op, T a, T b) {
  using U = typename Arithmetic<T>::type;
  switch (op) {
    case ncclSum:
    case ncclAvg: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case ncclProd: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    case ncclMax:
      if constexpr (std::is_floating_point_v<T>)
        if (a != a || b != b) return a != a ? a : b;  // NaN propagates
      return a > b ? a : b;
    case ncclMin:
      if constexpr (std::is_floating_point_v<T>)
        if (a != a || b != b) return a != a ? a : b;
      return a < b ? a : b;
    default: return a;
  }
}

template <typename T>
void ReduceTyped(ncclRedOp_t op, const std::vector<const void*>& inputs, void* out, size_t count) {
  const T* first = static_cast<const T*>(inputs[0]);
  T* o = static_cast<T*>(out);
  const T n = static_cast<T>(inputs.size());
  for (size_t i = 0; i < count; ++i) {
    T acc = first[i];
    for (size_t r = 1; r < inputs.size(); ++r) acc = Combine(op, acc, static_cast<const T*>(inputs[r])[i]);
    if (op == ncclAvg) acc = static_cast<T>(acc / n);
    o[i] = acc;
  }
}

// f16 and bf16: each step combines the exact values and rounds back.
void ReduceNarrow(ElementType type, ncclRedOp_t op, const std::vector<const void*>& inputs, void* out,
                  size_t count) {
  auto load = [type](const void* p, size_t i) {
    return DecodeNarrowFloat(type, static_cast<const uint16_t*>(p)[i]);
  };
  auto round = [type](double v) { return DecodeNarrowFloat(type, EncodeNarrowFloat(type, v)); };
  uint16_t* o = static_cast<uint16_t*>(out);
  for (size_t i = 0; i < count; ++i) {
    double acc = load(inputs[0], i);
    for (size_t r = 1; r < inputs.size(); ++r) acc = round(Combine(op, acc, load(inputs[r], i)));
    if (op == ncclAvg) acc = round(acc / static_cast<double>(inputs.size()));
    o[i] = static_cast<uint16_t>(EncodeNarrowFloat(type, acc));
  }
}

}  // namespace

size_t NcclTypeBytes(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
  }
}

std::string NcclReduce(ncclDataType_t type, ncclRedOp_t op, const std::vector<const void*>& inputs, void* out,
                       size_t count) {
  if (op < ncclSum || op > ncclAvg) return "reduction operation " + std::to_string(static_cast<int>(op)) + " unknown";
  switch (type) {
    case ncclInt8: ReduceTyped<int8_t>(op, inputs, out, count); return "";
    case ncclUint8: ReduceTyped<uint8_t>(op, inputs, out, count); return "";
    case ncclInt32: ReduceTyped<int32_t>(op, inputs, out, count); return "";
    case ncclUint32: ReduceTyped<uint32_t>(op, inputs, out, count); return "";
    case ncclInt64: ReduceTyped<int64_t>(op, inputs, out, count); return "";
    case ncclUint64: ReduceTyped<uint64_t>(op, inputs, out, count); return "";
    case ncclFloat32: ReduceTyped<float>(op, inputs, out, count); return "";
    case ncclFloat64: ReduceTyped<double>(op, inputs, out, count); return "";
    case ncclFloat16: ReduceNarrow(ElementType::kF16, op, inputs, out, count); return "";
    case ncclBfloat16: ReduceNarrow(ElementType::kBF16, op, inputs, out, count); return "";
    default: return "data type " + std::to_string(static_cast<int>(type)) + " has no reductions in the double";
  }
}

std::chrono::milliseconds NcclTimeout() {
  const char* v = std::getenv("KILN_EMU_NCCL_TIMEOUT");
  double seconds = v && *v ? std::atof(v) : 60.0;
  if (!(seconds > 0)) seconds = 60.0;
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

std::string NcclClique::Missing(const std::vector<bool>& arrived) const {
  std::string s;
  for (int r = 0; r < size_; ++r)
    if (!arrived[r]) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

NcclOutcome NcclClique::Join(int rank, int device) {
  std::lock_guard<std::mutex> lock(mu_);
  if (devices_[rank] >= 0) return {ncclInvalidUsage, "rank " + std::to_string(rank) + " joined twice"};
  for (int r = 0; r < size_; ++r) {
    if (devices_[r] == device)
      return {ncclInvalidUsage, "ranks " + std::to_string(r) + " and " + std::to_string(rank) +
                                    " are both on device " + std::to_string(device) + " (duplicate GPU)"};
  }
  devices_[rank] = device;
  ++joined_;
  cv_.notify_all();
  return {};
}

NcclOutcome NcclClique::WaitJoined(int rank) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_until(lock, Deadline(), [&] { return joined_ == size_ || aborted_; })) {
    std::vector<bool> in(size_);
    for (int r = 0; r < size_; ++r) in[r] = devices_[r] >= 0;
    return {ncclRemoteError, "communicator init on rank " + std::to_string(rank) + " of " + std::to_string(size_) +
                                 ": ranks " + Missing(in) + " did not join within " +
                                 std::to_string(timeout_.count() / 1000.0) + " s"};
  }
  if (aborted_) return {ncclRemoteError, "communicator aborted: " + *aborted_};
  return {};
}

uint64_t NcclClique::Deposit(int rank, const NcclCollective& op) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t k = next_round_[rank]++;
  Round& round = rounds_[k];
  if (round.ops.empty()) round.ops.resize(static_cast<size_t>(size_));
  round.ops[rank] = op;
  if (++round.arrived == size_) {
    Compute(round);
    round.done = true;
    cv_.notify_all();
  }
  return k;
}

NcclOutcome NcclClique::WaitRound(int rank, uint64_t k, const char* call) {
  std::unique_lock<std::mutex> lock(mu_);
  Round& round = rounds_[k];
  if (!cv_.wait_until(lock, Deadline(), [&] { return round.done || aborted_; })) {
    std::vector<bool> in(size_);
    for (int r = 0; r < size_; ++r) in[r] = round.ops[r].has_value();
    return {ncclRemoteError, std::string(call) + " on rank " + std::to_string(rank) + " of " +
                                 std::to_string(size_) + ": ranks " + Missing(in) + " did not arrive within " +
                                 std::to_string(timeout_.count() / 1000.0) + " s"};
  }
  if (!round.done) return {ncclRemoteError, std::string(call) + ": communicator aborted: " + *aborted_};
  NcclOutcome outcome = round.outcome;
  // The last rank to collect its outcome forgets the round.
  round.ops[rank].reset();
  if (--round.arrived == 0) rounds_.erase(k);
  return outcome;
}

void NcclClique::Compute(Round& round) {
  const NcclCollective& first = *round.ops[0];
  for (int r = 0; r < size_; ++r) {
    const NcclCollective& o = *round.ops[r];
    round.outcome.start_us = std::max(round.outcome.start_us, o.clock_us);
    if (o.kind != first.kind || o.count != first.count || o.type != first.type || o.op != first.op ||
        o.root != first.root) {
      round.outcome = {ncclInvalidUsage, "rank " + std::to_string(r) +
                                             "'s collective differs from rank 0's (operation, count, type, "
                                             "reduction or root): the ranks called different collectives"};
      return;
    }
  }
  const size_t element = NcclTypeBytes(first.type);
  const size_t n = static_cast<size_t>(size_);
  std::vector<const void*> sends;
  for (int r = 0; r < size_; ++r) sends.push_back(round.ops[r]->send);
  // Results go through a buffer of their own: a rank's recv may be its own
  // (or, in place, part of its) send.
  std::vector<uint8_t> result;
  switch (first.kind) {
    case NcclOpKind::kAllReduce: {
      result.resize(first.count * element);
      round.outcome.detail = NcclReduce(first.type, first.op, sends, result.data(), first.count);
      for (int r = 0; r < size_ && round.outcome.detail.empty(); ++r)
        std::memcpy(round.ops[r]->recv, result.data(), result.size());
      break;
    }
    case NcclOpKind::kReduceScatter: {
      result.resize(first.count * n * element);
      round.outcome.detail = NcclReduce(first.type, first.op, sends, result.data(), first.count * n);
      const size_t block = first.count * element;
      for (int r = 0; r < size_ && round.outcome.detail.empty(); ++r)
        std::memcpy(round.ops[r]->recv, result.data() + r * block, block);
      break;
    }
    case NcclOpKind::kAllGather: {
      const size_t block = first.count * element;
      result.resize(block * n);
      for (int r = 0; r < size_; ++r) std::memcpy(result.data() + r * block, sends[r], block);
      for (int r = 0; r < size_; ++r) std::memcpy(round.ops[r]->recv, result.data(), result.size());
      break;
    }
    case NcclOpKind::kBroadcast: {
      const size_t bytes = first.count * element;
      const uint8_t* root = static_cast<const uint8_t*>(sends[first.root]);
      result.assign(root, root + bytes);
      for (int r = 0; r < size_; ++r) std::memcpy(round.ops[r]->recv, result.data(), bytes);
      break;
    }
  }
  if (!round.outcome.detail.empty()) round.outcome.result = ncclInvalidArgument;
}

NcclClique::SendTicket NcclClique::PostSend(int from, int to, const void* data, size_t bytes) {
  auto send = std::make_shared<NcclSend>();
  send->data = data;
  send->bytes = bytes;
  std::lock_guard<std::mutex> lock(mu_);
  sends_[{from, to}].push_back(send);
  cv_.notify_all();
  return {send};
}

NcclOutcome NcclClique::WaitSend(int from, int to, const SendTicket& ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_until(lock, Deadline(), [&] { return ticket.send->received || aborted_; })) {
    return {ncclRemoteError, "ncclSend from rank " + std::to_string(from) + " to rank " + std::to_string(to) +
                                 ": rank " + std::to_string(to) + " posted no matching ncclRecv within " +
                                 std::to_string(timeout_.count() / 1000.0) + " s"};
  }
  if (!ticket.send->received) return {ncclRemoteError, "ncclSend: communicator aborted: " + *aborted_};
  if (!ticket.send->error.empty()) return {ncclInvalidUsage, ticket.send->error};
  return {};
}

NcclOutcome NcclClique::Receive(int to, int from, void* data, size_t bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  auto& queue = sends_[{from, to}];
  if (!cv_.wait_until(lock, Deadline(), [&] { return !queue.empty() || aborted_; })) {
    return {ncclRemoteError, "ncclRecv on rank " + std::to_string(to) + " from rank " + std::to_string(from) +
                                 ": rank " + std::to_string(from) + " posted no matching ncclSend within " +
                                 std::to_string(timeout_.count() / 1000.0) + " s"};
  }
  if (queue.empty()) return {ncclRemoteError, "ncclRecv: communicator aborted: " + *aborted_};
  std::shared_ptr<NcclSend> send = queue.front();
  queue.pop_front();
  NcclOutcome outcome;
  if (send->bytes != bytes) {
    send->error = "ncclSend of " + std::to_string(send->bytes) + " bytes from rank " + std::to_string(from) +
                  " met an ncclRecv of " + std::to_string(bytes) + " bytes on rank " + std::to_string(to);
    outcome = {ncclInvalidUsage, send->error};
  } else if (bytes) {
    std::memmove(data, send->data, bytes);
  }
  send->received = true;
  cv_.notify_all();
  return outcome;
}

void NcclClique::Abort(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!aborted_) aborted_ = why;
  cv_.notify_all();
}

}  // namespace kiln::emu::libs
