// The row-normalization emitter: softmax, log-softmax, layer norm, RMS
// norm (kernels passes::AnalyzeRowNormalization accepts, formed by
// passes::RowNormalizationFusion) as one kernel that reads each row once
// and writes each output once.
//
// CUDA: T threads per row, each holding I vectors of V consecutive
// elements of its row in registers (V = 16 bytes of the narrowest
// element-level input or output, halved until it divides K; C = K / V
// vectors; T = the power of two >= C / 4 in [1, 1024]; I = C / T rounded
// up). T <= 32: blocks of 256 threads hold 256 / T rows (small rows packed
// several to a warp); T > 32: one block of T threads per row. Every
// element a thread holds is computed once: the reduces of a stage fold the
// thread's elements in order, then a shuffle-down tree combines the
// thread's group of lanes; across warps the warp results meet in shared
// memory and every thread combines them in warp order, so all threads of
// the row hold the same, deterministic result (packed rows: lane 0 of the
// row's group publishes it through shared memory). One barrier per stage.
// The per-row values computed from the results (mean, 1 / sqrt(var + eps))
// are computed once per thread, and the outputs from the register-held
// elements, stored with vector stores. A sum of f16/bf16 accumulates in
// f32. Threads past the row's last vector read that vector again (their
// values are masked with the reducer's init value) and store nothing.
//
// Host: one unit per row; each stage's reduces are loops over the row,
// then one loop over the row computes and stores the element outputs.
#pragma once

#include "common/status.h"
#include "compiler/codegen/codegen_internal.h"
#include "compiler/hlo/computation.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::codegen::internal {

// Whether `comp` is a row-normalization kernel (passes::AnalyzeRowNormalization).
bool IsRowNormalizationKernel(const hlo::HloComputation& comp);

// Emits the kernel for `spec` into `module` for `target`; on CUDA the
// KernelInfo carries its launch (blocks x (32, W) threads).
StatusOr<KernelInfo> EmitRowNormalizationKernel(mlir::ModuleOp module, const KernelSpec& spec,
                                                KernelTarget target);

}  // namespace kiln::codegen::internal
