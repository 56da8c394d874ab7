// The RadixSortThunk on the host: a stable sort of each row in the thunk's
// key order, so an artifact compiled for host and CUDA (whose one program
// carries CUDA's radix sorts) runs on the host too.
//
// Keys become the same order-preserving unsigned bits as the CUDA kernels'
// (kernels_lib/cub_sort), and std::stable_sort orders each row's positions
// by them; keys and payloads are then gathered by position, which keeps
// every bit of a key whose order merges values (-0 and +0, NaNs).
#pragma once

#include <cstdint>

#include "common/status.h"
#include "thunks/thunk.h"

namespace kiln::kernels {

// `values` / `values_out` are null when the thunk has no payload. Outputs
// must not overlap inputs (ValidateProgram checks).
Status HostRadixSort(const thunks::RadixSortThunk& sort, const uint8_t* keys, uint8_t* keys_out,
                     const uint8_t* values, uint8_t* values_out);

}  // namespace kiln::kernels
