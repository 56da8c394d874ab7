// The kernel level of the compile cache (compiler/cache): one distinct
// kernel compiled for one target (a KernelObject: host object code, or PTX
// and cubin, with its launch) is stored under a key of everything that
// shapes it, so a model with one changed layer regenerates only the kernels
// that changed. The key: the kernel's name (its exported symbol), its
// arguments' aliasing and its computation's exact structural fingerprint
// (hlo/structural_fingerprint.h: the same bytes that decide kernel
// deduplication), the target, the CUDA architecture or host CPU
// (HostCpu::Key) and codegen's external
// inputs (codegen_identity.h); the cache adds kiln's build identity.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/codegen/kernel_object.h"

namespace kiln::cache {
class CompileCache;
}

namespace kiln::codegen {

// One compile's view of the kernel level: the cache and codegen's identity
// (CodegenIdentity(), computed once per compile). Thread-safe: the kernels
// of one compile may be compiled on several threads at once.
class KernelObjectCache {
 public:
  KernelObjectCache(cache::CompileCache& cache, std::string codegen_identity)
      : cache_(cache), codegen_identity_(std::move(codegen_identity)) {}

  // `variant`: the CUDA architecture, or the host CPU's HostCpu::Key().
  std::string Key(const KernelSpec& spec, CodegenTarget target, const std::string& variant) const;
  std::optional<KernelObject> Lookup(const KernelSpec& spec, CodegenTarget target, const std::string& variant) const;
  // Stores `object` (its kernel IR left out). A failure costs later
  // compiles their hit, not this one its result: it is kept for
  // store_error().
  void Store(const KernelSpec& spec, CodegenTarget target, const std::string& variant,
             const KernelObject& object) const;
  // The first store that failed, or "".
  std::string store_error() const;

 private:
  cache::CompileCache& cache_;
  const std::string codegen_identity_;
  mutable std::mutex mutex_;
  mutable std::string store_error_;  // guarded by mutex_
};

// CompileOneKernel through options.kernel_cache when it is set and the
// kernel IR is not wanted (keep_kernel_ir: a cached kernel has none);
// `from_cache` says whether the object came from the cache.
StatusOr<KernelObject> CompileOneKernelCached(const KernelSpec& spec, CodegenTarget target,
                                              const CodegenOptions& options, const HostCpu& host_cpu,
                                              bool* from_cache);

// CompileOneKernelForHostCpus through options.kernel_cache (as
// CompileOneKernelCached): each CPU's object is looked up apart, and the
// CPUs that missed are compiled together. Adds to `compiled` and
// `from_cache` one per CPU.
StatusOr<std::vector<KernelObject>> CompileOneKernelForHostCpusCached(const KernelSpec& spec,
                                                                      const CodegenOptions& options,
                                                                      const std::vector<HostCpu>& cpus,
                                                                      int64_t* compiled, int64_t* from_cache);

// A KernelObject's bytes as stored (its kernel IR is not: a compile that
// wants the IR does not use the cache), and back; nullopt for bytes that
// are not a whole encoding.
std::vector<uint8_t> EncodeKernelObject(const KernelObject& object);
std::optional<KernelObject> DecodeKernelObject(std::span<const uint8_t> bytes);

}  // namespace kiln::codegen
