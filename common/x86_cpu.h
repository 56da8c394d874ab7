// x86-64 CPU levels and features: what a host kernel image needs, and what
// the CPU running kiln has.
//
// Host kernels are compiled for several x86-64 micro-architecture levels
// (x86-64-v2: SSE4.2; v3: AVX2, FMA, BMI; v4: AVX-512) and an artifact
// carries one shared object per level. Each image lists the CPU features its
// code needs, by the names LLVM and GCC use ("avx2", "avx512f"); the runtime
// runs the best image whose features this CPU has. The compiler and the
// runtime share the level definitions here, so both agree on what a level
// requires. Features are read with cpuid, and the AVX and AVX-512 register
// states must also be enabled by the OS (xgetbv), else the instructions
// fault even on a CPU that has them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// The levels kiln compiles host kernels for by default, lowest first.
const std::vector<std::string>& DefaultX86Levels();

// The features level `level` ("x86-64-v2", "x86-64-v3", "x86-64-v4")
// requires beyond x86-64's baseline (SSE2), or nullopt for another name.
std::optional<std::vector<std::string>> X86LevelFeatures(std::string_view level);

// Every feature name HostCpuHasFeature can check.
const std::vector<std::string>& KnownX86Features();

// Whether this CPU, with the OS's register state for AVX and AVX-512,
// supports `feature`; false for a name kiln does not know (an image needing
// it is never chosen) and on other architectures.
bool HostCpuHasFeature(std::string_view feature);

// Whether this CPU has every feature in `features`.
bool HostCpuHasFeatures(const std::vector<std::string>& features);

// The highest of DefaultX86Levels() this CPU supports, or "" when it does
// not support x86-64-v2 (or is no x86-64 CPU).
std::string HostX86Level();

// The host kernel images' level the user forces with $KILN_HOST_CPU_LEVEL,
// or "" when the variable is unset or empty.
std::string ForcedHostCpuLevel();

}  // namespace kiln
