// RadixSortRewriter: a sort that a stable radix sort computes exactly
// becomes a call of kiln's radix sort kernels (thunks::RadixSortThunk, run
// on CUDA by kernels built from CUB's block primitives), as XLA's GPU
// SortRewriter turns such sorts into CUB DeviceRadixSort calls:
//
//   (K[..., n], V[..., n]) custom-call(keys[, values]), custom_call_target="__kiln$radix_sort",
//       descending=true|false, radix_order="unsigned|signed|float-total|float-partial|float-numpy"
//
// A sort qualifies with one key operand and at most one payload operand
// whose comparator is a single LT or GT compare of the key's two
// parameters (either way round) - or of JAX's canonicalizations of them
// (select(x != x, NaN, select(x == 0, 0, x)), compared in TOTALORDER:
// XLA's "numpy order") - on integer, pred, f16, bf16, f32 or f64 keys and
// a payload of 1, 2, 4 or 8 bytes. Radix order is the comparator's order:
// integers by value, TOTALORDER floats by their total order, the default
// float compare with -0 == +0, and the sort is stable, so ties keep their
// order as the evaluator's stable sort does (is_stable or not). A sort
// along a dimension other than the minor one is transposed there and back.
//
// Runs before StableSortExpander (which would otherwise add a tie-breaking
// operand) and only when compiling for CUDA with the kernels built (an
// artifact for the host alone keeps kiln's kernel-IR sort; one for both
// runs the thunk on the host as well; PipelineOptions::radix_sort).
#pragma once

#include "compiler/passes/hlo_pass.h"

namespace kiln::passes {

inline constexpr char kRadixSortCallTarget[] = "__kiln$radix_sort";

class RadixSortRewriter : public HloPass {
 public:
  std::string_view name() const override { return "radix-sort-rewriter"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace kiln::passes
