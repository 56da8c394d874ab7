// FusionReport: the fusion decisions of an optimized module, for
// --dump-dir (fusion_report.txt): every kernel with the instructions it
// fused and what fusing them saved, in bytes not written to and read back
// from memory and in roofline time on the host and H100-class targets, and
// the decisions the fusion passes made with the time they estimated each
// saves.
#pragma once

#include <string>

#include "compiler/hlo/module.h"

namespace kiln::compiler {

// Bytes that fusing `fusion`'s computation keeps out of memory: each fused
// instruction other than the root would otherwise write its result once
// and have it read back once per user.
int64_t FusionBytesSaved(const hlo::HloInstruction& fusion);

// One line per fusion of the sequential computations, largest saving first,
// then a total line, then every fusion decision recorded on the fusions
// (producer -> consumer, estimated µs saved; fusion_decisions.h) and their
// total.
std::string FusionReport(const hlo::HloModule& module);

}  // namespace kiln::compiler
