// Which kernels get code of their own for each x86-64 level.
//
// A host artifact carries one kernel image per x86-64 level (x86-64-v2, v3,
// v4, native) and the runtime runs the best one the CPU supports. Compiling
// every kernel once per level triples host code generation, but most of a
// model's kernels gain nothing from the wider levels: kernels that only move
// data or do a few cheap integer or f32/f64 operations per element run at
// memory speed on SSE already (measured in bench/host_levels: an f32
// add+relu of 256K elements runs in the same time on v2, v3 and v4; an erf
// GELU runs 2.2-2.9x faster on v4 from 4K elements up, a softmax 1.4-1.5x).
// Such a kernel is compiled once, for the lowest level of the request, and
// that object is linked into every level's image; the others are compiled
// per level. Like any multi-versioning compiler (GCC's target_clones,
// ICC's -ax), kiln specializes only the code that pays for it.
#pragma once

#include <vector>

#include "compiler/codegen/kernel_codegen.h"

namespace kiln::codegen {

// True when `spec`'s code gains from a wider x86-64 level: it computes with
// transcendental functions, divisions or square roots, reduces, contracts,
// sorts or scatters, or handles 16- or 8-bit floats (F16C and AVX-512
// conversions) or complex numbers. False for data movement and cheap
// element-wise arithmetic. A pure function of the kernel's computation, so
// a kernel's objects, and the artifact, do not depend on anything else.
bool GainsFromWiderIsa(const KernelSpec& spec);

// For each of `cpus` (the request's levels, in order), the index of the CPU
// whose object that level's image uses: itself when `per_level`, else the
// first CPU of the request whose features the level has all of (the code
// of a lower level runs on every higher one).
std::vector<int> HostObjectSources(const std::vector<HostCpu>& cpus, bool per_level);

}  // namespace kiln::codegen
