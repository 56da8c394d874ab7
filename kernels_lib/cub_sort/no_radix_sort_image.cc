// RadixSortPtx() of a build without nvcc: no radix sort kernels.
#include "kernels_lib/radix_sort_image.h"

namespace kiln::kernels {

std::string_view RadixSortPtx() { return {}; }

}  // namespace kiln::kernels
