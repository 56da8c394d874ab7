// OpenBLAS' kernel choice, corrected for CPUs it does not know.
//
// Debian's OpenBLAS is built for every x86-64 level and picks its kernels
// at load time from the CPU's model number. A model newer than the library
// (or a virtual CPU that reports none) falls back to its oldest kernels,
// Prescott's SSE3 ones, even when the CPU has AVX-512: on such a machine a
// 512^3 sgemm ran at 16 GFLOP/s instead of 146. Before the first BLAS call
// kiln checks the choice against the CPU's features and, if OpenBLAS chose
// kernels older than the features allow, re-runs its selection with the
// newest matching core (SkylakeX for AVX-512, Haswell for AVX2 + FMA).
// An OPENBLAS_CORETYPE set by the user is left alone.
#pragma once

#include <string>

namespace kiln::kernels {

// Idempotent and thread-safe; every kernels_lib entry that calls BLAS or
// LAPACK calls it first (OpenBLAS' choice is process-wide). Returns
// OpenBLAS' core name after the check, for reports.
std::string EnsureOpenBlasKernelsMatchCpu();

}  // namespace kiln::kernels
