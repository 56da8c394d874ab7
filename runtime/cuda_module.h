// CUDA kernel code of an artifact: picking the code for a device (the cubin
// built for its SM architecture, else the PTX for the driver to JIT) and
// loading it as a CUmodule with every launched kernel resolved.
//
// FindCudaImage and SelectCudaCode are plain functions over the artifact so
// they are tested without a GPU. Internal to the runtime.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "runtime/cuda_driver.h"
#include "serialization/artifact.h"

namespace kiln::runtime {

// The artifact's CUDA kernel image; error "the artifact has no CUDA kernel
// image (compiled for: host)" naming the kinds it was compiled for.
StatusOr<const bef::KernelImage*> FindCudaImage(const bef::Artifact& artifact);

// The code to load for a device of compute capability `sm_arch` (90).
struct CudaCode {
  const bef::CubinImage* cubin = nullptr;  // set: load this cubin
  const std::string* ptx = nullptr;        // else: JIT-compile this PTX
  // "sm_90 cubin" or "PTX (JIT for sm_89)", for messages.
  std::string description;
};
StatusOr<CudaCode> SelectCudaCode(const bef::KernelImage& image, int sm_arch);

// The kernel names the program's Kernel thunks launch.
std::set<std::string> LaunchedKernels(const thunks::ThunkProgram& program);

class CudaModule {
 public:
  // cuModuleLoadDataEx with an error log buffer (the JIT log is part of the
  // one-line error), then cuModuleGetFunction for each of `kernels`. The
  // context must be current.
  static StatusOr<std::unique_ptr<CudaModule>> Load(const CudaDriver& driver, const CudaCode& code,
                                                    const std::set<std::string>& kernels);
  ~CudaModule();  // unloads; the context must be current
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  // nullptr for a name that was not resolved at Load.
  CUfunction Find(const std::string& name) const;
  const std::map<std::string, CUfunction>& functions() const { return functions_; }

 private:
  CudaModule(const CudaDriver& driver, CUmodule module) : driver_(driver), module_(module) {}
  const CudaDriver& driver_;
  CUmodule module_;
  std::map<std::string, CUfunction> functions_;
};

}  // namespace kiln::runtime
