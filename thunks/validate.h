// ValidateProgram: the semantic checks that make a ThunkProgram safe to run.
//
// A program that passes never makes the runtime touch memory outside its
// allocations: every slice is inside its allocation (no overflow), library
// thunks' slices are large enough for the shapes and strides they describe,
// constants fill their allocations exactly, the signature maps every array
// leaf of every parameter and of the result onto a slice of the right size,
// and the thunk tree is at most kMaxThunkDepth deep. The loader runs it on
// every .bef file (after the FlatBuffers verifier) and the compiler may run
// it on what it emits. Kernel-image checks live in serialization/, which
// knows about images.
#pragma once

#include "common/status.h"
#include "thunks/program.h"

namespace kiln::thunks {

// Depth of nested sequences (a While or Conditional adds one level).
inline constexpr int kMaxThunkDepth = 64;

// OK, or one line naming the first problem found.
Status ValidateProgram(const ThunkProgram& program);

// A CUDA launch within the driver's bounds: grid and block dimensions at
// least 1, x at most 2^31, y and z at most 65535, no negative shared memory.
// A Kernel thunk's launch is the CUDA launch (its default when the artifact
// has no CUDA image); host kernels take their work units from the host
// image's kernel entries, which these bounds do not apply to.
Status CheckCudaLaunch(const LaunchDims& launch);

// Byte size of a shape's dense storage (tuple: sum of leaves), or nullopt
// if a dimension is negative or the size overflows int64.
std::optional<int64_t> CheckedByteSize(const Shape& shape);

}  // namespace kiln::thunks
