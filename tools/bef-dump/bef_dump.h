// The two renderings of bef-dump: text (for people) and JSON (for scripts).
// Both show the same content: header, signature, allocations, constants,
// kernels per target and the thunk tree with slices.
#pragma once

#include <cstdint>
#include <string>

#include "serialization/artifact.h"

namespace kiln::tools {

struct DumpOptions {
  bool hlo = false;  // include the optimized HLO text
};

std::string ArtifactToText(const bef::Artifact& artifact, const std::string& path,
                           uint64_t file_size, const DumpOptions& options);
std::string ArtifactToJson(const bef::Artifact& artifact, const std::string& path,
                           uint64_t file_size, const DumpOptions& options);

}  // namespace kiln::tools
