// ArtifactCacheKey (artifact_cache_key.h).
#include "compiler/driver/artifact_cache_key.h"

#include "compiler/cache/cache_key.h"
#include "compiler/hlo/printer.h"

namespace kiln::compiler {

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
      .Add("module", cache::ContentFingerprint(hlo::PrintModule(module)));
  return key.str();
}

}  // namespace kiln::compiler
