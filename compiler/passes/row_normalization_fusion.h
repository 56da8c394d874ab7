// RowNormalizationFusion: softmax, log-softmax, layer norm, RMS norm and
// other row normalizations (row_normalization.h) become one kernel each
// (a kInput fusion), as XLA's SoftmaxRewriterTriton and normalization
// fusions make them, instead of a reduction kernel per reduce and a loop
// kernel per broadcast back: codegen reads each row once, keeps it on chip
// through every reduce and writes each output once.
//
// From each row reduction (RowReductionShape) the fusion grows along
// users that keep rows (KeepsRows: elementwise ops and reshapes at the
// element or row level, broadcasts of per-row values along the row, more
// reduces of the same view) and along producers computed per element
// (elementwise ops, reshapes and broadcasts whose result is at the element
// level, cheap elementwise ops of other shapes under such broadcasts, and
// sibling reduces of the same view); a producer that is also
// read elsewhere is duplicated when it is cheap to repeat and its other
// readers are kernel ops (which compute it again), unless it has two or
// more operands the fusion does not read yet (then it stays outside: a
// residual stream's chain of adds); otherwise it becomes an
// extra output (a value the root or a library call reads is written
// anyway). A candidate that would read a value computed from its own
// results (a cycle once fused) loses the members reading it. A fusion is
// formed only when its computation passes AnalyzeRowNormalization (so at
// least one reduce result is broadcast back along the row) and its rows
// fit (K <= kMaxRowNormalizationElements); outputs read elsewhere become a
// tuple of outputs. KernelFusion, multi-output and sibling fusion leave
// these fusions as they are.
//
// Compiling for CUDA only (PipelineOptions::row_normalization); the host
// runs the fusions of an artifact for both with a row loop of its own.
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

class RowNormalizationFusion : public HloPass {
 public:
  std::string_view name() const override { return "row-normalization-fusion"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
