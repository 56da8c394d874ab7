// Element-wise reductions of the host collectives, as Gloo's reduce
// function type: out[i] = a[i] op b[i] for n elements (out may alias a or
// b). Each reduction computes as the reference evaluator does: integers
// wrap, pred and/or are logical, f16 and bf16 are widened, combined and
// rounded back after every step (as XLA rounds per op), min and max
// propagate NaN, complex numbers add and multiply as complex.
#pragma once

#include <cstddef>

#include "common/element_type.h"
#include "common/status.h"
#include "thunks/thunk.h"

namespace kiln::runtime {

using ReduceFunction = void (*)(void* out, const void* a, const void* b, size_t n);

// The reduction of `kind` over elements of `type`, or an error naming a
// combination no reduction exists for (min of complex numbers, and of
// floats, f8 types, ...).
StatusOr<ReduceFunction> CollectiveReduction(ElementType type, thunks::ReductionKind kind);

}  // namespace kiln::runtime
