// CreateCudaBackend for builds without the CUDA headers (no
// /usr/local/cuda/include/cuda.h at configure time): the CUDA backend is
// compiled out and every request for it fails with one line.
#include "runtime/backend.h"

namespace kiln::runtime {

StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(int, std::optional<int>) {
  return Error("kiln was built without CUDA headers");
}

}  // namespace kiln::runtime
