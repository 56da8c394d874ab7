// Implementation of the evaluator's shared index, window and scalar-call
// helpers (see index_util.h).
#include "compiler/evaluator/index_util.h"

#include <algorithm>
#include <cstdlib>

namespace kiln::hlo {

Status InstError(const HloInstruction& inst, const std::string& message) {
  return Error(inst.DebugName() + ": " + message);
}

bool NextIndexInOrder(const std::vector<int64_t>& dims, const std::vector<int64_t>& order,
                      std::vector<int64_t>& index) {
  for (int64_t d : order) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

std::vector<int64_t> LayoutOrder(const Shape& shape) {
  std::vector<int64_t> order = shape.MinorToMajor();
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = static_cast<int64_t>(sorted.size()) == shape.rank();
  for (size_t i = 0; permutation && i < sorted.size(); ++i)
    permutation = sorted[i] == static_cast<int64_t>(i);
  if (permutation) return order;
  order.clear();
  for (int64_t d = shape.rank() - 1; d >= 0; --d) order.push_back(d);
  return order;
}

Status CheckDimList(const HloInstruction& inst, const std::vector<int64_t>& dims, int64_t bound,
                    std::string_view what, bool sorted) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= bound)
      return InstError(inst, std::string(what) + " entry " + std::to_string(dims[i]) +
                                 " is out of range [0, " + std::to_string(bound) + ")");
    for (size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i])
        return InstError(inst, std::string(what) + " repeats " + std::to_string(dims[i]));
      if (sorted && dims[j] > dims[i])
        return InstError(inst, std::string(what) + " must be sorted");
    }
  }
  return Status::Ok();
}

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

void CopyConverted(Literal& dst, int64_t dst_index, const Literal& src, int64_t src_index) {
  ElementType t = dst.element_type();
  if (t == src.element_type()) {
    dst.CopyElementFrom(dst_index, src, src_index);
  } else if (IsComplex(t)) {
    dst.SetC128(dst_index, src.GetC128(src_index));
  } else if (IsFloat(t)) {
    dst.SetF64(dst_index, src.GetF64(src_index));
  } else if (IsPred(t)) {
    dst.SetPred(dst_index, src.GetF64(src_index) != 0);
  } else if (IsSignedInteger(t)) {
    dst.SetS64(dst_index, src.GetS64(src_index));
  } else {
    dst.SetU64(dst_index, src.GetU64(src_index));
  }
}

Window InstructionWindow(const HloInstruction& inst) {
  const Window* window = inst.GetAttribute<Window>("window");
  return window ? *window : Window{};
}

StatusOr<std::vector<int64_t>> WindowOutputDims(const HloInstruction& inst, const Window& window,
                                                const std::vector<int64_t>& base_dims) {
  if (window.dims.size() != base_dims.size())
    return InstError(inst, "window has " + std::to_string(window.dims.size()) +
                               " dimensions but the operand has rank " +
                               std::to_string(base_dims.size()));
  std::vector<int64_t> out;
  for (size_t i = 0; i < base_dims.size(); ++i) {
    const WindowDim& w = window.dims[i];
    if (w.size < 1 || w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1)
      return InstError(inst, "window dimension " + std::to_string(i) +
                                 " needs positive size, stride and dilations");
    // Bound the factors so the products below cannot overflow.
    constexpr int64_t kLimit = int64_t{1} << 31;
    if (w.size > kLimit || w.stride > kLimit || w.lhs_dilation > kLimit ||
        w.rhs_dilation > kLimit || std::abs(w.pad_low) > kLimit || std::abs(w.pad_high) > kLimit ||
        (base_dims[i] > 0 && w.lhs_dilation > (int64_t{1} << 62) / base_dims[i]))
      return InstError(inst, "window dimension " + std::to_string(i) + " is too large");
    int64_t dilated_base = base_dims[i] == 0 ? 0 : (base_dims[i] - 1) * w.lhs_dilation + 1;
    int64_t padded = dilated_base + w.pad_low + w.pad_high;
    int64_t dilated_window = (w.size - 1) * w.rhs_dilation + 1;
    out.push_back(padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1);
  }
  return out;
}

bool WindowBaseIndex(const Window& window, const std::vector<int64_t>& base_dims,
                     const std::vector<int64_t>& out, const std::vector<int64_t>& win,
                     std::vector<int64_t>& base) {
  for (size_t i = 0; i < base_dims.size(); ++i) {
    const WindowDim& w = window.dims[i];
    // Position in the padded, base-dilated operand; real elements sit at
    // pad_low + k * lhs_dilation.
    int64_t pos = out[i] * w.stride + win[i] * w.rhs_dilation - w.pad_low;
    if (pos < 0 || pos % w.lhs_dilation != 0) return false;
    pos /= w.lhs_dilation;
    if (pos >= base_dims[i]) return false;
    base[i] = pos;
  }
  return true;
}

StatusOr<ScalarCaller> ScalarCaller::Create(const HloInstruction& inst, std::string_view attr,
                                           int64_t num_params) {
  const HloComputation* computation = inst.called_computation(attr);
  if (!computation)
    return InstError(inst, "missing computation attribute " + std::string(attr));
  if (computation->parameter_count() != num_params)
    return InstError(inst, "computation " + computation->name() + " takes " +
                               std::to_string(computation->parameter_count()) +
                               " parameters, expected " + std::to_string(num_params));
  ScalarCaller caller(inst, *computation);
  for (int64_t i = 0; i < num_params; ++i) {
    const HloInstruction* param = computation->parameter(i);
    if (!param || !param->shape().IsScalar())
      return InstError(inst, "parameter " + std::to_string(i) + " of computation " +
                                 computation->name() + " must be a scalar");
    caller.args_.emplace_back(Shape::Scalar(param->shape().element_type()));
  }
  return caller;
}

Status ScalarCaller::Run(EvalContext& ctx, int64_t num_results) {
  StatusOr<Literal> result = ctx.Call(*computation_, args_);
  if (!result.ok()) return result.status().WithContext("in " + inst_->DebugName());
  results_.clear();
  if (result->shape().IsTuple()) {
    results_ = std::move(result->mutable_elements());
  } else {
    results_.push_back(std::move(*result));
  }
  bool ok = static_cast<int64_t>(results_.size()) == num_results;
  for (const Literal& r : results_) ok = ok && r.shape().IsScalar();
  if (!ok)
    return InstError(*inst_, "computation " + computation_->name() + " must return " +
                                 (num_results == 1 ? std::string("a scalar")
                                                   : std::to_string(num_results) + " scalars"));
  return Status::Ok();
}

StatusOr<bool> ScalarCaller::RunPredicate(EvalContext& ctx) {
  KILN_RETURN_IF_ERROR(Run(ctx, 1));
  if (!IsPred(results_[0].element_type()))
    return InstError(*inst_, "computation " + computation_->name() + " must return pred[]");
  return results_[0].GetPred(0);
}

}  // namespace kiln::hlo
