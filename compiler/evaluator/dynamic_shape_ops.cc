// The reference evaluator's bounded dynamic shapes.
//
// Values carry their logical extents: a f32[<=10] value of size 7 is a
// 7-element literal, so nothing is padded and the evaluator stays an
// independent check of DynamicPadder's padding and masking.
// set-dimension-size cuts a value to its size, dynamic-reshape reshapes to
// the sizes its operands give, and an instruction whose shape is dynamic
// (or whose operands are smaller than their declared shapes) is evaluated
// at the extents its operands imply (LogicalShape).
#include <algorithm>

#include "compiler/evaluator/index_util.h"
#include "compiler/evaluator/op_evaluators.h"

namespace kiln::hlo {
namespace {

Status Fail(const HloInstruction& inst, const std::string& why) { return Error(inst.DebugName() + ": " + why); }

StatusOr<int64_t> SizeOperand(const HloInstruction& inst, const Literal& v) {
  if (!v.shape().IsScalar() || !IsInteger(v.element_type()))
    return Fail(inst, "a dynamic size must be an integer scalar");
  return v.GetS64(0);
}

bool ExtentsDiffer(const HloInstruction& inst, const Operands& operands) {
  for (size_t i = 0; i < operands.size() && i < static_cast<size_t>(inst.operand_count()); ++i) {
    const Shape& declared = inst.operand(i)->shape();
    if (declared.IsArray() && operands[i]->shape().IsArray() && operands[i]->shape().dims() != declared.dims())
      return true;
  }
  return false;
}

std::vector<int64_t> KeptDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& removed) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d)
    if (!Contains(removed, d)) kept.push_back(dims[d]);
  return kept;
}

StatusOr<std::vector<int64_t>> LogicalDims(const HloInstruction& inst, const Operands& operands) {
  const std::vector<int64_t> at = inst.GetInts("dimensions");
  switch (inst.opcode()) {
    case HloOpcode::kBroadcast: {
      std::vector<int64_t> dims = inst.shape().dims();
      for (size_t i = 0; i < at.size() && i < operands[0]->shape().dims().size(); ++i)
        dims.at(at[i]) = operands[0]->shape().dim(i);
      return dims;
    }
    case HloOpcode::kTranspose: {
      std::vector<int64_t> dims;
      for (int64_t p : at) dims.push_back(operands[0]->shape().dims().at(p));
      return dims;
    }
    case HloOpcode::kReduce: return KeptDims(operands[0]->shape().dims(), at);
    case HloOpcode::kDot: {
      const DotDimensionNumbers dn = inst.dot_dimension_numbers();
      const std::vector<int64_t>& l = operands[0]->shape().dims();
      const std::vector<int64_t>& r = operands[1]->shape().dims();
      std::vector<int64_t> dims;
      for (int64_t d : dn.lhs_batch) dims.push_back(l.at(d));
      std::vector<int64_t> lhs_out = dn.lhs_batch, rhs_out = dn.rhs_batch;
      lhs_out.insert(lhs_out.end(), dn.lhs_contracting.begin(), dn.lhs_contracting.end());
      rhs_out.insert(rhs_out.end(), dn.rhs_contracting.begin(), dn.rhs_contracting.end());
      for (int64_t d : KeptDims(l, lhs_out)) dims.push_back(d);
      for (int64_t d : KeptDims(r, rhs_out)) dims.push_back(d);
      return dims;
    }
    case HloOpcode::kSlice: {
      const auto* slice = inst.GetAttribute<std::vector<SliceDim>>("slice");
      const std::vector<int64_t>& in = operands[0]->shape().dims();
      if (!slice || slice->size() != in.size()) return Fail(inst, "slice needs one entry per dimension");
      std::vector<int64_t> dims;
      for (size_t d = 0; d < in.size(); ++d) {
        const SliceDim& s = (*slice)[d];
        const int64_t limit = std::min(s.limit, in[d]);
        dims.push_back(std::max<int64_t>(0, (limit - s.start + s.stride - 1) / std::max<int64_t>(s.stride, 1)));
      }
      return dims;
    }
    case HloOpcode::kReshape: {
      int64_t dynamic = -1, others = 1;
      std::vector<int64_t> dims = inst.shape().dims();
      for (int64_t d = 0; d < inst.shape().rank(); ++d) {
        if (!inst.shape().is_dynamic_dim(d)) {
          others *= dims[d];
        } else if (dynamic >= 0) {
          return Fail(inst, "a reshape to more than one dynamic dimension is ambiguous");
        } else {
          dynamic = d;
        }
      }
      if (dynamic >= 0) dims[dynamic] = others == 0 ? 0 : operands[0]->element_count() / others;
      return dims;
    }
    default: break;
  }
  if (IsElementwise(inst.opcode()) || inst.opcode() == HloOpcode::kMap ||
      inst.opcode() == HloOpcode::kBitcastConvert || inst.opcode() == HloOpcode::kCopy) {
    for (const Literal* op : operands)
      if (op->shape().rank() == inst.shape().rank()) return op->shape().dims();
    return inst.shape().dims();
  }
  return Fail(inst, "the reference evaluator does not support dynamic shapes on " +
                        std::string(OpcodeName(inst.opcode())));
}

}  // namespace

StatusOr<std::optional<Shape>> LogicalShape(const HloInstruction& inst, const Operands& operands) {
  switch (inst.opcode()) {
    case HloOpcode::kTuple: case HloOpcode::kGetTupleElement: case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize: case HloOpcode::kDynamicReshape: case HloOpcode::kParameter:
      return std::optional<Shape>();  // these read their operands' extents themselves
    default: break;
  }
  if (!inst.shape().is_dynamic() && !ExtentsDiffer(inst, operands)) return std::optional<Shape>();
  if (inst.shape().IsTuple()) {
    if (inst.opcode() != HloOpcode::kReduce)
      return Fail(inst, "the reference evaluator does not support dynamic tuple-shaped " +
                            std::string(OpcodeName(inst.opcode())));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, LogicalDims(inst, operands));
    std::vector<Shape> elements;
    for (const Shape& e : inst.shape().tuple_shapes()) elements.push_back(Shape(e.element_type(), dims));
    return std::optional<Shape>(Shape::Tuple(std::move(elements)));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, LogicalDims(inst, operands));
  return std::optional<Shape>(Shape(inst.shape().element_type(), std::move(dims)));
}

StatusOr<Literal> EvalSetDimensionSize(const HloInstruction& inst, const Operands& operands) {
  const std::vector<int64_t> at = inst.GetInts("dimensions");
  const Literal& in = *operands[0];
  if (operands.size() != 2 || at.size() != 1 || at[0] < 0 || at[0] >= in.shape().rank())
    return Fail(inst, "set-dimension-size needs an operand, a size and one dimension of the operand");
  KILN_ASSIGN_OR_RETURN(int64_t size, SizeOperand(inst, *operands[1]));
  if (size < 0 || size > in.shape().dim(at[0]))
    return Fail(inst, "size " + std::to_string(size) + " of dimension " + std::to_string(at[0]) +
                          " lies outside the operand's " + std::to_string(in.shape().dim(at[0])) + " elements");
  std::vector<int64_t> dims = in.shape().dims();
  dims[at[0]] = size;
  Literal out(Shape(in.element_type(), dims));
  const std::vector<int64_t> strides = RowMajorStrides(in.shape().dims());
  std::vector<int64_t> index(dims.size(), 0);
  int64_t linear = 0;
  if (out.element_count() > 0) {
    do {
      int64_t from = 0;
      for (size_t d = 0; d < dims.size(); ++d) from += index[d] * strides[d];
      out.CopyElementFrom(linear++, in, from);
    } while (NextIndex(dims, index));
  }
  return out;
}

StatusOr<Literal> EvalDynamicReshape(const HloInstruction& inst, const Operands& operands) {
  const Literal& in = *operands[0];
  if (static_cast<int64_t>(operands.size()) != 1 + inst.shape().rank())
    return Fail(inst, "dynamic-reshape needs one size operand per result dimension");
  std::vector<int64_t> dims;
  for (size_t i = 1; i < operands.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t size, SizeOperand(inst, *operands[i]));
    if (size < 0 || size > inst.shape().dim(i - 1))
      return Fail(inst, "size " + std::to_string(size) + " of result dimension " + std::to_string(i - 1) +
                            " lies outside its bound " + std::to_string(inst.shape().dim(i - 1)));
    dims.push_back(size);
  }
  Literal out(Shape(in.element_type(), dims));
  if (out.element_count() != in.element_count())
    return Fail(inst, "cannot reshape " + std::to_string(in.element_count()) + " elements to " +
                          std::to_string(out.element_count()));
  for (int64_t i = 0; i < out.element_count(); ++i) out.CopyElementFrom(i, in, i);
  return out;
}

}  // namespace kiln::hlo
