// WhileLoopTripCount: proves the trip count of counted while loops and
// records it as XLA does, backend_config={"known_trip_count":{"n":"N"}}.
//
// The thunk emitter turns a known trip count into WhileThunk::trip_count,
// so the runtime runs the body N times without evaluating the condition or
// reading a predicate back from the device (no host synchronization per
// iteration on CUDA).
//
// Recognized (like XLA's ComputeWhileLoopTripCount for the simple case):
// an integer loop-state element i with a constant initial value, a body
// that sets i to i + c (c a nonzero constant) and leaves every use of the
// other elements alone, and a condition compare(i, bound) (either operand
// order; LT, LE, GT, GE, NE) against a constant bound. The count is
// computed exactly in 128-bit arithmetic; loops that would overflow the
// element type before exiting are left alone.
#pragma once

#include <optional>

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class WhileLoopTripCount : public HloPass {
 public:
  std::string_view name() const override { return "while-loop-trip-count"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// The proven trip count of `loop` (a kWhile), or nullopt.
std::optional<int64_t> ComputeWhileTripCount(const hlo::HloInstruction& loop);

}  // namespace kiln::passes
