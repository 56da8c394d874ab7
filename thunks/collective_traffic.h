// CollectiveTraffic: what one execution of a collective thunk moves, in the
// terms nccl-tests reports bandwidth in, so the per-HLO profile can show a
// collective's algorithm and bus bandwidth next to its time.
//
// nccl-tests' "size" of an operation and its bus factor, for n devices in
// the group:
//   all-reduce      each device's buffer              2 (n - 1) / n
//   all-gather      the gathered result               (n - 1) / n
//   reduce-scatter  the whole input                   (n - 1) / n
//   all-to-all      each device's whole send buffer   (n - 1) / n
//   permute, broadcast  the buffer                    1
// algbw = bytes / time; busbw = algbw * factor: the rate each device's link
// carries, comparable across group sizes and with the link's peak. A thunk
// with several buffers (a tuple operand) moves their sum.
#pragma once

#include <cstdint>
#include <optional>

#include "thunks/thunk.h"

namespace kiln::thunks {

struct CollectiveTraffic {
  int64_t bytes = 0;        // nccl-tests' size, per execution
  int64_t devices = 1;      // the group's size
  double bus_factor = 0;    // busbw / algbw

  // Bandwidths in GB/s (1e9 bytes per second) over `seconds` per execution;
  // 0 without a time.
  double AlgorithmGBps(double seconds) const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
  double BusGBps(double seconds) const { return AlgorithmGBps(seconds) * bus_factor; }
};

// The traffic of a collective thunk; nullopt for other thunks and for the
// start of an async collective (its time is only the issue; the exchange
// runs on until its done thunk).
std::optional<CollectiveTraffic> CollectiveTrafficOf(const Thunk& thunk);

}  // namespace kiln::thunks
