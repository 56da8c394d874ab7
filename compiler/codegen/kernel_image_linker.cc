// LinkHostImage and LinkCudaImage (kernel_image_linker.h).
//
// CUDA: the kernels stay one module, so that loading an artifact is one
// cuModuleLoadData (one JIT of the PTX where no cubin fits) however many
// kernels it has. The PTX modules join textually: LLVM writes the same
// header (.version, .target, .address_size) for every kernel, and their
// other module-level symbols are prefixed per kernel (kernel_object.h).
// The cubin is the kernels' relocatable cubins linked by nvlink, so ptxas
// runs per kernel (in parallel, and cacheable per kernel) rather than once
// over the whole module.
#include "compiler/codegen/kernel_image_linker.h"

#include <set>

#include "compiler/codegen/codegen_internal.h"

namespace kiln::codegen {
namespace {

Status CheckDistinctNames(const std::vector<KernelObject>& objects) {
  std::set<std::string> names;
  for (const KernelObject& o : objects)
    if (!names.insert(o.kernel.name).second) return Error("duplicate kernel name '" + o.kernel.name + "'");
  return Status::Ok();
}

// Splits a PTX module after its `.address_size` line: the header, then the
// body.
StatusOr<std::pair<std::string, std::string>> SplitPtxHeader(const std::string& ptx, const std::string& kernel) {
  size_t line = ptx.find("\n.address_size");
  size_t end = line == std::string::npos ? line : ptx.find('\n', line + 1);
  if (end == std::string::npos)
    return Error("internal error: the PTX of kernel " + kernel + " has no .address_size line");
  return std::make_pair(ptx.substr(0, end + 1), ptx.substr(end + 1));
}

// An image without kernels is the lowering of an empty kernel module (a
// PTX header alone, an object without symbols), as the runtime loads any
// other.
StatusOr<internal::KernelModulePtr> EmptyKernelModule(internal::KernelTarget target) {
  std::vector<internal::KernelInfo> none;
  return internal::EmitKernelModule({}, target, &none);
}

StatusOr<std::string> JoinPtx(const std::vector<KernelObject>& objects, const std::string& arch) {
  if (objects.empty()) {
    KILN_ASSIGN_OR_RETURN(internal::KernelModulePtr empty, EmptyKernelModule(internal::KernelTarget::kCuda));
    return internal::LowerToPtx(*empty, {}, arch, "");
  }
  std::string header, body;
  for (const KernelObject& o : objects) {
    KILN_ASSIGN_OR_RETURN(auto parts, SplitPtxHeader(o.ptx, o.kernel.name));
    if (header.empty()) header = parts.first;
    if (parts.first != header)
      return Error("internal error: the PTX of kernel " + o.kernel.name + " has another header than the others");
    body += parts.second;
  }
  return header + body;
}

// nvlink over the per-kernel cubins when every kernel has one; else ptxas
// over the joined module when ptxas exists; else none (PTX only).
StatusOr<std::vector<uint8_t>> LinkCubin(const std::vector<KernelObject>& objects, const std::string& ptx,
                                         const std::string& arch) {
  bool all_cubins = !objects.empty();
  std::vector<std::vector<uint8_t>> cubins;
  for (const KernelObject& o : objects) {
    all_cubins &= !o.cubin.empty();
    cubins.push_back(o.cubin);
  }
  std::string nvlink = internal::FindNvlink();
  if (all_cubins && !nvlink.empty()) return internal::LinkCubins(nvlink, cubins, arch);
  std::string ptxas = internal::FindPtxas();
  if (ptxas.empty()) return std::vector<uint8_t>{};
  return internal::AssemblePtx(ptxas, ptx, arch);
}

}  // namespace

StatusOr<HostImage> LinkHostImage(const std::vector<KernelObject>& objects) {
  KILN_RETURN_IF_ERROR(CheckDistinctNames(objects));
  std::vector<std::vector<uint8_t>> relocatable;
  HostImage image;
  for (const KernelObject& o : objects) {
    relocatable.push_back(o.host_object);
    image.kernels.push_back(o.kernel);
  }
  if (objects.empty()) {
    KILN_ASSIGN_OR_RETURN(internal::KernelModulePtr empty, EmptyKernelModule(internal::KernelTarget::kHost));
    KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> object, internal::LowerToHostObject(*empty, {}, BaselineHostCpu()));
    relocatable.push_back(std::move(object));
  }
  KILN_ASSIGN_OR_RETURN(image.shared_object, internal::LinkSharedObject(relocatable));
  return image;
}

StatusOr<CudaImage> LinkCudaImage(const std::vector<KernelObject>& objects, const std::string& arch) {
  KILN_RETURN_IF_ERROR(CheckDistinctNames(objects));
  CudaImage image;
  image.arch = arch;
  for (const KernelObject& o : objects) image.kernels.push_back(o.kernel);
  KILN_ASSIGN_OR_RETURN(image.ptx, JoinPtx(objects, arch));
  KILN_ASSIGN_OR_RETURN(image.cubin, LinkCubin(objects, image.ptx, arch));
  return image;
}

}  // namespace kiln::codegen
