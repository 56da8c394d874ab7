// StructuralFingerprint: the identity of a computation with its names set
// aside, for sharing work between computations that only differ in names
// (kernel deduplication: a transformer's layers fuse into the same kernels,
// named after each layer's instructions).
//
// The fingerprint is exact, not a hash: two computations have equal
// fingerprints iff they have the same instructions in the same order, with
// the same opcodes, shapes (layouts included), operands and control
// predecessors (by position), root, parameter numbers, constant values (every
// byte, elided constants' placeholder data included) and attributes (every
// value; called computations by their own fingerprints). Only the names of
// the computation and its instructions, source locations and `metadata`
// (op_name, source_file, ...: what XLA's printer omits from its
// fingerprints too) are left out; none of them changes what the computation
// computes.
#pragma once

#include <string>

#include "compiler/hlo/computation.h"

namespace kiln::hlo {

// Canonical bytes of `computation` as described above (compare them with ==;
// they hold constant data verbatim, so they are about as large as the
// computation's constants plus a few dozen bytes per instruction).
std::string StructuralFingerprint(const HloComputation& computation);

}  // namespace kiln::hlo
