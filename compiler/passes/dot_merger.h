// DotMerger: GEMMs that share an operand become one larger GEMM when the
// GPU runs that faster (XLA's DotMerger, decided by a GEMM time estimate).
//
//   x = dot(a, b)          z = dot(a, concatenate(b, c))
//   y = dot(a, c)    ->    x = slice(z), y = slice(z)
//
// A transformer's attention projections are the common case: q, k and v
// each multiply the same normalized activations by their own weights. Each
// of those GEMMs alone covers a fraction of the GPU's SMs with output tiles
// and pays a launch; merged, one call fills the SMs, for the price of
// concatenating the weights (a memory-bound copy) and of slices that fuse
// into the consumers. GemmTimeEstimate weighs both sides, so two GEMMs that
// already fill the GPU stay apart: concatenating their weights would cost
// more than it saves.
//
// Works on canonical GEMMs (DotCanonicalization: rank-3 operands, batch
// dimension 0) that share their lhs (concatenated along n) or their rhs
// (along m), agree on types, batch, k, the other operand's layout and the
// TF32 permission, and are independent (neither reaches the other), so the
// merged GEMM adds no cycle. Runs when compiling for CUDA.
#pragma once

#include <cstdint>

#include "compiler/passes/gemm_time_estimate.h"
#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

struct DotMergerOptions {
  GpuGemmDevice device;
  // Merge only when the estimate saves at least this fraction of the
  // separate GEMMs' time (estimates near a tie are noise).
  double min_saving_fraction = 0.05;
  // The merged GEMM's result stays alive until its last slice is read, and
  // the concatenated operand until the GEMM ran: bound both so that merging
  // cannot raise peak memory by much (XLA's max_size_to_merge).
  int64_t max_merged_bytes = int64_t{64} << 20;
  // f32 GEMMs that allow it run on the TF32 tensor cores (--tf32).
  bool tf32 = true;
};

class DotMerger : public HloPass {
 public:
  explicit DotMerger(DotMergerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "dot-merger"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  DotMergerOptions options_;
};

}  // namespace kiln::passes
