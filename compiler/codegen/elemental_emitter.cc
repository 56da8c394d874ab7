// ElementalEmitter and ConstantPool (see elemental_emitter.h).
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/codegen/in_place_emitter.h"
#include "compiler/passes/fusible_ops.h"

#include <algorithm>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::codegen::internal {

using hlo::HloInstruction;
using hlo::HloOpcode;
using mlir::Value;

mlir::MemRefType BufferType(mlir::MLIRContext* ctx, const Shape& shape) {
  return mlir::MemRefType::get(shape.dims(), StorageType(ctx, shape.element_type()));
}

mlir::memref::GlobalOp ConstantPool::Get(const HloInstruction& inst) {
    auto it = globals_.find(&inst);
    if (it != globals_.end()) return it->second;
    mlir::MLIRContext* ctx = module_.getContext();
    mlir::OpBuilder b(ctx);
    b.setInsertionPointToStart(module_.getBody());
    const Literal& lit = inst.literal();
    mlir::MemRefType type = BufferType(ctx, inst.shape());
    auto tensor = mlir::RankedTensorType::get(inst.shape().dims(), type.getElementType());
    // Literal storage is dense, row-major and little-endian, as
    // DenseElementsAttr's raw buffer (pred is one byte, stored as i8).
    auto data = mlir::DenseElementsAttr::getFromRawBuffer(
        tensor, llvm::ArrayRef<char>(reinterpret_cast<const char*>(lit.raw()), lit.raw_size()));
    // Not a C identifier a caller could give another kernel ("__" prefix).
    std::string name = "__kiln_const_" + prefix_ + "_" + std::to_string(globals_.size());
    auto global = mlir::memref::GlobalOp::create(
        b, b.getUnknownLoc(), b.getStringAttr(name), b.getStringAttr("private"),
        mlir::TypeAttr::get(type), data, b.getUnitAttr(), /*alignment=*/nullptr);
    globals_[&inst] = global;
    return global;
  }

StatusOr<std::vector<Value>> ElementalEmitter::EmitUncachedAll(const HloInstruction& inst,
                                                              const Index& index) {
  if (inst.opcode() == HloOpcode::kReduce) return EmitReduce(inst, index);
  if (inst.opcode() == HloOpcode::kReduceWindow) return EmitReduceWindow(inst, index);
  if (inst.opcode() == HloOpcode::kWhile) return EmitWhile(inst, index);
  if (inst.opcode() == HloOpcode::kFusion) return EmitNestedFusion(inst, index);
  if (!inst.shape().IsArray())
    return Error(inst.DebugName() + ": codegen needs array shapes, got " + inst.shape().ToString(false));
  KILN_ASSIGN_OR_RETURN(Value v, EmitUncached(inst, index));
  return std::vector<Value>{v};
}

StatusOr<Value> ElementalEmitter::EmitIf(Value cond, ElementType type, const ValueFn& then_fn,
                                         const ValueFn& else_fn) {
  auto wrap = [](const ValueFn& fn) -> ValuesFn {
    return [&fn]() -> StatusOr<std::vector<Value>> {
      KILN_ASSIGN_OR_RETURN(Value v, fn());
      return std::vector<Value>{v};
    };
  };
  KILN_ASSIGN_OR_RETURN(std::vector<Value> values, EmitIfAll(cond, {type}, wrap(then_fn), wrap(else_fn)));
  return values[0];
}

StatusOr<std::vector<Value>> ElementalEmitter::EmitIfAll(Value cond, const std::vector<ElementType>& types,
                                                         const ValuesFn& then_fn, const ValuesFn& else_fn) {
  std::vector<mlir::Type> results;
  for (ElementType t : types) results.push_back(ValueType(b_.getContext(), t));
  auto if_op = mlir::scf::IfOp::create(b_, loc_, mlir::TypeRange(results), cond, /*withElseRegion=*/true);
  mlir::OpBuilder::InsertionGuard guard(b_);
  for (auto [block, fn] : {std::pair{if_op.thenBlock(), &then_fn}, std::pair{if_op.elseBlock(), &else_fn}}) {
    ScopeGuard scope(*this);
    b_.setInsertionPointToStart(block);
    KILN_ASSIGN_OR_RETURN(std::vector<Value> v, (*fn)());
    mlir::scf::YieldOp::create(b_, loc_, mlir::ValueRange(v));
  }
  return std::vector<Value>(if_op.getResults().begin(), if_op.getResults().end());
}

StatusOr<std::vector<Value>> ElementalEmitter::EmitLoopNest(const std::vector<int64_t>& sizes,
                                                            std::vector<Value> carried, const LoopBody& body) {
  Index k(sizes.size());
  return EmitLoopNestLevel(sizes, 0, k, std::move(carried), body);
}

StatusOr<std::vector<Value>> ElementalEmitter::EmitLoopNestLevel(const std::vector<int64_t>& sizes, size_t level,
                                                                 Index& k, std::vector<Value> carried,
                                                                 const LoopBody& body) {
  if (level == sizes.size()) return body(k, carried);
  auto loop = mlir::scf::ForOp::create(b_, loc_, Const(0), Const(sizes[level]), Const(1), carried);
  mlir::OpBuilder::InsertionGuard guard(b_);
  ScopeGuard scope(*this);
  b_.setInsertionPointToStart(loop.getBody());
  k[level] = loop.getInductionVar();
  std::vector<Value> args(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
  KILN_ASSIGN_OR_RETURN(std::vector<Value> next, EmitLoopNestLevel(sizes, level + 1, k, args, body));
  // A loop carrying nothing was built with its terminator.
  if (!carried.empty()) mlir::scf::YieldOp::create(b_, loc_, next);
  return std::vector<Value>(loop.getResults().begin(), loop.getResults().end());
}

StatusOr<Value> ElementalEmitter::EmitUncached(const HloInstruction& inst, const Index& index) {
  auto operand = [&](int64_t i, const Index& idx) { return Emit(inst.operand(i), idx); };
  ElementType t = inst.shape().element_type();
  switch (inst.opcode()) {
    case HloOpcode::kParameter:
      return EmitParameter(inst, index);
    case HloOpcode::kConstant:
      return EmitConstant(inst, index);
    case HloOpcode::kIota: {
      int64_t dim = inst.GetInt("iota_dimension", 0);
      if (dim < 0 || dim >= inst.shape().rank())
        return Error(inst.DebugName() + ": iota_dimension out of range");
      Value i = mlir::arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), index[dim]);
      return ops_.Convert(inst, i, ElementType::kS64, t);
    }
    case HloOpcode::kCopy:
      return operand(0, index);
    case HloOpcode::kBroadcast: {
      std::vector<int64_t> dims = inst.dimensions();
      Index idx;
      for (int64_t d : dims) idx.push_back(index[d]);
      return operand(0, idx);
    }
    case HloOpcode::kReshape:
      return EmitReshape(inst, index);
    case HloOpcode::kTranspose: {
      std::vector<int64_t> perm = inst.dimensions();
      Index idx(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) idx[perm[i]] = index[i];
      return operand(0, idx);
    }
    case HloOpcode::kSlice: {
      const auto* slice = inst.GetAttribute<std::vector<hlo::SliceDim>>("slice");
      if (!slice || static_cast<int64_t>(slice->size()) != inst.shape().rank())
        return Error(inst.DebugName() + ": slice needs one slice={...} entry per dimension");
      Index idx;
      for (size_t d = 0; d < slice->size(); ++d)
        idx.push_back(Add(Const((*slice)[d].start), Mul(index[d], Const((*slice)[d].stride))));
      return operand(0, idx);
    }
    case HloOpcode::kReverse: {
      Index idx = index;
      for (int64_t d : inst.dimensions())
        idx[d] = mlir::arith::SubIOp::create(b_, loc_, Const(inst.shape().dim(d) - 1), index[d]);
      return operand(0, idx);
    }
    case HloOpcode::kConcatenate:
      return EmitConcatenate(inst, index, 0, inst.operand_count());
    case HloOpcode::kConvert: {
      KILN_ASSIGN_OR_RETURN(Value v, operand(0, index));
      return ops_.Convert(inst, v, inst.operand(0)->shape().element_type(), t);
    }
    case HloOpcode::kBitcastConvert:
      return EmitBitcastConvert(inst, index);
    case HloOpcode::kCompare: {
      KILN_ASSIGN_OR_RETURN(Value a, operand(0, index));
      KILN_ASSIGN_OR_RETURN(Value c, operand(1, index));
      return ops_.Compare(inst, a, c);
    }
    case HloOpcode::kSelect: {
      Index pred_index = inst.operand(0)->shape().IsScalar() ? Index{} : index;
      KILN_ASSIGN_OR_RETURN(Value p, operand(0, pred_index));
      KILN_ASSIGN_OR_RETURN(Value x, operand(1, index));
      KILN_ASSIGN_OR_RETURN(Value y, operand(2, index));
      return ops_.Select(p, x, y);
    }
    case HloOpcode::kClamp: {
      Index lo_index = inst.operand(0)->shape().IsScalar() ? Index{} : index;
      Index hi_index = inst.operand(2)->shape().IsScalar() ? Index{} : index;
      KILN_ASSIGN_OR_RETURN(Value lo, operand(0, lo_index));
      KILN_ASSIGN_OR_RETURN(Value x, operand(1, index));
      KILN_ASSIGN_OR_RETURN(Value hi, operand(2, hi_index));
      return ops_.Clamp(t, lo, x, hi);
    }
    case HloOpcode::kGetTupleElement: {
      const HloInstruction* tuple = inst.operand(0);
      if (parameter_fn_ && tuple->opcode() == HloOpcode::kParameter)
        return parameter_fn_(tuple->parameter_number(), inst.tuple_index(), index);
      if (tuple->opcode() == HloOpcode::kWhile) return EmitLoopResult(*tuple, inst.tuple_index(), index);
      if (tuple->opcode() == HloOpcode::kTuple) {
        if (inst.tuple_index() < 0 || inst.tuple_index() >= tuple->operand_count())
          return Error(inst.DebugName() + ": tuple index out of range");
        return Emit(tuple->operand(inst.tuple_index()), index);
      }
      KILN_ASSIGN_OR_RETURN(std::vector<Value> values, EmitAll(tuple, index));
      int64_t i = inst.tuple_index();
      if (i < 0 || i >= static_cast<int64_t>(values.size()) || !values[i])
        return Error(inst.DebugName() + ": tuple index out of range");
      return values[i];
    }
    case HloOpcode::kPad:
      return EmitPad(inst, index);
    case HloOpcode::kDynamicSlice:
      return EmitDynamicSlice(inst, index);
    case HloOpcode::kDynamicUpdateSlice:
      return EmitDynamicUpdateSlice(inst, index);
    case HloOpcode::kGather:
      return EmitGather(inst, index);
    case HloOpcode::kConvolution:
      return EmitConvolution(inst, index);
    case HloOpcode::kSelectAndScatter:
      return EmitSelectAndScatter(inst, index);
    case HloOpcode::kScatter:
      return EmitScatterElement(b_, loc_, *this, inst, index);
    default:
      break;
  }
  if (hlo::IsElementwiseUnary(inst.opcode()) && inst.operand_count() == 1) {
    KILN_ASSIGN_OR_RETURN(Value x, operand(0, index));
    return ops_.Unary(inst, x);
  }
  if (hlo::IsElementwiseBinary(inst.opcode()) && inst.operand_count() == 2) {
    KILN_ASSIGN_OR_RETURN(Value a, operand(0, index));
    KILN_ASSIGN_OR_RETURN(Value c, operand(1, index));
    return ops_.Binary(inst, a, c);
  }
  return Error(inst.DebugName() + ": codegen does not support " +
               std::string(hlo::OpcodeName(inst.opcode())) + " in loop kernels");
}

// bitcast-convert. One width: the bits reinterpreted. Narrow to wide (the
// operand has a minor dimension of ratio elements): element j of that
// dimension supplies bits [j*w, (j+1)*w) of the result (little-endian, as
// XLA lays the array out). Wide to narrow: result element j of the new
// minor dimension is those bits of the operand element.
StatusOr<Value> ElementalEmitter::EmitBitcastConvert(const HloInstruction& inst, const Index& index) {
  ElementType from = inst.operand(0)->shape().element_type(), to = inst.shape().element_type();
  int from_bits = BitWidth(from), to_bits = BitWidth(to);
  if (from_bits == to_bits) {
    KILN_ASSIGN_OR_RETURN(Value v, Emit(inst.operand(0), index));
    return ops_.BitcastConvert(inst, v);
  }
  mlir::MLIRContext* ctx = b_.getContext();
  auto bits_of = [&](Value v, int bits) -> Value {
    mlir::Type int_type = mlir::IntegerType::get(ctx, bits);
    return v.getType() == int_type ? v : Value(mlir::arith::BitcastOp::create(b_, loc_, int_type, v));
  };
  auto as_type = [&](Value bits, ElementType t) -> Value {
    mlir::Type type = ValueType(ctx, t);
    return bits.getType() == type ? bits : Value(mlir::arith::BitcastOp::create(b_, loc_, type, bits));
  };
  mlir::Type wide_int = mlir::IntegerType::get(ctx, std::max(from_bits, to_bits));
  if (from_bits < to_bits) {
    Value acc = mlir::arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(wide_int, 0));
    for (int j = 0; j < to_bits / from_bits; ++j) {
      Index part = index;
      part.push_back(Const(j));
      KILN_ASSIGN_OR_RETURN(Value v, Emit(inst.operand(0), part));
      Value wide = mlir::arith::ExtUIOp::create(b_, loc_, wide_int, bits_of(v, from_bits));
      Value shift = mlir::arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(wide_int, j * from_bits));
      acc = mlir::arith::OrIOp::create(b_, loc_, acc, mlir::arith::ShLIOp::create(b_, loc_, wide, shift));
    }
    return as_type(acc, to);
  }
  Index whole(index.begin(), index.end() - 1);
  KILN_ASSIGN_OR_RETURN(Value v, Emit(inst.operand(0), whole));
  Value j = mlir::arith::IndexCastUIOp::create(b_, loc_, wide_int, index.back());
  Value shift = mlir::arith::MulIOp::create(b_, loc_, j,
                                            mlir::arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(wide_int, to_bits)));
  Value part = mlir::arith::ShRUIOp::create(b_, loc_, bits_of(v, from_bits), shift);
  return as_type(mlir::arith::TruncIOp::create(b_, loc_, mlir::IntegerType::get(ctx, to_bits), part), to);
}

StatusOr<Value> ElementalEmitter::EmitParameter(const HloInstruction& inst, const Index& index) {
  int64_t n = inst.parameter_number();
  if (parameter_fn_) return parameter_fn_(n, -1, index);
  if (n < 0 || n >= static_cast<int64_t>(params_.size()))
    return Error(inst.DebugName() + ": parameter number out of range");
  if (scalar_params_) return params_[n];
  Value stored = mlir::memref::LoadOp::create(b_, loc_, params_[n], index);
  return ops_.FromStorage(stored, inst.shape().element_type());
}

StatusOr<Value> ElementalEmitter::EmitConstant(const HloInstruction& inst, const Index& index) {
  if (!inst.has_literal()) return Error(inst.DebugName() + ": constant has no value");
  if (inst.shape().ElementCount() == 1) return ops_.Constant(inst.literal(), 0);
  mlir::memref::GlobalOp global = pool_.Get(inst);
  Value buffer = mlir::memref::GetGlobalOp::create(b_, loc_, global.getType(), global.getSymName());
  Value stored = mlir::memref::LoadOp::create(b_, loc_, buffer, index);
  return ops_.FromStorage(stored, inst.shape().element_type());
}

// Row-major linear position in the result, re-split by the operand's dims,
// one group of dimensions at a time: the non-unit dimensions fall, from the
// minor end, into the smallest groups whose sizes multiply to the same
// product on both sides, and only a group that really splits or merges
// dimensions divides. A dimension kept whole (the common case: a reshape
// that adds or drops unit dimensions, or merges the major ones) passes its
// index through, so a vectorized loop's consecutive elements keep
// consecutive addresses instead of each dividing its own linear position.
StatusOr<Value> ElementalEmitter::EmitReshape(const HloInstruction& inst, const Index& index) {
  const Shape& in = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  if (in.dims() == out.dims()) return Emit(inst.operand(0), index);
  auto whole = [&]() {
    Value linear = Const(0);
    for (int64_t d = 0; d < out.rank(); ++d) linear = Add(Mul(linear, Const(out.dim(d))), index[d]);
    return Emit(inst.operand(0), ops_.Delinearize(linear, in.dims()));
  };
  if (in.ElementCount() == 0) return whole();
  Index in_index(in.rank());
  std::vector<int64_t> ins, outs;  // non-unit dimensions, major to minor
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (in.dim(d) == 1) in_index[d] = Const(0);
    else ins.push_back(d);
  }
  for (int64_t d = 0; d < out.rank(); ++d)
    if (out.dim(d) != 1) outs.push_back(d);
  size_t i = ins.size(), o = outs.size();
  while (i > 0 && o > 0) {
    const size_t i_end = i, o_end = o;
    int64_t in_product = in.dim(ins[--i]), out_product = out.dim(outs[--o]);
    while (in_product != out_product) {
      if (in_product < out_product) {
        if (i == 0) return whole();
        in_product *= in.dim(ins[--i]);
      } else {
        if (o == 0) return whole();
        out_product *= out.dim(outs[--o]);
      }
    }
    Value linear = index[outs[o]];
    for (size_t k = o + 1; k < o_end; ++k) linear = Add(Mul(linear, Const(out.dim(outs[k]))), index[outs[k]]);
    if (i_end - i == 1) {
      in_index[ins[i]] = linear;
      continue;
    }
    std::vector<int64_t> group_dims;
    for (size_t k = i; k < i_end; ++k) group_dims.push_back(in.dim(ins[k]));
    std::vector<Value> parts = ops_.Delinearize(linear, group_dims);
    for (size_t k = i; k < i_end; ++k) in_index[ins[k]] = parts[k - i];
  }
  if (i != 0 || o != 0) return whole();
  return Emit(inst.operand(0), in_index);
}

// Operands [lo, hi) cover positions [start(lo), start(hi)) of the
// concatenated dimension, found by binary search, each half in its own
// scf.if: an element takes log2(operands) compares, not one per operand
// before its own (a 64-way concatenate of slices would otherwise spend
// most of its instructions in the compare chain).
StatusOr<Value> ElementalEmitter::EmitConcatenate(const HloInstruction& inst, const Index& index, int64_t lo,
                                                  int64_t hi) {
  std::vector<int64_t> dims = inst.dimensions();
  if (dims.size() != 1) return Error(inst.DebugName() + ": concatenate needs dimensions={d}");
  if (lo >= hi) return Error(inst.DebugName() + ": concatenate needs operands");
  int64_t d = dims[0];
  auto start = [&](int64_t k) {
    int64_t offset = 0;
    for (int64_t i = 0; i < k; ++i) offset += inst.operand(i)->shape().dim(d);
    return offset;
  };
  if (hi - lo == 1) {
    Index idx = index;
    idx[d] = mlir::arith::SubIOp::create(b_, loc_, index[d], Const(start(lo)));
    return Emit(inst.operand(lo), idx);
  }
  int64_t mid = lo + (hi - lo) / 2;
  Value below = mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ult, index[d],
                                            Const(start(mid)));
  return EmitIf(below, inst.shape().element_type(), [&] { return EmitConcatenate(inst, index, lo, mid); },
                [&] { return EmitConcatenate(inst, index, mid, hi); });
}


namespace {

// Marks the float ops emitted into `block` after `before` (a single-result
// reduce's combiner) reassociable. HLO leaves the order of a reduction
// unspecified, as XLA's backends use it; the flag lets LLVM's loop
// vectorizer split the accumulator into vector lanes and interleaved
// partial sums instead of one serial chain of dependent adds.
void AllowReassociation(mlir::Block* block, mlir::Operation* before) {
  auto it = before ? std::next(before->getIterator()) : block->begin();
  for (; it != block->end(); ++it) {
    it->walk([](mlir::arith::ArithFastMathInterface op) {
      mlir::arith::FastMathFlagsAttr flags = op.getFastMathFlagsAttr();
      auto value = (flags ? flags.getValue() : mlir::arith::FastMathFlags::none) |
                   mlir::arith::FastMathFlags::reassoc;
      op->setAttr(op.getFastMathAttrName(), mlir::arith::FastMathFlagsAttr::get(op->getContext(), value));
    });
  }
}

}  // namespace

// reduce(operands..., inits...) with a scalar to_apply: for one result
// element, folds the operands' elements over the reduced dimensions in
// row-major order, starting from the inits. A variadic reduce (N operands,
// tuple result) carries N accumulators and yields N values.
StatusOr<std::vector<Value>> ElementalEmitter::EmitReduce(const HloInstruction& inst, const Index& index) {
  int64_t n = inst.operand_count() / 2;
  if (n < 1 || inst.operand_count() != 2 * n)
    return Error(inst.DebugName() + ": reduce takes N operands and N init values");
  if (inst.shape().IsTuple() ? inst.shape().tuple_size() != n : n != 1)
    return Error(inst.DebugName() + ": reduce needs one result per operand");
  if (!inst.to_apply()) return Error(inst.DebugName() + ": reduce needs to_apply");
  std::vector<int64_t> reduced = inst.dimensions();
  std::sort(reduced.begin(), reduced.end());
  const Shape& in = inst.operand(0)->shape();
  // Kept dimensions take the result index in order.
  Index operand_index(in.rank());
  size_t next = 0;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (std::binary_search(reduced.begin(), reduced.end(), d)) continue;
    if (next >= index.size()) return Error(inst.DebugName() + ": reduce result rank mismatch");
    operand_index[d] = index[next++];
  }
  std::vector<Value> init;
  for (int64_t i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(Value v, Emit(inst.operand(n + i), Index{}));
    init.push_back(v);
  }
  // A sum of f16/bf16 accumulates in f32 and is rounded once, as XLA's CPU
  // and GPU backends do after float normalization (and as the evaluator
  // does): rounding after every step loses bits on long reductions. A max
  // or min does too: it is exact either way (its result is one of the
  // elements), and an f32 accumulator spares every step a rounding, which
  // on the host is a chain of integer ops that serializes the loop.
  ElementType t = inst.operand(0)->shape().element_type();
  WidenedCombine widened = WidenedCombine::kNone;
  if (n == 1 && (t == ElementType::kF16 || t == ElementType::kBF16)) {
    if (passes::IsScalarAdd(*inst.to_apply())) widened = WidenedCombine::kAdd;
    if (passes::IsScalarBinary(*inst.to_apply(), HloOpcode::kMaximum)) widened = WidenedCombine::kMax;
    if (passes::IsScalarBinary(*inst.to_apply(), HloOpcode::kMinimum)) widened = WidenedCombine::kMin;
  }
  if (widened == WidenedCombine::kNone) return EmitReduceLoops(inst, reduced, 0, operand_index, init, widened);
  KILN_ASSIGN_OR_RETURN(std::vector<Value> folded,
                        EmitReduceLoops(inst, reduced, 0, operand_index, {ops_.Widen(init[0])}, widened));
  return std::vector<Value>{ops_.Narrow(folded[0], t)};
}

StatusOr<std::vector<Value>> ElementalEmitter::EmitReduceLoops(const HloInstruction& inst,
                                                               const std::vector<int64_t>& reduced,
                                                               size_t level, Index& operand_index,
                                                               std::vector<Value> acc,
                                                               WidenedCombine widened) {
  if (level == reduced.size() && widened == WidenedCombine::kAdd) {
    KILN_ASSIGN_OR_RETURN(Value element, Emit(inst.operand(0), operand_index));
    return std::vector<Value>{mlir::arith::AddFOp::create(b_, loc_, acc[0], ops_.Widen(element),
                                                          mlir::arith::FastMathFlags::reassoc)};
  }
  if (level == reduced.size() && widened != WidenedCombine::kNone) {
    KILN_ASSIGN_OR_RETURN(Value element, Emit(inst.operand(0), operand_index));
    Value wide = ops_.Widen(element);
    mlir::Block* block = b_.getInsertionBlock();
    mlir::Operation* before = block->empty() ? nullptr : &block->back();
    Value combined = ops_.FloatMax(acc[0], wide, widened == WidenedCombine::kMax);
    AllowReassociation(block, before);
    return std::vector<Value>{combined};
  }
  if (level == reduced.size()) {
    std::vector<Value> args = acc;
    for (size_t i = 0; i < acc.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(Value element, Emit(inst.operand(i), operand_index));
      args.push_back(element);
    }
    mlir::Block* block = b_.getInsertionBlock();
    mlir::Operation* before = block->empty() ? nullptr : &block->back();
    KILN_ASSIGN_OR_RETURN(std::vector<Value> combined, ApplyScalar(*inst.to_apply(), args));
    if (acc.size() == 1) AllowReassociation(block, before);
    return combined;
  }
  int64_t d = reduced[level];
  auto loop = mlir::scf::ForOp::create(b_, loc_, Const(0), Const(inst.operand(0)->shape().dim(d)),
                                       Const(1), acc);
  mlir::OpBuilder::InsertionGuard guard(b_);
  ScopeGuard scope(*this);
  b_.setInsertionPointToStart(loop.getBody());
  operand_index[d] = loop.getInductionVar();
  std::vector<Value> iter(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
  KILN_ASSIGN_OR_RETURN(std::vector<Value> next, EmitReduceLoops(inst, reduced, level + 1, operand_index, iter, widened));
  mlir::scf::YieldOp::create(b_, loc_, next);
  return std::vector<Value>(loop.getResults().begin(), loop.getResults().end());
}

namespace {

// The scalars `fn` returns: the operands of a tuple root, else the root.
std::vector<const HloInstruction*> ScalarResults(const hlo::HloComputation& fn) {
  if (fn.root()->opcode() != HloOpcode::kTuple) return {fn.root()};
  return std::vector<const HloInstruction*>(fn.root()->operands().begin(), fn.root()->operands().end());
}

}  // namespace

StatusOr<std::vector<Value>> ElementalEmitter::ApplyScalar(const hlo::HloComputation& fn,
                                                           const std::vector<Value>& args) {
  if (fn.parameter_count() != static_cast<int64_t>(args.size()) || !fn.root())
    return Error("computation " + fn.name() + " must take " + std::to_string(args.size()) + " scalars");
  std::vector<const HloInstruction*> results = ScalarResults(fn);
  if (2 * results.size() != args.size())
    return Error("computation " + fn.name() + " must return " + std::to_string(args.size() / 2) + " values");
  ElementalEmitter scalar(b_, loc_, pool_, args, /*scalar_params=*/true);
  std::vector<Value> values;
  for (const HloInstruction* r : results) {
    KILN_ASSIGN_OR_RETURN(Value v, scalar.Emit(r, Index{}));
    values.push_back(v);
  }
  return values;
}

StatusOr<Value> ElementalEmitter::ApplyScalarResult(const hlo::HloComputation& fn, const std::vector<Value>& args,
                                                    int64_t i) {
  if (fn.parameter_count() != static_cast<int64_t>(args.size()) || !fn.root())
    return Error("computation " + fn.name() + " must take " + std::to_string(args.size()) + " scalars");
  std::vector<const HloInstruction*> results = ScalarResults(fn);
  if (2 * results.size() != args.size() || i < 0 || i >= static_cast<int64_t>(results.size()))
    return Error("computation " + fn.name() + " must return " + std::to_string(args.size() / 2) + " values");
  ElementalEmitter scalar(b_, loc_, pool_, args, /*scalar_params=*/true);
  return scalar.Emit(results[i], Index{});
}

}  // namespace kiln::codegen::internal
