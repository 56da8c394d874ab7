// ArtifactCacheKey: the compile cache key of a whole .bef artifact. It
// names everything that determines the artifact's bytes: the module's
// canonical text (hlo::PrintModule, so formatting and comments of the input
// file do not matter but names do, since the artifact carries them), every
// CompileOptions field that changes the output, the .bef format version and
// codegen's external inputs (codegen_identity.h); the cache itself adds
// kiln's build identity.
#pragma once

#include <string>

#include "compiler/driver/compiler.h"

namespace kiln::compiler {

// `codegen_identity`: codegen::CodegenIdentity() (never "": then nothing
// may be cached).
std::string ArtifactCacheKey(const hlo::HloModule& module, const CompileOptions& options,
                             const std::string& codegen_identity);

}  // namespace kiln::compiler
