// The fusion decisions a fusion instruction was formed by, carried on the
// instruction itself (backend_config="a>b=0.25;c>b=0.5": producer >
// consumer = estimated microseconds saved) so that they survive later
// passes, show in every HLO dump and reach fusion_report.txt without a side
// channel between the pass and the driver.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/hlo/instruction.h"
#include "compiler/passes/priority_fusion.h"

namespace kiln::passes {

// "a>b=0.25;c>b=0.5"; "" for none.
std::string EncodeFusionDecisions(const std::vector<FusionDecision>& decisions);

// The decisions recorded on `fusion` (none when it carries no or another
// backend_config).
std::vector<FusionDecision> FusionDecisionsOf(const hlo::HloInstruction& fusion);

// Records `decisions` on `fusion`, replacing what it carried.
void SetFusionDecisions(hlo::HloInstruction& fusion, const std::vector<FusionDecision>& decisions);

}  // namespace kiln::passes
