// A collective wrapped in async-start/async-done (XLA's form of an async
// reduce-scatter, all-to-all, collective-broadcast, ...): AsyncToSync keeps
// such pairs, and the emitter gives them a collective thunk that starts at
// the async-start and a done at the async-done, so the runtime overlaps
// them with the compute scheduled in between.
#pragma once

#include "compiler/hlo/module.h"

namespace kiln::passes {

// The collective an async-start runs when its computation is exactly that
// collective applied to the parameters in order, with an async-done of the
// start as its only user; nullptr otherwise.
const hlo::HloInstruction* WrappedCollective(const hlo::HloInstruction& start);

}  // namespace kiln::passes
