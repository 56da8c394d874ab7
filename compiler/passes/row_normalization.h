// Row normalizations: softmax, log-softmax, layer norm, RMS norm and the
// like, as one kernel (XLA's SoftmaxRewriterTriton / normalization
// fusions). A row normalization works on values viewed as [A, K] (A rows of
// K elements, the minor dimensions): its reduces all reduce the K elements
// of each row of the same operand dimensions, their results are per-row
// values that elementwise ops combine and broadcast back along the row,
// where they meet the row's elements again (possibly feeding another such
// reduce: layer norm = mean, then the variance of x - mean), and its
// outputs are [A, K] elements or per-row values.
//
// Kept free of MLIR: the fusion pass (row_normalization_fusion.h) builds
// fusions this analysis accepts and codegen (row_normalization_emitter.h)
// emits exactly those, one row per thread group with the row held on chip.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"

namespace kiln::passes {

// The longest row (K) a row-normalization kernel holds on chip: 1024
// threads with up to 16 elements each. Longer rows keep the reduction
// kernels (and are split by ReductionSplitter, whose threshold this is).
inline constexpr int64_t kMaxRowNormalizationElements = 16384;

// Where an array value sits in the [A, K] view of a row normalization.
enum class RowLevel {
  kNone,     // neither (a parameter read through a broadcast, a scalar, ...)
  kElement,  // its dimensions larger than 1 are those of the rows' [A, K]:
             // element p of it is element p of the row-major [A, K] view
  kRow,      // its dimensions larger than 1 are those of A: one value per row
};

// The [A, K] view: the dimensions of the reduces' operand and which of
// them are reduced (the minor ones).
struct RowShape {
  std::vector<int64_t> operand_dims;
  std::vector<int64_t> reduced_dims;  // sorted
  int64_t rows = 1;                   // A
  int64_t row_elements = 1;           // K
};

// The view of `reduce` when it is a row reduction a row normalization can
// hold: one array operand whose reduced dimensions are its minor ones
// (GroupReduction's M == 1), 1 < K <= kMaxRowNormalizationElements, a
// scalar init value and a to_apply computation.
std::optional<RowShape> RowReductionShape(const hlo::HloInstruction& reduce);

RowLevel LevelOf(const Shape& shape, const RowShape& row);

// Whether `inst` keeps each value in its row when its operands are
// row-level or element-level values of `row` (so a thread holding one row
// may compute it from that row's values alone): a reduce of the same view,
// an elementwise op or a reshape whose result is at the level of its
// operands, or a broadcast of a per-row value along the row (its operand's
// dimensions larger than 1 map to the result's row dimensions, in order).
bool KeepsRows(const hlo::HloInstruction& inst, const RowShape& row);

// A fused computation that is a row normalization.
struct RowNormalization {
  RowShape row;
  // The reduces by stage: a reduce of stage s reads the results of reduces
  // of earlier stages only (stage 0: none).
  std::vector<std::vector<const hlo::HloInstruction*>> stages;
  // Instructions depending on a reduce, in post order (reduces included).
  std::vector<const hlo::HloInstruction*> row_dependent;
  // The outputs (the root's tuple elements, or the root) and their levels.
  std::vector<const hlo::HloInstruction*> outputs;
  std::vector<RowLevel> output_levels;
};

// The row normalization `comp` is, or nullopt: every reduce is a row
// reduction of one view (RowReductionShape), every instruction depending
// on a reduce keeps rows (KeepsRows) and is not an init value, at least one
// element-level op combines a reduce's result, broadcast back along the
// row, with the row's elements (x - max), and every output is an element-
// or row-level array (a tuple root of them for several).
std::optional<RowNormalization> AnalyzeRowNormalization(const hlo::HloComputation& comp);

// Whether `fusion` calls a computation AnalyzeRowNormalization accepts.
bool IsRowNormalizationFusion(const hlo::HloInstruction& fusion);

}  // namespace kiln::passes
