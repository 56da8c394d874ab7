// Helpers shared by the evaluator's reduction, window and indexing ops:
// walking multi-indices in a chosen dimension order, validating
// dimension-number attributes, window geometry, and calling a computation
// on scalar arguments.
//
// These ops read attributes that the verifier may not have checked, so every
// helper here validates before it indexes anything.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/literal.h"
#include "common/shape.h"
#include "common/status.h"
#include "compiler/evaluator/op_evaluators.h"
#include "compiler/hlo/attributes.h"
#include "compiler/hlo/instruction.h"

namespace kiln::hlo {

// "<inst debug name>: <message>".
Status InstError(const HloInstruction& inst, const std::string& message);

// Advances `index` over `dims`, incrementing the dimensions listed in
// `order` (fastest first); dimensions not listed stay fixed. Returns false
// after the last index (leaving the listed dimensions at 0).
bool NextIndexInOrder(const std::vector<int64_t>& dims, const std::vector<int64_t>& order,
                      std::vector<int64_t>& index);

// The shape's minor-to-major order when it is a permutation of its
// dimensions, else the row-major default {rank-1, ..., 0}. XLA's evaluator
// walks some index spaces in layout order (ShapeUtil::ForEachIndex), which
// is observable when the applied computation is order sensitive.
std::vector<int64_t> LayoutOrder(const Shape& shape);

// Checks that `dims` holds distinct values in [0, bound) (and, when
// `sorted`, that they increase); `what` names the attribute in errors.
Status CheckDimList(const HloInstruction& inst, const std::vector<int64_t>& dims, int64_t bound,
                    std::string_view what, bool sorted);

bool Contains(const std::vector<int64_t>& values, int64_t value);

// Copies element `src_index` of `src` to `dst_index` of `dst`, converting
// by value class when the element types differ.
void CopyConverted(Literal& dst, int64_t dst_index, const Literal& src, int64_t src_index);

// The instruction's window= attribute; absent means the empty window.
Window InstructionWindow(const HloInstruction& inst);

// Validates `window` for an operand of dimensions `base_dims` and returns
// the dimensions of the windowed output (XLA's StridedBound over the padded,
// base-dilated operand with the window-dilated window).
StatusOr<std::vector<int64_t>> WindowOutputDims(const HloInstruction& inst, const Window& window,
                                                const std::vector<int64_t>& base_dims);

// The operand index that window position `win` of output position `out`
// reads; false when it falls into padding or a base-dilation hole.
bool WindowBaseIndex(const Window& window, const std::vector<int64_t>& base_dims,
                     const std::vector<int64_t>& out, const std::vector<int64_t>& win,
                     std::vector<int64_t>& base);

// Calls a computation whose parameters are all scalars, reusing the
// argument literals between calls.
class ScalarCaller {
 public:
  // `attr` names the computation attribute of `inst` (to_apply, select,
  // scatter); the computation must take `num_params` scalar parameters.
  static StatusOr<ScalarCaller> Create(const HloInstruction& inst, std::string_view attr,
                                       int64_t num_params);

  const HloComputation& computation() const { return *computation_; }
  const Literal& arg(int64_t i) const { return args_[i]; }
  // Sets argument i from an element of `src`, converting to the
  // parameter's element type if needed.
  void SetArg(int64_t i, const Literal& src, int64_t src_index) {
    CopyConverted(args_[i], 0, src, src_index);
  }
  // Calls the computation; on success result(j), j < num_results, are its
  // scalar results (a single scalar, or the elements of a tuple).
  Status Run(EvalContext& ctx, int64_t num_results);
  const Literal& result(int64_t j) const { return results_[j]; }
  // Run() for a predicate-returning computation (select, comparators).
  StatusOr<bool> RunPredicate(EvalContext& ctx);

 private:
  ScalarCaller(const HloInstruction& inst, const HloComputation& computation)
      : inst_(&inst), computation_(&computation) {}

  const HloInstruction* inst_;
  const HloComputation* computation_;
  std::vector<Literal> args_;
  std::vector<Literal> results_;
};

}  // namespace kiln::hlo
