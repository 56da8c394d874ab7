// Runs RadixSortThunks on CUDA with kiln's radix sort kernels
// (kernels_lib/cub_sort/radix_sort_kernels.cu, loaded once per backend from
// the PTX embedded at build time): one block per row for rows of up to 4096
// keys, else 8-bit LSD passes (histogram, scan, scatter) through the
// backend's per-stream library scratch. Internal to the runtime.
#pragma once

#include <set>
#include <string>

#include "runtime/cuda_executor.h"

namespace kiln::runtime {

// The kernel names of the radix sort image (all are resolved at load).
std::set<std::string> RadixSortKernelNames();

Status RunRadixSort(const thunks::RadixSortThunk& sort, CudaExecutionContext& ctx);

}  // namespace kiln::runtime
