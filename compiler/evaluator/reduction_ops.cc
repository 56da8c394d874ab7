// Reference semantics of reduce, reduce-window, select-and-scatter and sort,
// following XLA's HloEvaluator (xla/hlo/evaluator) so that results match it
// bit for bit wherever the evaluation order is observable:
//
//  * reduce combines each output's inputs sequentially, starting from the
//    init value, in the input layout's minor-to-major order (XLA walks the
//    reduced dimensions with ShapeUtil::ForEachIndex). As in XLA, a
//    single-input reduction of a real float type whose computation is a
//    plain scalar add is summed in double and rounded once at the end
//    (XLA sums chunks of 512 elements and adds each chunk's sum to the
//    running total).
//  * reduce-window and select-and-scatter walk windows in row-major order
//    and skip padding and base-dilation holes; select-and-scatter keeps the
//    current selection while select(current, candidate) is true and calls
//    the scatter computation as scatter(source, accumulated) as XLA does.
//  * sort uses a stable merge sort, also for is_stable=false (any order of
//    equal keys is valid there), written here so that comparators which are
//    not strict weak orders (NaN with LT) give some permutation, never UB.
#include <algorithm>
#include <numeric>

#include "compiler/evaluator/index_util.h"
#include "compiler/evaluator/op_evaluators.h"

namespace kiln::hlo {
namespace {

// XLA's fast path applies to a computation that is exactly
// add(parameter, other parameter) on scalars.
bool IsScalarAdd(const HloComputation& computation) {
  const HloInstruction* root = computation.root();
  if (!root || root->opcode() != HloOpcode::kAdd || root->operand_count() != 2 ||
      computation.parameter_count() != 2)
    return false;
  const HloInstruction* lhs = root->operand(0);
  const HloInstruction* rhs = root->operand(1);
  return lhs != rhs && lhs->opcode() == HloOpcode::kParameter &&
         rhs->opcode() == HloOpcode::kParameter && lhs->shape().IsScalar() &&
         rhs->shape().IsScalar();
}

// Operands of a variadic reduction: N arrays of equal dimensions followed by
// N scalar init values.
struct InputsAndInits {
  std::vector<const Literal*> inputs;
  std::vector<const Literal*> inits;
};

StatusOr<InputsAndInits> SplitInputsAndInits(const HloInstruction& inst, const Operands& operands) {
  if (operands.empty() || operands.size() % 2 != 0)
    return InstError(inst, "expects N inputs followed by N init values, got " +
                               std::to_string(operands.size()) + " operands");
  InputsAndInits split;
  size_t n = operands.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    const Literal& input = *operands[i];
    const Literal& init = *operands[n + i];
    if (!input.shape().IsArray() || !input.shape().SameDimensions(operands[0]->shape()))
      return InstError(inst, "input " + std::to_string(i) + " has shape " +
                                 input.shape().ToString(false) +
                                 "; all inputs must be arrays of the same dimensions");
    if (!init.shape().IsScalar())
      return InstError(inst, "init value " + std::to_string(i) + " must be a scalar, got " +
                                 init.shape().ToString(false));
    split.inputs.push_back(&input);
    split.inits.push_back(&init);
  }
  return split;
}

// Result literals for the n outputs of a variadic op (a tuple shape, or one
// array), each checked to have dimensions `dims`.
StatusOr<std::vector<Literal>> MakeOutputs(const HloInstruction& inst, size_t n,
                                           const std::vector<int64_t>& dims) {
  const Shape& shape = inst.shape();
  std::vector<Shape> shapes = shape.IsTuple() ? shape.tuple_shapes() : std::vector<Shape>{shape};
  if (shapes.size() != n)
    return InstError(inst, "declares " + std::to_string(shapes.size()) + " results, expected " +
                               std::to_string(n));
  std::vector<Literal> outputs;
  for (const Shape& s : shapes) {
    if (!s.IsArray() || s.dims() != dims)
      return InstError(inst, "result shape " + s.ToString(false) +
                                 " does not have the expected dimensions " + IntListToString(dims));
    outputs.emplace_back(s);
  }
  return outputs;
}

Literal PackOutputs(const HloInstruction& inst, std::vector<Literal> outputs) {
  if (inst.shape().IsTuple()) return Literal::MakeTuple(std::move(outputs));
  return std::move(outputs[0]);
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// ---------------------------------------------------------------- reduce

// The reduced positions of one reduce output, as linear offsets from the
// output's base position in the input, visited in XLA's order: the input
// layout's minor-to-major order restricted to the reduced dimensions.
class ReducedPositions {
 public:
  ReducedPositions(const std::vector<int64_t>& dims, const std::vector<int64_t>& reduced,
                   const Shape& layout_shape)
      : dims_(dims), reduced_(reduced), strides_(RowMajorStrides(dims)) {
    for (int64_t d : LayoutOrder(layout_shape))
      if (Contains(reduced, d)) order_.push_back(d);
    for (int64_t d : reduced) count_ *= dims[d];
  }

  // Calls f(offset) for each position in order; stops at the first error.
  template <typename F>
  Status ForEach(F f) const {
    if (count_ == 0) return Status::Ok();
    std::vector<int64_t> index(dims_.size(), 0);
    do {
      int64_t offset = 0;
      for (int64_t d : reduced_) offset += index[d] * strides_[d];
      KILN_RETURN_IF_ERROR(f(offset));
    } while (NextIndexInOrder(dims_, order_, index));
    return Status::Ok();
  }

 private:
  std::vector<int64_t> dims_, reduced_, strides_, order_;
  int64_t count_ = 1;
};

// XLA's fast path for a float add reduction: the sum in double, starting
// from the init value and adding the elements chunk by chunk (each chunk of
// 512 summed from 0.0 first), rounded once when stored.
double FastAddSum(const Literal& input, int64_t base, const ReducedPositions& positions,
                  double init) {
  constexpr int kChunk = 512;
  double total = init, chunk = 0.0;
  int in_chunk = 0;
  Status ok = positions.ForEach([&](int64_t offset) {
    chunk += input.GetF64(base + offset);
    if (++in_chunk == kChunk) {
      total += chunk;
      chunk = 0.0;
      in_chunk = 0;
    }
    return Status::Ok();
  });
  (void)ok;  // the callback never fails
  return in_chunk > 0 ? total + chunk : total;
}

StatusOr<Literal> EvalReduce(const HloInstruction& inst, const Operands& operands,
                             EvalContext& ctx) {
  KILN_ASSIGN_OR_RETURN(InputsAndInits in, SplitInputsAndInits(inst, operands));
  const size_t n = in.inputs.size();
  const std::vector<int64_t>& dims = in.inputs[0]->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> reduced = inst.dimensions();
  KILN_RETURN_IF_ERROR(CheckDimList(inst, reduced, rank, "dimensions", /*sorted=*/false));
  std::vector<int64_t> kept, out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (Contains(reduced, d)) continue;
    kept.push_back(d);
    out_dims.push_back(dims[d]);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> outputs, MakeOutputs(inst, n, out_dims));
  KILN_ASSIGN_OR_RETURN(ScalarCaller call, ScalarCaller::Create(inst, "to_apply", 2 * n));

  // The operand instruction's shape carries the layout XLA would iterate in.
  const Shape& layout_shape = inst.operand_count() > 0 && inst.operand(0)->shape().rank() == rank
                                  ? inst.operand(0)->shape()
                                  : in.inputs[0]->shape();
  const ReducedPositions positions(dims, reduced, layout_shape);
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  const bool fast_add =
      n == 1 && IsFloat(in.inits[0]->element_type()) && IsScalarAdd(call.computation());
  const int64_t out_count = Product(out_dims);
  std::vector<int64_t> out_index(out_dims.size(), 0);
  for (int64_t o = 0; o < out_count; ++o, NextIndex(out_dims, out_index)) {
    int64_t base = 0;
    for (size_t k = 0; k < kept.size(); ++k) base += out_index[k] * strides[kept[k]];
    if (fast_add) {
      outputs[0].SetF64(o, FastAddSum(*in.inputs[0], base, positions, in.inits[0]->GetF64(0)));
      continue;
    }
    for (size_t i = 0; i < n; ++i) call.SetArg(i, *in.inits[i], 0);
    KILN_RETURN_IF_ERROR(positions.ForEach([&](int64_t offset) {
      for (size_t i = 0; i < n; ++i) call.SetArg(n + i, *in.inputs[i], base + offset);
      KILN_RETURN_IF_ERROR(call.Run(ctx, n));
      for (size_t i = 0; i < n; ++i) call.SetArg(i, call.result(i), 0);
      return Status::Ok();
    }));
    for (size_t i = 0; i < n; ++i) CopyConverted(outputs[i], o, call.arg(i), 0);
  }
  return PackOutputs(inst, std::move(outputs));
}

// --------------------------------------------------------- reduce-window

StatusOr<Literal> EvalReduceWindow(const HloInstruction& inst, const Operands& operands,
                                   EvalContext& ctx) {
  KILN_ASSIGN_OR_RETURN(InputsAndInits in, SplitInputsAndInits(inst, operands));
  const size_t n = in.inputs.size();
  const std::vector<int64_t>& dims = in.inputs[0]->shape().dims();
  const Window window = InstructionWindow(inst);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> out_dims, WindowOutputDims(inst, window, dims));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> outputs, MakeOutputs(inst, n, out_dims));
  KILN_ASSIGN_OR_RETURN(ScalarCaller call, ScalarCaller::Create(inst, "to_apply", 2 * n));

  std::vector<int64_t> window_dims;
  for (const WindowDim& w : window.dims) window_dims.push_back(w.size);
  const int64_t out_count = Product(out_dims);
  std::vector<int64_t> out_index(out_dims.size(), 0);
  std::vector<int64_t> base(dims.size(), 0);
  for (int64_t o = 0; o < out_count; ++o, NextIndex(out_dims, out_index)) {
    for (size_t i = 0; i < n; ++i) call.SetArg(i, *in.inits[i], 0);
    std::vector<int64_t> win(window_dims.size(), 0);
    do {
      if (!WindowBaseIndex(window, dims, out_index, win, base)) continue;
      int64_t linear = LinearIndex(dims, base);
      for (size_t i = 0; i < n; ++i) call.SetArg(n + i, *in.inputs[i], linear);
      KILN_RETURN_IF_ERROR(call.Run(ctx, n));
      for (size_t i = 0; i < n; ++i) call.SetArg(i, call.result(i), 0);
    } while (NextIndex(window_dims, win));
    for (size_t i = 0; i < n; ++i) CopyConverted(outputs[i], o, call.arg(i), 0);
  }
  return PackOutputs(inst, std::move(outputs));
}

// ---------------------------------------------------- select-and-scatter

StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& inst, const Operands& operands,
                                       EvalContext& ctx) {
  if (operands.size() != 3)
    return InstError(inst, "select-and-scatter takes operand, source and init value");
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Literal& init = *operands[2];
  if (!operand.shape().IsArray() || !source.shape().IsArray() || !init.shape().IsScalar())
    return InstError(inst, "needs array operand and source and a scalar init value");
  const std::vector<int64_t>& dims = operand.shape().dims();
  const Window window = InstructionWindow(inst);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> window_out_dims, WindowOutputDims(inst, window, dims));
  if (source.shape().dims() != window_out_dims)
    return InstError(inst, "source shape " + source.shape().ToString(false) +
                               " does not match the window output dimensions " +
                               IntListToString(window_out_dims));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> outputs, MakeOutputs(inst, 1, dims));
  if (inst.shape().IsTuple()) return InstError(inst, "result must be an array");
  KILN_ASSIGN_OR_RETURN(ScalarCaller select, ScalarCaller::Create(inst, "select", 2));
  KILN_ASSIGN_OR_RETURN(ScalarCaller scatter, ScalarCaller::Create(inst, "scatter", 2));

  Literal& result = outputs[0];
  for (int64_t i = 0; i < result.element_count(); ++i) CopyConverted(result, i, init, 0);

  std::vector<int64_t> window_dims;
  for (const WindowDim& w : window.dims) window_dims.push_back(w.size);
  std::vector<int64_t> source_index(window_out_dims.size(), 0);
  std::vector<int64_t> base(dims.size(), 0);
  for (int64_t s = 0; s < source.element_count(); ++s, NextIndex(window_out_dims, source_index)) {
    // Pick the window element: the first in-bounds one, replaced by each
    // later candidate for which select(selected, candidate) is false.
    int64_t selected = -1;
    std::vector<int64_t> win(window_dims.size(), 0);
    do {
      if (!WindowBaseIndex(window, dims, source_index, win, base)) continue;
      int64_t candidate = LinearIndex(dims, base);
      if (selected < 0) {
        selected = candidate;
        continue;
      }
      select.SetArg(0, operand, selected);
      select.SetArg(1, operand, candidate);
      KILN_ASSIGN_OR_RETURN(bool keep, select.RunPredicate(ctx));
      if (!keep) selected = candidate;
    } while (NextIndex(window_dims, win));
    if (selected < 0) continue;  // the window lies entirely in padding
    scatter.SetArg(0, source, s);
    scatter.SetArg(1, result, selected);
    KILN_RETURN_IF_ERROR(scatter.Run(ctx, 1));
    CopyConverted(result, selected, scatter.result(0), 0);
  }
  return std::move(result);
}

// ------------------------------------------------------------------ sort

// Stable bottom-up merge sort of `items`. A merge takes the right-hand
// element only when less(right, left) holds, so ties keep their order and
// any comparator, even an inconsistent one, yields a permutation.
template <typename Less>
Status StableMergeSort(std::vector<int64_t>& items, Less less) {
  const size_t n = items.size();
  std::vector<int64_t> buffer(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        KILN_ASSIGN_OR_RETURN(bool take_right, less(items[j], items[i]));
        buffer[k++] = take_right ? items[j++] : items[i++];
      }
      while (i < mid) buffer[k++] = items[i++];
      while (j < hi) buffer[k++] = items[j++];
    }
    items.swap(buffer);
  }
  return Status::Ok();
}

StatusOr<Literal> EvalSort(const HloInstruction& inst, const Operands& operands, EvalContext& ctx) {
  if (operands.empty()) return InstError(inst, "sort needs at least one operand");
  const size_t n = operands.size();
  const std::vector<int64_t>& dims = operands[0]->shape().dims();
  for (const Literal* op : operands)
    if (!op->shape().IsArray() || op->shape().dims() != dims)
      return InstError(inst, "sort operands must be arrays of the same dimensions");
  std::vector<int64_t> sort_dims = inst.dimensions();
  if (sort_dims.size() != 1)
    return InstError(inst, "sort needs exactly one entry in dimensions");
  KILN_RETURN_IF_ERROR(CheckDimList(inst, sort_dims, static_cast<int64_t>(dims.size()),
                                    "dimensions", /*sorted=*/false));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> outputs, MakeOutputs(inst, n, dims));
  KILN_ASSIGN_OR_RETURN(ScalarCaller compare, ScalarCaller::Create(inst, "to_apply", 2 * n));
  if (Product(dims) == 0) return PackOutputs(inst, std::move(outputs));

  const int64_t sort_dim = sort_dims[0];
  const int64_t length = dims[sort_dim];
  const int64_t stride = RowMajorStrides(dims)[sort_dim];
  // Visit every row along sort_dim: iterate the other dimensions with the
  // sort dimension pinned to 0.
  std::vector<int64_t> row_dims = dims;
  row_dims[sort_dim] = 1;
  std::vector<int64_t> row(dims.size(), 0);
  std::vector<int64_t> order(length);
  do {
    const int64_t base = LinearIndex(dims, row);
    std::iota(order.begin(), order.end(), 0);
    auto less = [&](int64_t a, int64_t b) -> StatusOr<bool> {
      for (size_t i = 0; i < n; ++i) {
        compare.SetArg(2 * i, *operands[i], base + a * stride);
        compare.SetArg(2 * i + 1, *operands[i], base + b * stride);
      }
      return compare.RunPredicate(ctx);
    };
    KILN_RETURN_IF_ERROR(StableMergeSort(order, less));
    for (size_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < length; ++k)
        CopyConverted(outputs[i], base + k * stride, *operands[i], base + order[k] * stride);
  } while (NextIndex(row_dims, row));
  return PackOutputs(inst, std::move(outputs));
}

}  // namespace

StatusOr<Literal> EvalReductionOp(const HloInstruction& inst, const Operands& operands,
                                  EvalContext& ctx) {
  switch (inst.opcode()) {
    case HloOpcode::kReduce:
      return EvalReduce(inst, operands, ctx);
    case HloOpcode::kReduceWindow:
      return EvalReduceWindow(inst, operands, ctx);
    case HloOpcode::kSelectAndScatter:
      return EvalSelectAndScatter(inst, operands, ctx);
    case HloOpcode::kSort:
      return EvalSort(inst, operands, ctx);
    default:
      return UnsupportedOp(inst);
  }
}

}  // namespace kiln::hlo
