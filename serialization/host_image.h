// Which of an artifact's host kernel images this machine runs.
//
// A host target carries one shared object per x86-64 level (x86-64-v2, v3,
// v4, and optionally "native": the compiling machine's own features), lowest
// first, each listing the CPU features its code needs. The runtime loads the
// highest one whose features this CPU has (common/x86_cpu.h), so one .bef
// runs on any x86-64 machine at the best speed that machine allows;
// $KILN_HOST_CPU_LEVEL=<level> forces a level (tests of the lower levels'
// code, comparisons). bef-run and bef-dump report the same choice.
#pragma once

#include <string>

#include "common/status.h"
#include "serialization/artifact.h"

namespace kiln::bef {

// The image's level: cpu_level, or "x86-64-v2" for an image of a file
// before 3.2 (which was compiled for that level).
std::string HostImageLevel(const KernelImage& image);

// The host image to run: $KILN_HOST_CPU_LEVEL's when set (an error when the
// artifact has none or this CPU lacks its features), else the last image
// whose features this CPU has. Null when the artifact has no host image;
// an error when none runs on this CPU.
StatusOr<const KernelImage*> SelectHostImage(const Artifact& artifact);

}  // namespace kiln::bef
