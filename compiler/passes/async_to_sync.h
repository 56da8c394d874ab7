// AsyncToSync: kiln's runtime orders work on its streams itself, so the
// asynchronous wrappers of single-device work in a dump run synchronously:
//   copy-done(copy-start(x))                    -> copy(x)
//   async-done([async-update(...)] async-start(operands), calls=f)
//                                               -> call(operands), to_apply=f
// (CallInliner then inlines the call). Async collectives (all-reduce-start,
// ...) are multi-device ops and are left as they are, and so is an
// async-start/async-done pair that wraps a single collective
// (wrapped_collective.h): the runtime runs those asynchronously.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class AsyncToSync : public HloPass {
 public:
  std::string_view name() const override { return "async-to-sync"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
