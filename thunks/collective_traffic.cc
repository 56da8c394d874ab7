// Bytes and bus factors of collective thunks (see collective_traffic.h).
#include "thunks/collective_traffic.h"

#include <set>
#include <utility>
#include <vector>

namespace kiln::thunks {
namespace {

int64_t SourceBytes(const std::vector<CollectiveBuffer>& buffers) {
  int64_t bytes = 0;
  for (const CollectiveBuffer& b : buffers) bytes += b.source.size;
  return bytes;
}

// Every group of a collective has the same size (HLO requires it).
int64_t GroupSize(const CollectiveConfig& config) {
  return config.device_groups.empty() ? 1 : static_cast<int64_t>(config.device_groups.front().size());
}

// The devices a permute's pairs name.
int64_t PairedDevices(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  std::set<int64_t> devices;
  for (const auto& [source, target] : pairs) devices.insert({source, target});
  return static_cast<int64_t>(devices.size());
}

}  // namespace

std::optional<CollectiveTraffic> CollectiveTrafficOf(const Thunk& thunk) {
  const CollectiveConfig* config = CollectiveConfigOf(thunk);
  if (!config || config->async_id) return std::nullopt;
  CollectiveTraffic t;
  t.devices = GroupSize(*config);
  const double n = static_cast<double>(t.devices);
  const double ring = (n - 1) / n;  // the share of the data that leaves a device
  if (const auto* ar = thunk.As<AllReduceThunk>()) {
    t.bytes = SourceBytes(ar->buffers);
    t.bus_factor = 2 * ring;
  } else if (const auto* ag = thunk.As<AllGatherThunk>()) {
    t.bytes = SourceBytes(ag->buffers) * t.devices;
    t.bus_factor = ring;
  } else if (const auto* rs = thunk.As<ReduceScatterThunk>()) {
    t.bytes = SourceBytes(rs->buffers);
    t.bus_factor = ring;
  } else if (const auto* a2a = thunk.As<AllToAllThunk>()) {
    t.bytes = SourceBytes(a2a->buffers);
    t.bus_factor = ring;
  } else if (const auto* cp = thunk.As<CollectivePermuteThunk>()) {
    t.bytes = cp->buffer.source.size;
    t.devices = PairedDevices(cp->device_pairs);
    t.bus_factor = 1;
  } else if (const auto* bc = thunk.As<CollectiveBroadcastThunk>()) {
    t.bytes = SourceBytes(bc->buffers);
    t.bus_factor = 1;
  } else {
    return std::nullopt;
  }
  return t;
}

}  // namespace kiln::thunks
