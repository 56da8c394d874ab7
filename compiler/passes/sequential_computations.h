// The computations of a module that run as thunk sequences: the entry and
// the while / conditional computations reachable from it (not reducers,
// fused computations or other to_apply callees, which become kernel code).
// Fusion, scheduling and buffer assignment work on exactly these.
#pragma once

#include <vector>

#include "compiler/hlo/module.h"

namespace kiln::passes {

// Entry first, then callees in discovery order (deterministic).
std::vector<hlo::HloComputation*> SequentialComputations(const hlo::HloModule& module);

}  // namespace kiln::passes
