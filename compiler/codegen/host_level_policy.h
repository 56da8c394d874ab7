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
// that object is linked into every level's image; reductions of such
// arithmetic, and divisions and square roots, are compiled up to AVX2
// (x86-64-v3), whose object the AVX-512 levels link; the others are
// compiled per level. Like any multi-versioning compiler (GCC's target_clones,
// ICC's -ax), kiln specializes only the code that pays for it.
#pragma once

#include <vector>

#include "compiler/codegen/kernel_codegen.h"

namespace kiln::codegen {

// What a kernel's code gains from the wider x86-64 levels.
enum class WiderIsaGain {
  // Data movement and cheap element-wise arithmetic: one object, for the
  // lowest level.
  kNone,
  // Reductions of cheap arithmetic (single-result reduce), divisions and
  // square roots: AVX2 sums, compares and divides 8 floats at a time, but
  // AVX-512 gains nothing more on bench/host_levels (an f32 row sum of
  // squares runs 1.4x faster on v3 than on v2 and as fast on v4 as on v3;
  // a column sum runs at memory speed everywhere; an f32 softsign runs
  // 1.9x faster on v3 than on v2, a batch-norm apply and a layer norm
  // 1.07x and 1.28x, and none faster on v4 than on v3): objects for the
  // levels up to AVX2, and AVX-512 levels use the AVX2 level's.
  kUpToAvx2,
  // Transcendental functions, contractions,
  // sorts, scatters, variadic reductions, 16- or 8-bit floats (F16C and
  // AVX-512 conversions) or complex numbers: one object per level.
  kEveryLevel,
};

// A pure function of the kernel's computation, so a kernel's objects, and
// the artifact, do not depend on anything else.
WiderIsaGain WiderIsaGainOf(const KernelSpec& spec);

// For each of `cpus` (the request's levels, in order), the index of the CPU
// whose object that level's image uses (the code of a lower level runs on
// every higher one): kEveryLevel, itself; kNone, the first CPU of the
// request whose features the level has all of; kUpToAvx2, for a level with
// AVX-512, the last CPU before it with AVX2 but not AVX-512 whose features
// it has all of (itself when there is none), and for the others itself.
std::vector<int> HostObjectSources(const std::vector<HostCpu>& cpus, WiderIsaGain gain);

}  // namespace kiln::codegen
