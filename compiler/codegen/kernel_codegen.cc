// CompileKernels: the driver of kiln_codegen. Each kernel is compiled on
// its own for each target (CompileOneKernel), then the per-kernel results
// are linked into the targets' images; no MLIR or LLVM headers here.
#include "compiler/codegen/kernel_codegen.h"

#include "compiler/codegen/kernel_image_linker.h"
#include "compiler/codegen/kernel_object.h"

namespace kiln::codegen {
namespace {

// Every kernel compiled for `target`, in the order of `kernels`.
StatusOr<std::vector<KernelObject>> CompileAll(const std::vector<KernelSpec>& kernels, CodegenTarget target,
                                               const CodegenOptions& options) {
  std::vector<KernelObject> objects;
  for (const KernelSpec& spec : kernels) {
    KILN_ASSIGN_OR_RETURN(KernelObject object, CompileOneKernel(spec, target, options));
    objects.push_back(std::move(object));
  }
  return objects;
}

std::string JoinKernelIr(const std::vector<KernelObject>& objects) {
  std::string text;
  for (const KernelObject& o : objects) text += o.kernel_ir;
  return text;
}

}  // namespace

StatusOr<CodegenResult> CompileKernels(const std::vector<KernelSpec>& kernels,
                                       const CodegenOptions& options) {
  CodegenResult result;
  // Without targets, the host IR alone (for --dump-dir and tests).
  if (!options.host && !options.cuda) {
    for (const KernelSpec& spec : kernels) {
      KILN_ASSIGN_OR_RETURN(std::string ir, PrintKernelIr(spec));
      result.mlir_text += ir;
    }
  }
  if (options.host) {
    KILN_ASSIGN_OR_RETURN(std::vector<KernelObject> objects, CompileAll(kernels, CodegenTarget::kHost, options));
    result.mlir_text = JoinKernelIr(objects);
    KILN_ASSIGN_OR_RETURN(HostImage image, LinkHostImage(objects));
    result.host = std::move(image);
  }
  if (options.cuda) {
    KILN_ASSIGN_OR_RETURN(std::vector<KernelObject> objects, CompileAll(kernels, CodegenTarget::kCuda, options));
    std::string ir = JoinKernelIr(objects);
    if (!ir.empty()) result.mlir_text += (result.mlir_text.empty() ? "" : "\n// CUDA kernel IR\n") + ir;
    KILN_ASSIGN_OR_RETURN(CudaImage image, LinkCudaImage(objects, options.cuda_arch));
    result.cuda = std::move(image);
  }
  return result;
}

}  // namespace kiln::codegen
