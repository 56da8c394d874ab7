// What the host (Gloo) and CUDA (NCCL) collectives share: how errors name
// collectives, devices and times ("all-reduce 'ar.1' on devices
// {0,1,2,3}: devices 2, 3 did not arrive within 2 s"), the operands of a
// collective thunk, and whether a program's collectives need peers (and so
// a rendezvous).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "runtime/collective_rendezvous.h"
#include "thunks/program.h"

namespace kiln::runtime {

// "all-reduce 'ar.1'".
inline std::string DescribeCollective(const thunks::Thunk& thunk) {
  return std::string(thunks::ThunkKindName(thunk.kind())) + " '" + thunk.info.profile_name + "'";
}

// The operands of a collective thunk with a list of them (none for the
// others: collective-permute has one, CollectivePermuteThunk::buffer).
inline const std::vector<thunks::CollectiveBuffer>& CollectiveBuffersOf(const thunks::Thunk& thunk) {
  static const std::vector<thunks::CollectiveBuffer> kNone;
  return *std::visit(
      [](const auto& body) -> const std::vector<thunks::CollectiveBuffer>* {
        if constexpr (requires { body.buffers; }) return &body.buffers;
        return &kNone;
      },
      thunk.body);
}

// "2, 3".
inline std::string IdList(const std::vector<int64_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s;
}

// "{0,1,2,3}".
inline std::string GroupName(const std::vector<int64_t>& devices) {
  std::string s = "{";
  for (size_t i = 0; i < devices.size(); ++i) s += (i ? "," : "") + std::to_string(devices[i]);
  return s + "}";
}

// "2 s", or "1500 ms".
inline std::string Seconds(std::chrono::milliseconds t) {
  const int64_t ms = t.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

// Whether a collective of `program` exchanges data between devices; if so,
// that `rendezvous` is there and has the program's devices (else the
// one-line error saying how to load it).
inline StatusOr<bool> CollectivesNeedPeers(const thunks::ThunkProgram& program,
                                           const CollectiveRendezvous* rendezvous) {
  bool needs_peers = false;
  thunks::ForEachThunk(program.root, [&](const thunks::Thunk& t, int) {
    if (!thunks::IsCollective(t.kind())) return;
    if (const auto* p = t.As<thunks::CollectivePermuteThunk>()) needs_peers |= !p->device_pairs.empty();
    for (const auto& g : thunks::CollectiveConfigOf(t)->device_groups) needs_peers |= g.size() > 1;
  });
  if (!needs_peers || program.device_count() <= 1) return false;
  if (!rendezvous)
    return Error("the program's collectives run on " + std::to_string(program.device_count()) + " devices (" +
                 std::to_string(program.replica_count) + " replicas x " + std::to_string(program.num_partitions) +
                 " partitions): load it once per device with a collective rendezvous (bef-run --num_devices=" +
                 std::to_string(program.device_count()) + ")");
  if (rendezvous->num_devices() != program.device_count())
    return Error("the program runs on " + std::to_string(program.device_count()) + " devices but the rendezvous has " +
                 std::to_string(rendezvous->num_devices()));
  return true;
}

}  // namespace kiln::runtime
