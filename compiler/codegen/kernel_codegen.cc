// CompileKernels: the driver of kiln_codegen. It emits the kernel IR once
// and hands it to the host and CUDA lowerings; it includes no MLIR or LLVM
// headers (the stages live behind codegen_internal.h).
#include "compiler/codegen/kernel_codegen.h"

#include <algorithm>

#include "compiler/codegen/codegen_internal.h"

namespace kiln::codegen {
namespace {

using internal::KernelInfo;
using internal::kCudaBlockSize;

// A loop kernel's grid is at most 4 waves of full occupancy on an H100
// (132 SMs x 8 blocks of 256 threads); its threads stride over the rest
// (MapFlatLoop), so a huge output does not become millions of threads.
constexpr int64_t kMaxLoopBlocks = 132 * 8 * 4;

// grid.x: the units the entry's [begin, end) ranges over; block.x: the
// iterations of the whole loop nest (reductions' inner loops included) per
// unit, rounded up.
std::vector<CompiledKernel> HostKernels(const std::vector<KernelInfo>& infos) {
  std::vector<CompiledKernel> kernels;
  for (const KernelInfo& info : infos) {
    int64_t units = info.host_split_dim >= 0 ? std::max<int64_t>(1, info.host_units) : 1;
    int64_t work = info.host_work > 0 ? info.host_work : info.num_elements;
    int64_t per_unit = (work + units - 1) / units;
    kernels.push_back({info.name, LaunchDims{{units, 1, 1}, {per_unit, 1, 1}, 0}, info.num_args});
  }
  return kernels;
}

// One thread per cuda_elements_per_thread result elements (the kernel
// guards the ragged last block), unless the kernel brings its own launch (tiled kernels: one block per tile).
std::vector<CompiledKernel> CudaKernels(const std::vector<KernelInfo>& infos) {
  std::vector<CompiledKernel> kernels;
  for (const KernelInfo& info : infos) {
    if (info.cuda_launch) {
      kernels.push_back({info.name, *info.cuda_launch, info.num_args});
      continue;
    }
    int64_t threads = info.num_elements / std::max<int64_t>(1, info.cuda_elements_per_thread);
    int64_t blocks = std::clamp<int64_t>((threads + kCudaBlockSize - 1) / kCudaBlockSize, 1, kMaxLoopBlocks);
    kernels.push_back({info.name, LaunchDims{{blocks, 1, 1}, {kCudaBlockSize, 1, 1}, 0}, info.num_args});
  }
  return kernels;
}

}  // namespace

StatusOr<CodegenResult> CompileKernels(const std::vector<KernelSpec>& kernels,
                                       const CodegenOptions& options) {
  CodegenResult result;
  // Without targets, the host IR alone (for --dump-dir and tests).
  if (!options.host && !options.cuda) {
    std::vector<KernelInfo> infos;
    KILN_ASSIGN_OR_RETURN(internal::KernelModulePtr module,
                          internal::EmitKernelModule(kernels, internal::KernelTarget::kHost, &infos));
    result.mlir_text = internal::PrintKernelModule(*module);
  }
  if (options.host) {
    std::vector<KernelInfo> infos;
    KILN_ASSIGN_OR_RETURN(internal::KernelModulePtr module,
                          internal::EmitKernelModule(kernels, internal::KernelTarget::kHost, &infos));
    result.mlir_text = internal::PrintKernelModule(*module);
    KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> object, internal::LowerToHostObject(*module, infos));
    HostImage image;
    KILN_ASSIGN_OR_RETURN(image.shared_object, internal::LinkSharedObject(object));
    image.kernels = HostKernels(infos);
    result.host = std::move(image);
  }
  if (options.cuda) {
    // The CUDA module differs from the host's in its reduction kernels.
    std::vector<KernelInfo> infos;
    KILN_ASSIGN_OR_RETURN(internal::KernelModulePtr module,
                          internal::EmitKernelModule(kernels, internal::KernelTarget::kCuda, &infos));
    result.mlir_text += (result.mlir_text.empty() ? "" : "\n// CUDA kernel IR\n") + internal::PrintKernelModule(*module);
    CudaImage image;
    image.arch = options.cuda_arch;
    KILN_ASSIGN_OR_RETURN(image.ptx, internal::LowerToPtx(*module, infos, options.cuda_arch));
    std::string ptxas = internal::FindPtxas();
    if (!ptxas.empty()) {
      KILN_ASSIGN_OR_RETURN(image.cubin, internal::AssemblePtx(ptxas, image.ptx, options.cuda_arch));
    }
    image.kernels = CudaKernels(infos);
    result.cuda = std::move(image);
  }
  return result;
}

}  // namespace kiln::codegen
