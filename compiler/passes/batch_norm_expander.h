// BatchNormExpander: batch-norm-training, batch-norm-inference and
// batch-norm-grad become reductions and elementwise ops over the feature
// dimension, as XLA's BatchNormExpander rewrites them for its CPU and GPU
// backends (neither has a batch-norm kernel); fusion then makes loop and
// reduction kernels of them.
//
// For x with feature dimension f, N elements per feature, scale s and
// offset o (per feature, broadcast along f):
//   training:  mean = sum(x)/N, var = sum(x*x)/N - mean*mean,
//              out = (x - mean) * rsqrt(var + eps) * s + o
//              -> (out, mean, var)
//   inference: out = (x - mean) * rsqrt(var + eps) * s + o
//   grad:      r = rsqrt(var + eps), xc = x - mean,
//              grad_offset = sum(dy), grad_scale = sum(dy * xc) * r,
//              grad_x = s * r * (dy - grad_offset/N - xc * r*r * sum(dy*xc)/N)
//              -> (grad_x, grad_scale, grad_offset)
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class BatchNormExpander : public HloPass {
 public:
  std::string_view name() const override { return "batch-norm-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
