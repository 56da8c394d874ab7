// Reference semantics of topk(x), k=K, largest=true|false: along the last
// dimension, the K greatest (largest=true) or least elements of each row,
// in that order, with their s32 positions in the row. Floats are ordered as
// a TOTALORDER comparison orders them (-NaN < -inf < ... < -0 < +0 < ... <
// +inf < +NaN), as XLA's TopK does, so NaN counts as the greatest value;
// equal elements keep their row order (the lower index first). Written as a
// stable sort of each row's positions, the obviously right way, not a
// selection: the evaluator is an oracle, not a fast path.
#include <algorithm>
#include <numeric>

#include "compiler/evaluator/element_conversion.h"
#include "compiler/evaluator/index_util.h"
#include "compiler/evaluator/op_evaluators.h"

namespace kiln::hlo {

StatusOr<Literal> EvalTopK(const HloInstruction& inst, const Operands& operands) {
  if (operands.size() != 1 || !operands[0]->shape().IsArray())
    return InstError(inst, "topk needs one array operand");
  const Literal& x = *operands[0];
  const std::vector<int64_t>& dims = x.shape().dims();
  if (dims.empty()) return InstError(inst, "topk needs an operand of rank >= 1");
  const int64_t n = dims.back();
  const int64_t k = inst.GetInt("k", -1);
  if (k < 0 || k > n) return InstError(inst, "topk k must be in [0, " + std::to_string(n) + "]");
  const bool largest = inst.GetBool("largest", true);
  const ElementType t = x.element_type();
  if (IsComplex(t)) return InstError(inst, "topk does not order complex values");
  std::vector<int64_t> out_dims = dims;
  out_dims.back() = k;
  Literal values(Shape(t, out_dims));
  Literal indices(Shape(ElementType::kS32, out_dims));
  const int64_t rows = n == 0 ? 0 : x.element_count() / n;
  // One ordering key per element: signed/unsigned integers by value, floats
  // by their total-order key (unsigned keys fit since they are compared as
  // uint64 below).
  auto less = [&](int64_t a, int64_t b) {
    if (IsFloat(t)) return TotalOrderKey(t, RawBits(x, a)) < TotalOrderKey(t, RawBits(x, b));
    if (IsUnsignedInteger(t) || IsPred(t)) return x.GetU64(a) < x.GetU64(b);
    return x.GetS64(a) < x.GetS64(b);
  };
  std::vector<int64_t> order(n);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * n;
    std::iota(order.begin(), order.end(), base);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return largest ? less(b, a) : less(a, b); });
    for (int64_t j = 0; j < k; ++j) {
      values.CopyElementFrom(r * k + j, x, order[j]);
      indices.SetS64(r * k + j, order[j] - base);
    }
  }
  std::vector<Literal> results;
  results.push_back(std::move(values));
  results.push_back(std::move(indices));
  return Literal::MakeTuple(std::move(results));
}

// XLA's "TopK" custom-call (XLA CPU dumps keep it; TopkDecomposer makes it
// a sort of (values, iota) by the called comparator, sliced to k): each
// row's positions stably sorted by the comparator, called on (value a,
// value b, index a, index b) as its parameter count asks, the first k kept.
// Any comparator, so it checks TopKCustomCallRewriter's GT/LT reading.
StatusOr<Literal> EvalTopKCustomCall(const HloInstruction& inst, const Operands& operands, EvalContext& ctx) {
  std::vector<HloComputation*> called = inst.called_computations();
  if (operands.size() != 1 || !operands[0]->shape().IsArray() || operands[0]->shape().rank() < 1 ||
      called.size() != 1 || !inst.shape().IsTuple() || inst.shape().tuple_size() != 2 ||
      !inst.shape().tuple_shape(0).IsArray() || inst.shape().tuple_shape(0).rank() != operands[0]->shape().rank())
    return InstError(inst, "TopK takes one array operand and a comparator and returns (values, indices)");
  const HloComputation& cmp = *called[0];
  if (cmp.parameter_count() != 2 && cmp.parameter_count() != 4)
    return InstError(inst, "TopK's comparator takes (a, b) or (a, b, index a, index b)");
  const Literal& x = *operands[0];
  const int64_t n = x.shape().dims().back();
  const int64_t k = inst.shape().tuple_shape(0).dims().back();
  if (k > n) return InstError(inst, "TopK k " + std::to_string(k) + " exceeds the row length " + std::to_string(n));
  std::vector<int64_t> out_dims = x.shape().dims();
  out_dims.back() = k;
  Literal values(Shape(x.element_type(), out_dims));
  Literal indices(Shape(ElementType::kS32, out_dims));
  auto scalar = [&](int64_t at) {
    Literal v(Shape(x.element_type(), {}));
    v.CopyElementFrom(0, x, at);
    return v;
  };
  Status failure = Status::Ok();
  auto before = [&](int64_t a, int64_t b) {
    if (!failure.ok()) return false;
    std::vector<Literal> args;
    args.push_back(scalar(a));
    args.push_back(scalar(b));
    if (cmp.parameter_count() == 4) {
      args.push_back(Literal::Scalar(ElementType::kS32, a % n));
      args.push_back(Literal::Scalar(ElementType::kS32, b % n));
    }
    StatusOr<Literal> r = ctx.Call(cmp, std::move(args));
    if (!r.ok()) failure = r.status();
    return r.ok() && r->GetPred(0);
  };
  const int64_t rows = n == 0 ? 0 : x.element_count() / n;
  std::vector<int64_t> order(n);
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(order.begin(), order.end(), r * n);
    std::stable_sort(order.begin(), order.end(), before);
    KILN_RETURN_IF_ERROR(failure);
    for (int64_t j = 0; j < k; ++j) {
      values.CopyElementFrom(r * k + j, x, order[j]);
      indices.SetS64(r * k + j, order[j] - r * n);
    }
  }
  std::vector<Literal> results;
  results.push_back(std::move(values));
  results.push_back(std::move(indices));
  return Literal::MakeTuple(std::move(results));
}

}  // namespace kiln::hlo
