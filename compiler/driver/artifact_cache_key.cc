// ArtifactCacheKey (artifact_cache_key.h).
#include "compiler/driver/artifact_cache_key.h"

#include "compiler/cache/cache_key.h"
#include "compiler/codegen/kernel_codegen.h"
#include "compiler/hlo/printer.h"

namespace kiln::compiler {
namespace {

// The host CPUs as resolved on this machine: "native" differs between
// machines, so its features and model are part of the key.
std::string HostCpusKey(const CompileOptions& options) {
  std::string key;
  if (!options.host) return key;
  for (const std::string& level : options.host_cpus) {
    StatusOr<codegen::HostCpu> cpu = codegen::ResolveHostCpu(level);
    key += (cpu.ok() ? cpu->Key() : level) + ";";
  }
  return key;
}

}  // namespace

std::string ArtifactCacheKey(const hlo::HloModule& module, const CompileOptions& options,
                             const std::string& codegen_identity) {
  cache::CacheKey key("bef");
  key.Add("bef-version", std::to_string(bef::kBefVersionMajor) + "." + std::to_string(bef::kBefVersionMinor))
      .Add("codegen", codegen_identity)
      .Add("producer", options.producer)
      .Add("host", options.host)
      .Add("cuda", options.cuda)
      .Add("cuda-arch", options.cuda_arch)
      .Add("radix-sort", options.radix_sort)
      .Add("tf32", options.tf32)
      .Add("streams", static_cast<int64_t>(options.streams))
      .Add("host-cpus", HostCpusKey(options))
      .Add("module", cache::ContentFingerprint(hlo::PrintModule(module)));
  return key.str();
}

}  // namespace kiln::compiler
