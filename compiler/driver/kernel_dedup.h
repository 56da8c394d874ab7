// Kernel deduplication (XLA's kernel reuse): the fusions of a model's
// repeated layers are the same kernels under different names. Kernels
// whose fused computations are structurally identical
// (hlo::StructuralFingerprint: same instructions, shapes, layouts,
// constants and attributes; only names differ) and whose arguments alias
// alike (codegen::KernelArgumentAliasing, which also changes the code) are
// generated once per target and every Kernel thunk launches that one (the
// driver renames the thunks' kernels). A distinct kernel is named after what
// it computes: its first user's name without instruction numbers and a hash
// of its fingerprint ("add_gemm_t_fusion_3fa2b1c0d4e5"), so that a change to
// one layer leaves the other layers' kernels, and their cache entries, as
// they were.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/codegen/kernel_codegen.h"
#include "compiler/emitter/thunk_emitter.h"

namespace kiln::compiler {

struct DistinctKernels {
  // One spec per distinct kernel, in the order of the requests that first
  // asked for it (the order is what keeps the artifact deterministic).
  std::vector<codegen::KernelSpec> specs;
  // Every requested kernel name -> the name of the distinct kernel that
  // computes it.
  std::map<std::string, std::string> distinct_name;
};

// Groups `requests` by fingerprint and aliasing (`aliasing`: per requested
// name, as KernelAliasing gives it; a name without an entry aliases
// nothing known).
DistinctKernels DeduplicateKernels(const std::vector<emitter::KernelRequest>& requests,
                                   const std::map<std::string, codegen::KernelArgumentAliasing>& aliasing);

}  // namespace kiln::compiler
