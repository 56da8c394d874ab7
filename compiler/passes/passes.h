// The HLO passes of kiln's compiler pipeline (one file per pass).
//
// kiln's buffers are dense row-major arrays of their logical shapes: layout
// annotations of the input are not honoured by codegen, so the passes that
// would otherwise depend on them (bitcast) are rewritten into logical ops
// first, and every later pass reasons about logical shapes only.
#pragma once

#include "compiler/passes/hlo_pass.h"
#include "compiler/passes/priority_fusion.h"

namespace kiln::passes {

// Rewrites every bitcast into logical ops: a reshape between row-major
// shapes, transpose -> reshape -> transpose when the layouts permute
// dimensions. A bitcast that changes the element type or uses a tiled
// layout is left alone (thunk emission names it as unsupported).
class BitcastToReshape : public HloPass {
 public:
  std::string_view name() const override { return "bitcast-to-reshape"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// Drops every layout annotation: after BitcastToReshape nothing depends on
// them, and kiln's buffers are dense row-major arrays of logical shapes.
class LayoutNormalization : public HloPass {
 public:
  std::string_view name() const override { return "layout-normalization"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// Inlines every kCall (XLA's CallInliner) and every fusion of the input:
// the called computation's instructions are cloned into the caller, so
// kiln's fusion sees across calls and decides the kernels itself.
class CallInliner : public HloPass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// Rewrites every dot into the form a GEMM library takes:
//   dot(lhs[b,m,k] or lhs[b,k,m], rhs[b,k,n] or rhs[b,n,k]) -> out[b,m,n]
// in f32 or f64, with batch dimension 0. Operands are transposed (when their
// dimensions are not already batch-major with the contraction innermost or
// outermost) and reshaped; bf16/f16/f8 dots compute in f32 and round the
// result, as XLA's CPU and GPU backends do. With `bf16_operands` (compiling
// for CUDA, where cuBLAS runs bf16 x bf16 -> f32 on the tensor cores), a dot
// of bf16 or f8 operands (f8 values are exact in bf16) gets bf16 operands and
// only its f32 result is rounded: the same f32 accumulation with half the
// operand traffic. With `int8_gemms` (CUDA too), the s8 x s8 -> s32 dots
// of IsInt8GemmDot become lhs[b,m,k] x rhs[b,n,k] -> s32[b,m,n] (the "TN"
// form cuBLAS' int8 tensor cores take). With `fp8_gemms` (CUDA too), the
// f8 dots of IsFp8GemmDot (fp8_gemm.h) keep their f8 operands in that same
// [b,m,k] x [b,n,k] form (cuBLASLt's FP8 GEMM) with an f32, bf16 or f16
// result. Other integer and complex dots are left as they are (thunk
// emission names them as unsupported).
class DotCanonicalization : public HloPass {
 public:
  struct Options {
    bool bf16_operands = false;
    bool int8_gemms = false;
    bool fp8_gemms = false;
  };
  DotCanonicalization() = default;
  explicit DotCanonicalization(bool bf16_operands, bool int8_gemms = false)
      : options_{bf16_operands, int8_gemms, false} {}
  explicit DotCanonicalization(const Options& options) : options_(options) {}
  std::string_view name() const override { return "dot-canonicalization"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  Options options_;
};

// Splits a reduction too long for one GPU block (a row of more than 16384
// reduced elements) or too narrow to occupy the GPU (a column reduction of
// few 32-column tiles) into two reduces over [A, K1, K2, M]: the first over
// K2, the second over K1 (reduction_splitter.cc).
class ReductionSplitter : public HloPass {
 public:
  std::string_view name() const override { return "reduction-splitter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// Rewrites every convolution into the form library thunks take (cuDNN, host
// im2col + GEMM): dim_labels b01f_01io->b01f (b0f_0io->b0f, b012f_012io->
// b012f, ...), with transposes of the operands into that order and of the
// result back where the labels differ; window, group counts and other
// attributes are kept. A floating-point 1x1 convolution without padding,
// stride, dilation or groups becomes reshape -> dot -> reshape (transposes
// only where the layout needs them) for the GEMM thunk. Runs before
// DotCanonicalization, which canonicalizes those dots.
class ConvolutionCanonicalization : public HloPass {
 public:
  std::string_view name() const override { return "convolution-canonicalization"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// Groups the instructions that codegen emits (elementwise ops, broadcast,
// reshape, transpose, slice, concatenate, iota, convert, compare, select,
// reduce, ...) into fusion instructions by priority (priority_fusion.h):
//   * producers are fused into all their consumers, highest estimated time
//     saved on options.target first, while that saving is positive;
//   * cheap producers are duplicated into several consumers within a
//     budget; expensive ones (transcendentals, reductions) never are;
//   * a reduction takes its producers and elementwise epilogues of its own
//     dimensions (kind=kInput), so it is never recomputed per element;
//   * a tiled transpose, dynamic-update-slice or scatter stays its
//     kernel's root; scalar constants, iotas and their broadcasts are
//     duplicated into every kernel that uses them;
//   * a reshape left alone on a buffer becomes a bitcast (no kernel: a
//     row-major reshape moves no data).
// Each fusion records its decisions (fusion_decisions.h). Runs on the entry
// computation and on every while / conditional computation reachable from it.
class KernelFusion : public HloPass {
 public:
  KernelFusion() = default;
  explicit KernelFusion(FusionOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "kernel-fusion"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  FusionOptions options_;
};

// Producer-consumer multi-output fusion: a kernel whose value is also used
// outside its consumer kernel is fused into that consumer anyway, and the
// merged kernel returns both values (a tuple root; outputs of the same
// dimensions), so the consumer does not read it back from memory. Never
// merges when another path joins the two (that would be a cycle).
class MultiOutputFusion : public HloPass {
 public:
  MultiOutputFusion() = default;
  explicit MultiOutputFusion(FusionOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "multi-output-fusion"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;

 private:
  FusionOptions options_;
};

// Multi-output fusion of siblings: loop / input kernels with the same
// output dimensions that read the same buffer of at least 1 KiB, and do not
// depend on each other, become one kernel with a tuple of outputs, so the
// shared buffer is read once (sibling_fusion.cc).
class SiblingFusion : public HloPass {
 public:
  std::string_view name() const override { return "sibling-fusion"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// Makes every sort with is_stable=true stable by construction, as XLA's
// StableSortExpander does: an s32 iota operand along the sort dimension
// (or an existing iota operand) breaks the comparator's ties by position,
// and the extra result is dropped; the sort becomes is_stable=false, so
// the sort kernels need not be stable (stable_sort_expander.cc).
class StableSortExpander : public HloPass {
 public:
  std::string_view name() const override { return "stable-sort-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// Wraps every sort and topk in a kernel of its own (a kind=kCustom fusion
// whose root is the sort), which codegen's sort emitter compiles. Runs
// after the other fusion passes (sort_fusion.cc).
class SortFusion : public HloPass {
 public:
  std::string_view name() const override { return "sort-fusion"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// Removes instructions whose results are never used (roots and parameters
// stay), and computations no instruction calls any more.
class DeadCodeElimination : public HloPass {
 public:
  std::string_view name() const override { return "dce"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

// True when `shape` is an array whose layout (if any) is row-major with no
// tiling, i.e. its buffer is the dense row-major array kiln assumes.
bool HasRowMajorLayout(const Shape& shape);
// A bitcast from `from` to `to` only renames dimensions of one dense
// row-major buffer (same element type and count, row-major layouts).
bool IsRowMajorReshape(const Shape& from, const Shape& to);

}  // namespace kiln::passes
