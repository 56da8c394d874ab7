// Block sampling; see block_sample.h.
#include "cuda_emulator/exec/block_sample.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace kiln::emu {

StatusOr<uint32_t> SampleBlocksFromEnvironment() {
  const char* v = std::getenv("KILN_EMU_SAMPLE");
  if (!v || !*v) return uint32_t{0};
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n == 0 || n > UINT32_MAX) {
    return Error(std::string("KILN_EMU_SAMPLE: expected a positive number of blocks per launch, got '") + v + "'");
  }
  return static_cast<uint32_t>(n);
}

uint64_t SampledBlock(uint64_t i, uint64_t sampled, uint64_t total) {
  if (sampled <= 1) return 0;
  unsigned __int128 span = static_cast<unsigned __int128>(i) * (total - 1);
  return static_cast<uint64_t>((span + (sampled - 1) / 2) / (sampled - 1));
}

void ExtrapolateSample(KilnEmuCounters* c, const std::vector<SectorFootprint>& footprints, uint64_t sampled,
                       uint64_t total) {
  const double scale = static_cast<double>(total) / static_cast<double>(sampled);
  auto grow = [&](uint64_t& n) { n = static_cast<uint64_t>(std::llround(static_cast<double>(n) * scale)); };
  for (uint64_t& n : c->warp_instructions) grow(n);
  for (uint64_t* n : {&c->thread_instructions, &c->integer64_instructions, &c->param_loads, &c->global_load_requests,
                      &c->global_load_sectors, &c->global_store_requests, &c->global_store_sectors,
                      &c->global_load_bytes, &c->global_store_bytes, &c->global_load_l1_hit_sectors,
                      &c->shared_load_requests, &c->shared_store_requests, &c->shared_wavefronts,
                      &c->shared_bank_conflicts, &c->local_requests, &c->barriers, &c->atomics,
                      &c->atomic_lanes, &c->global_atomic_lanes}) {
    grow(*n);
  }
  c->global_unique_load_sectors = c->global_unique_store_sectors = c->global_unique_atomic_sectors = 0;
  for (const SectorFootprint& f : footprints) {
    auto unique = [&](const SectorFootprint::Touched& t) {
      uint64_t cap = sampled >= 2 ? t.span : f.allocation_sectors;
      return std::min<uint64_t>(static_cast<uint64_t>(std::llround(static_cast<double>(t.sectors) * scale)), cap);
    };
    c->global_unique_load_sectors += unique(f.load);
    c->global_unique_store_sectors += unique(f.store);
    c->global_unique_atomic_sectors += unique(f.atomic);
  }
  c->sampled_launches = 1;
}

}  // namespace kiln::emu
