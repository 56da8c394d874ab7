// The two renderings of bef-dump: text (for people) and JSON (for scripts).
// Both show the same content: header, the checksums the file records
// (serialization/bef_checksum.h), signature, allocations, constants,
// kernels per target and the thunk tree with slices.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "serialization/artifact.h"
#include "serialization/bef_checksum.h"

namespace kiln::tools {

struct DumpOptions {
  bool hlo = false;  // include the optimized HLO text
};

std::string ArtifactToText(const bef::Artifact& artifact, const std::string& path,
                           uint64_t file_size, const bef::FileChecksums& checksums,
                           const DumpOptions& options);
std::string ArtifactToJson(const bef::Artifact& artifact, const std::string& path,
                           uint64_t file_size, const bef::FileChecksums& checksums,
                           const DumpOptions& options);

// "0x0123456789abcdef": a checksum as bef-dump prints it (text and JSON).
std::string ChecksumHex(uint64_t checksum);

// Kernel name -> how many Kernel thunks launch it (a kernel shared by
// structurally identical fusions has several; one inside a loop body
// counts once).
std::map<std::string, int64_t> KernelUsers(const bef::Artifact& artifact);

}  // namespace kiln::tools
