// Shape inference internals: the per-family inference functions behind
// InferShape (compiler/hlo/verifier.h) and the helpers they share.
//
// Semantics follow XLA's shape_inference.cc and hlo_verifier.cc in the
// strict configuration (no mixed precision, layouts ignored): an inference
// function validates the instruction's operands and attributes and returns
// the result shape without layout. Outputs whose dimensions HLO takes from
// the declared shape (broadcast, reshape, iota, ...) return the declared
// dimensions after checking them against the operands.
//
// Every error message begins with the instruction's DebugName() so that the
// caller can report it as is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/shape.h"
#include "common/status.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"

namespace kiln::hlo::shape_inference {

// --- Messages ---
// "<inst.DebugName()>: <message>".
Status Fail(const HloInstruction& inst, const std::string& message);
// Shape without layout, e.g. "f32[2,3]".
std::string Str(const Shape& shape);
// "{1,2,3}".
std::string Str(const std::vector<int64_t>& values);

// --- Attributes (tolerant of int-vs-list spellings) ---
// An integer attribute, or a one-element integer list.
std::optional<int64_t> IntAttr(const HloInstruction& inst, std::string_view name);
// An integer list attribute; a single integer reads as a one-element list.
std::vector<int64_t> IntsAttr(const HloInstruction& inst, std::string_view name);
// A bool attribute, also accepting the words true/false.
bool BoolAttr(const HloInstruction& inst, std::string_view name, bool default_value);

// --- Shape helpers ---
Shape WithoutLayout(Shape shape);
Status ExpectArray(const HloInstruction& inst, const Shape& shape, const std::string& what);
// `dims` are distinct and in [0, rank).
Status CheckDims(const HloInstruction& inst, const std::vector<int64_t>& dims, int64_t rank,
                 const std::string& what);
Status CheckSortedDims(const HloInstruction& inst, const std::vector<int64_t>& dims,
                       const std::string& what);
bool Contains(const std::vector<int64_t>& values, int64_t value);

// --- Called computations ---
struct Signature {
  std::string name;
  std::vector<Shape> parameters;
  Shape result;
};
// The single computation named by attribute `attr` (to_apply, body, ...).
StatusOr<const HloComputation*> Callee(const HloInstruction& inst, std::string_view attr);
// Parameter and root shapes of `computation`, validated to be well formed.
StatusOr<Signature> SignatureOf(const HloInstruction& inst, const HloComputation* computation);
StatusOr<Signature> CalleeSignature(const HloInstruction& inst, std::string_view attr);
// XLA's VerifyReducerShape, strict: the reducer of N inputs takes 2N scalars
// (accumulators, then elements) and returns a scalar (N == 1) or an N-tuple
// of scalars; accumulator i, element i, init i and input i share a type.
Status CheckReducer(const HloInstruction& inst, const Signature& reducer,
                    const std::vector<Shape>& init_shapes,
                    const std::vector<ElementType>& input_types);

// --- Windows (reduce-window, select-and-scatter, convolution) ---
// Output dimensions of sliding `window` over `base_dims`.
StatusOr<std::vector<int64_t>> WindowOutputDims(const HloInstruction& inst,
                                                const std::vector<int64_t>& base_dims,
                                                const Window& window);
// The "window" attribute, or an empty window when absent (rank-0 operands).
Window WindowAttr(const HloInstruction& inst);

// --- Per-family inference functions ---
// Elementwise (shape_inference_elementwise.cc).
StatusOr<Shape> InferUnary(const HloInstruction& inst);
StatusOr<Shape> InferBinary(const HloInstruction& inst);
StatusOr<Shape> InferClamp(const HloInstruction& inst);
StatusOr<Shape> InferSelect(const HloInstruction& inst);
StatusOr<Shape> InferConvert(const HloInstruction& inst);
StatusOr<Shape> InferBitcastConvert(const HloInstruction& inst);
StatusOr<Shape> InferStochasticConvert(const HloInstruction& inst);
StatusOr<Shape> InferReducePrecision(const HloInstruction& inst);
StatusOr<Shape> InferMap(const HloInstruction& inst);

// Data movement (shape_inference_data_movement.cc).
StatusOr<Shape> InferBroadcast(const HloInstruction& inst);
StatusOr<Shape> InferReshape(const HloInstruction& inst);
StatusOr<Shape> InferDynamicReshape(const HloInstruction& inst);
StatusOr<Shape> InferBitcast(const HloInstruction& inst);
StatusOr<Shape> InferTranspose(const HloInstruction& inst);
StatusOr<Shape> InferSlice(const HloInstruction& inst);
StatusOr<Shape> InferDynamicSlice(const HloInstruction& inst);
StatusOr<Shape> InferDynamicUpdateSlice(const HloInstruction& inst);
StatusOr<Shape> InferConcatenate(const HloInstruction& inst);
StatusOr<Shape> InferPad(const HloInstruction& inst);
StatusOr<Shape> InferReverse(const HloInstruction& inst);
StatusOr<Shape> InferIota(const HloInstruction& inst);
StatusOr<Shape> InferTuple(const HloInstruction& inst);
StatusOr<Shape> InferGetTupleElement(const HloInstruction& inst);

// Reductions and sorting (shape_inference_reduction.cc).
StatusOr<Shape> InferReduce(const HloInstruction& inst);
StatusOr<Shape> InferReduceWindow(const HloInstruction& inst);
StatusOr<Shape> InferSelectAndScatter(const HloInstruction& inst);
StatusOr<Shape> InferSort(const HloInstruction& inst);
StatusOr<Shape> InferTopK(const HloInstruction& inst);

// Contractions and linear algebra (shape_inference_contraction.cc).
StatusOr<Shape> InferDot(const HloInstruction& inst);
StatusOr<Shape> InferConvolution(const HloInstruction& inst);
StatusOr<Shape> InferFft(const HloInstruction& inst);
StatusOr<Shape> InferCholesky(const HloInstruction& inst);
StatusOr<Shape> InferTriangularSolve(const HloInstruction& inst);
StatusOr<Shape> InferBatchNorm(const HloInstruction& inst);

// Gather and scatter (shape_inference_indexing.cc).
StatusOr<Shape> InferGather(const HloInstruction& inst);
StatusOr<Shape> InferScatter(const HloInstruction& inst);

// Calls, control flow, tokens, leaves (shape_inference_control.cc).
StatusOr<Shape> InferCall(const HloInstruction& inst);
StatusOr<Shape> InferFusion(const HloInstruction& inst);
StatusOr<Shape> InferWhile(const HloInstruction& inst);
StatusOr<Shape> InferConditional(const HloInstruction& inst);
StatusOr<Shape> InferAsync(const HloInstruction& inst);
StatusOr<Shape> InferParameter(const HloInstruction& inst);
StatusOr<Shape> InferConstant(const HloInstruction& inst);
StatusOr<Shape> InferTokenOp(const HloInstruction& inst);     // after-all, add-dependency
StatusOr<Shape> InferHostTransfer(const HloInstruction& inst);  // send/recv/infeed/outfeed
StatusOr<Shape> InferCopyStartDone(const HloInstruction& inst);
StatusOr<Shape> InferRng(const HloInstruction& inst);         // rng, rng-bit-generator, ...
StatusOr<Shape> InferDimensionSize(const HloInstruction& inst);

// Collectives (shape_inference_collective.cc).
StatusOr<Shape> InferCollective(const HloInstruction& inst);

}  // namespace kiln::hlo::shape_inference
