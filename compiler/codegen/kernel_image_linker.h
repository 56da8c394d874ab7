// Combines per-kernel compilation results (kernel_object.h) into the
// images an artifact carries: one host shared object, and one CUDA module
// (PTX plus, with ptxas, a cubin). Kernels keep the order they are given
// in, so the image bytes depend only on the objects and their order.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/codegen/kernel_object.h"

namespace kiln::codegen {

// lld-links the host objects into one shared object. Errors name a
// duplicate kernel name or lld's complaint.
StatusOr<HostImage> LinkHostImage(const std::vector<KernelObject>& objects);

// One CUDA module from the kernels' PTX modules (one header, then each
// module's body) and, when every kernel has a relocatable cubin, their
// nvlink-ed cubin for `arch`.
StatusOr<CudaImage> LinkCudaImage(const std::vector<KernelObject>& objects, const std::string& arch);

}  // namespace kiln::codegen
