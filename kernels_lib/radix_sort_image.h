// The PTX of kiln's radix sort kernels (kernels_lib/cub_sort/
// radix_sort_kernels.cu), compiled by nvcc from CUB's block-level
// primitives when the library was built, for the CUDA runtime to load with
// cuModuleLoadData (runtime/cuda_radix_sort.cc). Empty when the build had
// no nvcc: the compiler then keeps sorts as kernel-IR kernels
// (RadixSortKernelsAvailable() is false).
#pragma once

#include <string_view>

namespace kiln::kernels {

std::string_view RadixSortPtx();

inline bool RadixSortKernelsAvailable() { return !RadixSortPtx().empty(); }

}  // namespace kiln::kernels
